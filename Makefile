# bioanon: two commands on a fresh machine.
#   make demo   virtual environment + install + the main job on the built-in synthetic dataset
#   make test   install the test extras + ruff + mypy + the whole test suite
#   make docs   regenerate docs/methods.md from `bioanon methods --json` (a test fails when stale)
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := test,face,voice,deep,scale,dp
# voice: the CPU build of torch cached on these machines first (a bare 'torch' pulls a CUDA
# build of several GB), and resemblyzer without its stale dependency pins
TORCH  := torch==2.13.0
# pytest rewrites each test module's asserts before it runs it, and caches the result unless
# PYTHONDONTWRITEBYTECODE is set (as on these machines): every worker then rewrote the whole
# suite (about 13 s of the 25 s each spent collecting). The test target caches it once, beside
# mypy; the workers read the cache (it lies in tests/__pycache__, which git ignores).
# the suite runs in one pytest-xdist worker per core; each worker's BLAS and OpenMP are held
# to one thread, so the workers share the cores instead of oversubscribing them
TEST_JOBS ?= auto
ONE_THREAD := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

.PHONY: demo test lint bench docs clean

# each step says what it does; pip shows one line per package it collects and installs
# (no -q: a silent install of a minute looks like a hang). pip byte-compiles what it installs
# on one core, which took half of the install (torch 27 of 43 s, the extras 58 of 115 s);
# --no-compile leaves that to COMPILE, which compiles the environment on every core once
# the installs are done, all but the packages' own test folders, which nothing here imports
# (a quarter of the files; a module left out still compiles when imported). pip, like
# COMPILE, skips a file that does not compile, such as torch's test helpers written in
# Python 3.12 syntax: -qq and the leading - of its line.
PIP    := $(BIN)/python -m pip install --disable-pip-version-check --no-compile
COMPILE = $(BIN)/python -m compileall -qq -j 0 -x 'site-packages/.*/tests?/' $(VENV)/lib
STEP   = @echo "==> [$$(date +%H:%M:%S)]"

$(BIN)/python:
	$(STEP) "creating the virtual environment $(VENV) with $(PYTHON)"
	$(PYTHON) -m venv $(VENV)
	$(STEP) "upgrading pip"
	$(PIP) --upgrade pip

$(VENV)/.installed-core: pyproject.toml | $(BIN)/python
	$(STEP) "installing bioanon and its core dependencies (numpy, scikit-learn, pandas, ...)"
	$(PIP) -e .
	$(STEP) "compiling the environment's Python files (on every core)"
	-$(COMPILE)
	touch $@
	$(STEP) "installed bioanon (core)"

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(STEP) "installing torch ($(TORCH), CPU build; a large download the first time)"
	-$(PIP) "$(TORCH)"
	$(STEP) "installing bioanon with the extras $(EXTRAS)"
	$(PIP) -e ".[$(EXTRAS)]"
	$(STEP) "installing resemblyzer (without its stale pins)"
	$(PIP) --no-deps "resemblyzer>=0.1.3"
	$(STEP) "compiling the environment's Python files (on every core)"
	-$(COMPILE)
	touch $@ $(VENV)/.installed-core
	$(STEP) "installed bioanon with the test extras"

demo: $(VENV)/.installed-core
	$(STEP) "running the demo on the synthetic dataset (a few minutes)"
	$(BIN)/bioanon demo --out demo-report
	$(STEP) "bioanon is installed in $(VENV), not on your PATH: run 'source $(VENV)/bin/activate' to type bioanon, or call $(BIN)/bioanon"

test: $(VENV)/.installed-test
	$(STEP) "ruff"
	$(BIN)/ruff check src tests benchmarks docs
	$(STEP) "mypy; beside it, on the core mypy leaves idle, pytest rewrites the suite's asserts once"
	$(BIN)/mypy & mypy=$$!; \
	  PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest --collect-only -q -p no:cacheprovider \
	    >/dev/null 2>&1; \
	  wait $$mypy
	$(STEP) "the test suite ($(TEST_JOBS) pytest-xdist workers, one thread each)"
	BIOANON_DATA=$${BIOANON_DATA:-$(abspath ../shared/datasets)} $(ONE_THREAD) \
	  $(BIN)/python -m pytest -n $(TEST_JOBS)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks docs

docs: $(VENV)/.installed-core
	$(BIN)/python docs/gen_methods.py

bench: $(VENV)/.installed-core
	$(BIN)/python benchmarks/bench_transform.py

clean:
	rm -rf $(VENV) demo-report .pytest_cache .ruff_cache
