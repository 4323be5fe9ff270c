# Le cours « La mémoire d'un tuteur IA » : `make lab` installe le cours dans .venv et ouvre
# JupyterLab sur notebooks/. Il faut Python 3.11 ou plus récent.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
export PIP_DISABLE_PIP_VERSION_CHECK := 1
export UV_COMPILE_BYTECODE := 1
# $(call q,WORD): WORD as one shell word, in single quotes (each ' written '\''), so that the shell
# runs nothing it holds: the folder's absolute path may hold a space, a ", a ' or a $( (which the
# shell runs inside "…"). The course's own Makefile defines the same function; this file is
# shipped alone in the learners' zip (without the course's Makefile), so it keeps its own copy.
q = '$(subst ','\'',$(1))'

.PHONY: lab setup help recommencer

## make help : ces commandes et ce qu'elles font
help:
	@awk '/^## / { line = substr($$0, 4); \
	    if (!block) { sub(/^make /, "", line); printf "\nmake %s\n", line } \
	    else print "    " line; block = 1; next } { block = 0 }' $(foreach f,$(MAKEFILE_LIST),$(call q,$(f)))

INSTALLER ?= uv
ifndef UV
# .venv's uv by its relative path (every recipe using it runs here): the folder's absolute path
# may hold a " (a shell syntax error inside "…") or a $( (run by the shell)
UV := $(or $(shell command -v uv 2>/dev/null),$(BIN)/uv)
endif
GET_UV = $(call q,$(PY)) -m pip install -q --no-deps --require-hashes -r requirements/uv.txt
define install
@if [ $(call q,$(INSTALLER)) = uv ] && ! [ -x $(call q,$(UV)) ]; then \
  $(GET_UV) || echo "uv indisponible : installation avec pip (plus lente)"; fi
@if [ $(call q,$(INSTALLER)) = uv ] && [ -x $(call q,$(UV)) ]; then \
  echo "uv pip install $(1)"; $(call q,$(UV)) pip install -q --python $(call q,$(PY)) $(1); \
else echo "pip install $(1)"; $(call q,$(PY)) -m pip install -q $(1); fi \
|| { echo "$(INSTALL_FAILED)" >&2; exit 1; }
endef
# what a failed install says after pip's or uv's English (no network is the usual cause)
INSTALL_FAILED := ✘ Installation impossible (le message de pip ou de uv est juste au-dessus). La \
première installation télécharge les paquets depuis PyPI : il faut le réseau, ou un proxy \
(HTTPS_PROXY, PIP_INDEX_URL). Relancez une fois connecté ; ensuite, le cours marche sans réseau.

# `make setup PYTHON=python3.13` (on the command line: an exported PYTHON is another tool's) over
# a venv of another Python, or of one uninstalled since, makes it again; a VENV= that holds more
# than a venv (a learner's notebooks beside it) is refused, never emptied
VERSION_OF = $(shell $(call q,$(1)) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
ifeq ($(origin PYTHON),command line)
ifneq ($(shell test -e $(call q,$(VENV))/.stamp-venv && echo venv),)
ifneq ($(call VERSION_OF,$(PY)),$(call VERSION_OF,$(PYTHON)))
REMAKE_VENV := .remake-venv
endif
endif
endif
.remake-venv:  # no file of that name: always out of date (FORCE)
# what a venv and the set-ups write in it: anything else is the learner's
VENV_PARTS := bin|lib|lib64|include|share|etc|pyvenv\.cfg|\.stamp-.*|\.gitignore|\.lock|CACHEDIR\.TAG
define REMAKE
@other=$$(ls -A $(call q,$(VENV)) | grep -vxE '$(VENV_PARTS)' | head -3 | tr '\n' ' '); \
if [ -n "$$other" ]; then echo ✘ $(call q,$(VENV))" n'est pas en Python $(call VERSION_OF,$(PYTHON)) \
et contient d'autres fichiers qu'un environnement ($$other) : rien n'est effacé. Donnez un \
autre VENV=, ou déplacez vos fichiers, puis relancez"; exit 1; fi; \
echo $(call q,$(VENV))" n'est pas en Python $(call VERSION_OF,$(PYTHON)) : refait avec "$(call q,$(PYTHON)); \
$(call q,$(PYTHON)) -m venv --clear $(call q,$(VENV))
endef

$(VENV)/.stamp-venv: $(REMAKE_VENV)
	@$(call q,$(PYTHON)) -c 'import sys; sys.exit("Python 3.11+ requis" if sys.version_info < (3, 11) else 0)'
	$(if $(REMAKE_VENV),$(REMAKE))
	test -x $(call q,$(PY)) || $(call q,$(PYTHON)) -m venv $(call q,$(VENV))
	touch $(call q,$@)

$(VENV)/.stamp-runtime: requirements/lab.txt pyproject.toml course/save_hook.py $(REMAKE_VENV) \
    | $(VENV)/.stamp-venv
	$(call install,--no-deps --require-hashes -r requirements/lab.txt)
	$(call install,--no-deps -e .)
	$(call q,$(PY)) -m course.save_hook
	touch $(call q,$@)

## make setup : crée .venv et installe le cours (comme make lab, sans ouvrir JupyterLab)
setup: $(VENV)/.stamp-runtime

## make lab : installe le cours et ouvre JupyterLab sur notebooks/ (LAB_ARGS="--port=9999" etc.)
LAB_ARGS ?=
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: setup
	@$(call q,$(PY)) -m course.postgres
	JUPYTER_CONFIG_PATH=$(call q,$(abspath course/jupyter-config/eleve)$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))) \
	  $(call q,$(BIN)/jupyter) lab --ServerApp.root_dir=notebooks $(ROOT_FLAG) \
	  $(if $(wildcard notebooks/lecons/00_commencer_ici.ipynb),--LabApp.default_url=/lab/tree/lecons/00_commencer_ici.ipynb) \
	  $(LAB_ARGS)

## make recommencer LECON=04 : recommence une leçon : supprime les fichiers qu'elle a créés dans
## notebooks/lecons et sa progression (course/progress.py), le reste est gardé
recommencer: setup
	@test -n $(call q,$(LECON)) || { echo "Indiquez la leçon : make recommencer LECON=04"; exit 2; }
	cd notebooks/lecons && $(call q,$(abspath $(PY))) -m course.progress recommencer $(call q,$(LECON))
