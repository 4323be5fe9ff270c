# Deux commandes suffisent : `make lab` (ouvrir le cours) et `make test` (tout vérifier).
# Both create .venv with the Python found on PATH (3.11+) and install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
PYTEST := $(BIN)/pytest
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: lab test test-fast test-browser test-hub lint bench system-deps setup setup-test notebooks clean

$(VENV)/.stamp-runtime: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11+ requis" if sys.version_info < (3, 11) else 0)'
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -e .
	$(PY) -m course.save_hook
	touch $@

$(VENV)/.stamp-test: pyproject.toml $(VENV)/.stamp-runtime
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.stamp-runtime
setup-test: $(VENV)/.stamp-test

## make lab: installe le cours et ouvre JupyterLab sur notebooks/ (LAB_ARGS="--port=9999" etc.),
## à la page de départ, avec la vue de l'élève (course/jupyter-config/eleve : sans les outils
## d'enseignant de nbgrader, comme sur le hub)
LAB_ARGS ?=
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: setup
	JUPYTER_CONFIG_PATH="$(abspath course/jupyter-config/eleve)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))" \
	  $(BIN)/jupyter lab --ServerApp.root_dir=notebooks $(ROOT_FLAG) \
	  $(if $(wildcard notebooks/lecons/00_commencer_ici.ipynb),--LabApp.default_url=/lab/tree/lecons/00_commencer_ici.ipynb) \
	  $(LAB_ARGS)

## system-deps: Debian's chromium and npm's configurable-http-proxy, for the browser and hub tests
system-deps:
	bash .ci/system-deps

## make test: installe tout et lance tous les tests (c'est ce que lance la CI)
test: lint system-deps
	$(PYTEST) -q -ra tests

test-fast: setup-test
	$(PYTEST) -q -ra tests -m "not browser and not hub and not slow"

test-browser: setup-test system-deps
	$(PYTEST) -q -ra tests -m browser

test-hub: setup-test system-deps
	$(PYTEST) -q -ra tests -m hub

lint: setup-test
	$(BIN)/ruff check course tests grader
	$(BIN)/ruff format --check course tests grader

## make bench: service de session du cours contre google-adk 2.10, ratios mesurés dans un seul run
bench: setup-test
	$(PY) tests/bench/bench_sessions.py

clean:
	rm -rf $(VENV) .artefacts build

-include grader/grader.mk
