# Deux commandes suffisent : `make lab` (ouvrir le cours) et `make test` (tout vérifier).
# Both create .venv with the Python found on PATH (3.11+) and install what they need.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
PYTEST := $(BIN)/pytest
export PIP_DISABLE_PIP_VERSION_CHECK := 1
# Installs leave the venv compiled to bytecode (pip does by default; uv, here, once for the whole
# venv): where the environment sets PYTHONDONTWRITEBYTECODE (this machine does), nothing else ever
# writes it, and every process would compile what it imports, every time (nbgrader's start: 3.0 s
# of CPU, 2.0 s compiled).
export UV_COMPILE_BYTECODE := 1
# $(call q,WORD): WORD as one shell word, in single quotes (each ' written '\''), so that the shell
# runs nothing it holds. Every path a recipe hands to the shell goes through it, here and in
# grader/grader.mk (included below): the checkout's absolute path may hold a space, a ", a ' or a
# $( (which the shell runs inside "…"), and so may a path given on the command line.
q = '$(subst ','\'',$(1))'
# $(call abs,PATH): $(abspath PATH) for one path that may hold spaces (abspath cuts a path at
# them): a path given from grader/ reaches grader/grader.mk made absolute, the checkout's in it
space := $(subst ,, )
abs = $(subst ␣,$(space),$(abspath $(subst $(space),␣,$(1))))

.PHONY: lab test test-units test-fast test-browser test-hub test-classe lint bench system-deps setup setup-test notebooks clean
.PHONY: lock bench-setup help recommencer course-files

## make help : chaque cible et ce qu'elle fait (d'après le commentaire `##` qui la nomme, dans
## ce Makefile et dans grader/grader.mk)
help:
	@awk '/^## / { line = substr($$0, 4); \
	    if (!block) { sub(/^make /, "", line); printf "\nmake %s\n", line } \
	    else print "    " line; block = 1; next } { block = 0 }' $(foreach f,$(MAKEFILE_LIST),$(call q,$(f)))

# Every install comes from a lock in requirements/ (exact versions, hash-checked), made from
# uv.lock by `make lock`. uv installs them in seconds: the uv on PATH, else uv from PyPI into .venv
# (pinned in requirements/uv.txt). pip is the fallback: INSTALLER=pip, or when uv can't be had.
INSTALLER ?= uv
ifndef UV
# .venv's uv by its relative path (every recipe using it runs here): the checkout's absolute path
# may hold a " (a shell syntax error inside "…") or a $( (run by the shell)
UV := $(or $(shell command -v uv 2>/dev/null),$(BIN)/uv)
endif
GET_UV = $(call q,$(PY)) -m pip install -q --no-deps --require-hashes -r requirements/uv.txt
# $(call install,PIP ARGUMENTS): with uv when it is (or can be) there, else with pip
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

$(VENV)/.stamp-runtime: requirements/lab.txt pyproject.toml course/save_hook.py $(REMAKE_VENV) | $(VENV)/.stamp-venv
	$(call install,--no-deps --require-hashes -r requirements/lab.txt)
	$(call install,--no-deps -e .)
	$(call q,$(PY)) -m course.save_hook
	touch $(call q,$@)

$(VENV)/.stamp-test: requirements/test.txt $(VENV)/.stamp-runtime
	$(call install,--no-deps --require-hashes -r requirements/test.txt)
	touch $(call q,$@)

$(VENV)/.stamp-lint: requirements/lint.txt $(REMAKE_VENV) | $(VENV)/.stamp-venv
	$(call install,--no-deps --require-hashes -r requirements/lint.txt)
	touch $(call q,$@)

## make setup : .venv avec le cours et ce qu'il faut aux leçons (comme `make lab`, sans l'ouvrir)
setup: $(VENV)/.stamp-runtime
## make setup-test : .venv avec, en plus, ce qu'il faut aux tests
setup-test: $(VENV)/.stamp-test

## make lock : recalcule uv.lock pour pyproject.toml (universel : tout système, Python 3.11+ ;
## garde les versions qu'il peut, UPGRADE=1 prend les plus récentes) et exporte les listes
## qu'installe chaque mise en place
EXPORT = $(call q,$(UV)) export --frozen --no-emit-project --no-header -q
LOCK_HEADER = echo "\# Made by \`make lock\` from uv.lock (pyproject.toml). Do not edit."
lock: $(VENV)/.stamp-venv
	@[ -x $(call q,$(UV)) ] || $(GET_UV)
	$(call q,$(UV)) lock -q $(if $(UPGRADE),--upgrade)
	mkdir -p requirements
	{ $(LOCK_HEADER); $(EXPORT); } >requirements/lab.txt
	{ $(LOCK_HEADER); $(EXPORT) --extra hub; } >requirements/hub.txt
	{ $(LOCK_HEADER); $(EXPORT) --extra test --group lint; } >requirements/test.txt
	{ $(LOCK_HEADER); $(EXPORT) --only-group lint; } >requirements/lint.txt
	{ $(LOCK_HEADER); echo "uv==$$($(call q,$(UV)) --version | cut -d" " -f2)" \
	  | $(call q,$(UV)) pip compile - --universal --generate-hashes --no-header -q; } >requirements/uv.txt

