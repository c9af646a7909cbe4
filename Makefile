# bioanon: two commands on a fresh machine.
#   make demo   virtual environment + install + the main job on the built-in synthetic dataset
#   make test   install the test extras + ruff + the whole test suite
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS := test,face,voice,deep,scale
# voice: the CPU build of torch cached on these machines first (a bare 'torch' pulls a CUDA
# build of several GB), and resemblyzer without its stale dependency pins
TORCH  := torch==2.13.0

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed-core: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	-$(BIN)/python -m pip install -q "$(TORCH)"
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	$(BIN)/python -m pip install -q --no-deps "resemblyzer>=0.1.3"
	touch $@ $(VENV)/.installed-core

demo: $(VENV)/.installed-core
	$(BIN)/bioanon demo --out demo-report

test: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks
	BIOANON_DATA=$${BIOANON_DATA:-$(abspath ../shared/datasets)} $(BIN)/python -m pytest

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks

bench: $(VENV)/.installed-core
	$(BIN)/python benchmarks/bench_transform.py

clean:
	rm -rf $(VENV) demo-report .pytest_cache .ruff_cache
