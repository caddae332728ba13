# The course's two commands (see README.md):
#   make lab    install everything into .venv and open the course in JupyterLab at notebook 00
#   make test   install everything into .venv and run every test
# Both are safe to re-run: the install step only runs again when requirements change.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 8888
PIP_EXTRA ?=

.PHONY: lab test execute benchmark

# --no-compile: pip does not byte-compile all of torch up front (half the install time);
# Python compiles each module the first time it is imported.
$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile --disable-pip-version-check $(PIP_EXTRA) -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-compile --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

lab: $(STAMP)
	$(BIN)/jupyter lab --port=$(PORT) $(if $(filter 0,$(shell id -u)),--allow-root) notebooks/00_start_here.ipynb

test: $(STAMP)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \
	$(BIN)/python -m pytest -n 2 --nbval -p no:cacheprovider

execute: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py $(NOTEBOOKS)

benchmark: $(STAMP)
	$(BIN)/python benchmarks/run.py