## make lab : installe le cours et ouvre JupyterLab sur notebooks/ (LAB_ARGS="--port=9999" etc.),
## à la page de départ, avec la vue de l'élève (course/jupyter-config/eleve : sans les outils
## d'enseignant de nbgrader, comme sur le hub)
LAB_ARGS ?=
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: setup
	@# what this machine lacks, and what the learner skips meanwhile (lesson 7 without PostgreSQL)
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

## system-deps : chromium de Debian et configurable-http-proxy de npm, pour les tests du
## navigateur et du hub
system-deps:
	bash .ci/system-deps

## make test : installe tout et lance tous les tests (c'est ce que lance la CI)
## (répartis entre TEST_WORKERS processus par unité : un module, ceux du hub compris ;
## TEST_WORKERS=0 les lance l'un après l'autre ; tests/work_units.py dit pourquoi)
TEST_WORKERS ?= 3
XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS))
JUNIT ?= $(VENV)/rapport-tests.xml
# The course's own modules, compiled for the same reason before the tests start their processes
COMPILE_OWN = $(call q,$(PY)) -m compileall -q -j 0 course grader/grading grader/hub tests
test: setup-test lint system-deps
	$(COMPILE_OWN)
	$(call q,$(PYTEST)) -q -ra --durations=25 --junitxml=$(call q,$(JUNIT)) $(XDIST) tests

## make test-units : réécrit tests/unit_seconds.json (l'ordre de départ des unités) d'après le
## rapport du dernier `make test` ; au mieux après un `make test TEST_WORKERS=0` séquentiel
test-units:
	$(call q,$(PY)) tests/unit_seconds.py $(call q,$(JUNIT))

## make course-files : réécrit grader/grading/privacy/course_files.txt (les empreintes des
## fichiers du cours dans grader/, qui les distinguent de ceux de l'enseignant) après un changement
course-files: setup-test
	$(call q,$(PY)) tests/course_files.py

## make test-fast : la boucle courte, les tests de quelques secondes (sans navigateur, hub,
## nbgrader, leçon entière ni bac à sable)
test-fast: setup-test
	$(COMPILE_OWN)
	$(call q,$(PYTEST)) -q -ra $(XDIST) tests -m "not browser and not hub and not slow"

## make test-browser : chaque notebook exécuté dans JupyterLab, dans Chromium sans écran
test-browser: setup-test system-deps
	$(COMPILE_OWN)
	$(call q,$(PYTEST)) -q -ra tests -m browser

## make test-hub : un cycle de classe entier sur un vrai JupyterHub, avec l'échange de nbgrader
test-hub: setup-test system-deps
	$(COMPILE_OWN)
	$(call q,$(PYTEST)) -q -ra tests -m hub

## make test-classe : 30 élèves et leur enseignant sur le hub d'une machine, chiffres affichés
test-classe: setup-test system-deps
	$(COMPILE_OWN)
	COURSE_RUSH_STUDENTS=30 $(call q,$(PYTEST)) -q -ra tests/hub/test_class_rush.py

## make lint : vérifie le code avec ruff seul (requirements/lint.txt), sans installer tout le cours
lint: $(VENV)/.stamp-lint
	$(call q,$(BIN)/ruff) check course tests grader
	$(call q,$(BIN)/ruff) format --check course tests grader

## make bench : service de session du cours contre google-adk 2.10, ratios mesurés dans un seul run
bench: setup-test
	$(call q,$(PY)) tests/bench/bench_sessions.py

## make bench-setup : `make lab` (jusqu'à ce que JupyterLab réponde) et `make setup-test` d'un
## clone neuf, uv contre pip, caches froids et chauds, ratios mesurés dans un seul run (pip à
## froid : des minutes)
bench-setup:
	$(call q,$(PYTHON)) tests/bench/bench_setup.py $(BENCH_ARGS)

## make clean : supprime .venv, .artefacts et build (rien de ce que l'enseignant a créé)
clean:
	rm -rf $(call q,$(VENV)) .artefacts build

-include grader/grader.mk
