# Grading targets, included by the top Makefile (`-include grader/grader.mk`).
# Run them from the repository root (`make grade`, ...) or from grader/ (grader/Makefile delegates). nbgrader itself runs in the grading folder
# (NOTATION, grader/ by default), where it finds nbgrader_config.py (the course root is computed
# from that file), always with the venv's bin/ on PATH (nbgrader's gradebook runs `alembic`) and
# the instructor-side package grader/grading importable (its plugins, the class tools).
NOTATION ?= grader
NBG_ENV := PATH="$(abspath $(BIN)):$$PATH" PYTHONPATH="$(abspath grader)$${PYTHONPATH:+:$$PYTHONPATH}"
NBGRADER = cd $(NOTATION) && $(NBG_ENV) $(abspath $(BIN))/nbgrader
GRADING = cd $(NOTATION) && $(NBG_ENV) $(abspath $(PY)) -m grading.
# the assignment (A=lecons for another one), parallel workers, the class list, a due date
A ?= oublier
JOBS ?= 1
ELEVES ?= grader/eleves.csv
DATE ?=
# FORCE=1: regrade / rewrite everything; SANS_BAC_A_SABLE=1: grade without the sandbox (unsafe);
# ARGS="...": more nbgrader options; EXEMPLES="complete ebauche": the demo's samples
FORCE ?=
SANS_BAC_A_SABLE ?=
ARGS ?=
EXEMPLES ?=
# backups: where (DOSSIER, default grader/sauvegardes), retention (GARDER newest, GARDER_JOURS days),
# the hub's SQLite database (HUB_DB), the archive to restore (SAUVEGARDE); ID: one learner
DOSSIER ?=
GARDER ?=
GARDER_JOURS ?=
HUB_DB ?=
SAUVEGARDE ?=
ID ?=
# make oublier-eleve: CONFIRMER=1 erases (default: a dry run); TEMOIN: the control learner;
# on a hub: HUB_URL (its API, with an admin token in JUPYTERHUB_API_TOKEN), HUB_DB, ECHANGE
# (nbgrader's Exchange.root), HOMES (the homes' folder), PREFIXE_UNIX (TLJH: jupyter-),
# HELM_RELEASE (Kubernetes: the release whose history keeps the roster), MOTS_DE_PASSE (TLJH's
# FirstUseAuthenticator password file, /opt/tljh/state/passwords.dbm)
CONFIRMER ?=
TEMOIN ?=
HUB_URL ?=
ECHANGE ?=
HOMES ?=
PREFIXE_UNIX ?=
HELM_RELEASE ?=
MOTS_DE_PASSE ?=
# An id reaches the tool as typed (« o'brien », « a$b », « `x` », « $(shell …) »): make never
# expands it (`$(value …)`, and not exported as itself: exporting would expand it), the shell
# reads it from the environment in double quotes, after `--` (an id may start with « - »).
unexport ID TEMOIN

.PHONY: notebooks students collect zip-collect duedate grade feedback release-feedback export \
	rapport formgrader demo-grading bench-grading \
	sauvegarde restauration purge-sauvegardes donnees-eleve oublier-eleve

## make notebooks: regenerate ALL of notebooks/ from solutions/ with stock nbgrader (no outputs,
## stable cell ids); a throw-away gradebook so none is left in the repository (`make grade` adds
## the assignment to the real gradebook when it is missing).
# One nbgrader for every assignment (its id is a glob, as nbgrader's converters allow): one
# start instead of one per assignment (measured: 9.5 s of CPU instead of 17.9 s for three).
notebooks: setup
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(NBGRADER) generate_assignment '*' --force \
	  --CourseDirectory.db_url="sqlite:///$$tmp/gradebook.db" --log-level=WARN

## make students ELEVES=grader/eleves.csv: register the class in the gradebook from a spreadsheet's
## CSV (UTF-8 or Windows-1252, `,` or `;`, columns id/identifiant, prénom, nom, courriel), every
## line checked first (grading.roster_csv), then stock `nbgrader db student import`
students: setup
	$(GRADING)roster_csv $(abspath $(ELEVES))

## make collect: collect submissions from nbgrader's exchange (JupyterHub) into grader/submitted/;
## a copy not owned by the student it names is set aside in grader/quarantaine/ (exit status 1)
collect: setup
	$(GRADING)collect $(A) $(ARGS)

## make zip-collect: submissions from an LMS or e-mail, zips in grader/downloaded/<A>/archive/;
## adds new students and newer copies, never clears (grading.zip_collect), names every bad file
zip-collect: setup
	$(GRADING)zip_collect $(A) $(ARGS)

## make duedate DATE="2025-03-14 18:00:00 Europe/Paris": the assignment's due date (gradebook)
duedate: setup
	@test -n "$(DATE)" || { echo "Donnez la date : make duedate DATE=\"2025-03-14 18:00:00 Europe/Paris\"" >&2; exit 2; }
	$(GRADING)duedate $(A) "$(DATE)"

## make grade [JOBS=2] [FORCE=1] [ARGS=...]: stock `nbgrader autograde`, progress bar, summary
grade: setup
	$(GRADING)autograde $(A) --jobs $(JOBS) $(if $(FORCE),--force) \
	  $(if $(SANS_BAC_A_SABLE),--sans-bac-a-sable) $(ARGS)

## make feedback [FORCE=1]: one HTML page per student in grader/feedback/ (hidden tests removed)
feedback: setup
	$(GRADING)feedback $(A) $(if $(FORCE),--force) $(ARGS)

## make release-feedback: give feedback back through the exchange (JupyterHub)
release-feedback: setup
	$(GRADING)release_feedback $(A) $(ARGS)

## make export: every grade of the gradebook in grader/rapport/grades.csv (stock `nbgrader export`,
## its log in rapport/export.log) and rapport/export-tableur.csv (the same for French spreadsheets)
export: setup
	$(GRADING)export

## make rapport: grader/rapport/rapport.html, notes-tableur.csv (French spreadsheets) and notes.csv
## (stock `nbgrader export` with the course's plugin, its log in rapport/rapport.log)
rapport: setup
	$(GRADING)rapport $(A)

## make formgrader [LAB_ARGS=...]: JupyterLab for instructors (menu Nbgrader > Formgrader)
formgrader: setup
	cd $(NOTATION) && $(NBG_ENV) $(abspath $(BIN))/jupyter lab \
	  --ServerApp.root_dir=$(abspath .) $(ROOT_FLAG) $(LAB_ARGS)

## make demo-grading [EXEMPLES=...]: the whole cycle on the sample submissions, in grader/demo/
demo-grading: setup
	cd grader && $(NBG_ENV) $(abspath $(PY)) -m grading.demo \
	  $(if $(EXEMPLES),--only $(EXEMPLES)) $(if $(SANS_BAC_A_SABLE),--sans-bac-a-sable)

## make bench-grading: this lab against a trivial one-cell assignment, 30 submissions each
bench-grading: setup
	$(GRADING)bench --submissions 30 --jobs 2

BACKUP_PLACE = $(if $(DOSSIER),--dossier $(abspath $(DOSSIER))) \
	$(if $(GARDER),--garder $(GARDER)) $(if $(GARDER_JOURS),--garder-jours $(GARDER_JOURS))

## make sauvegarde [DOSSIER=...] [GARDER=N] [GARDER_JOURS=J] [HUB_DB=...]: one .tar.gz in
## grader/sauvegardes/ (gradebook by SQLite's online backup, safe during `make grade`; submitted/,
## autograded/, feedback/, downloaded/, the roster ELEVES, the hub's database), then the purge
## (GARDER_JOURS=30 by default); refused when the gradebook is missing, empty, unreadable or
## holds fewer students or grades than the last backup, unless CONFIRMER=1
sauvegarde: setup
	$(GRADING)backup sauvegarder --eleves $(abspath $(ELEVES)) $(BACKUP_PLACE) \
	  $(if $(CONFIRMER),--confirmer) $(if $(HUB_DB),--hub-db $(abspath $(HUB_DB)))

## make restauration SAUVEGARDE=...: restore a backup into a course that has no gradebook,
## submissions or roster yet (a fresh clone); every byte checked first, nothing overwritten
restauration: setup
	@test -n "$(SAUVEGARDE)" || { echo "Donnez la sauvegarde : make restauration SAUVEGARDE=grader/sauvegardes/sauvegarde-….tar.gz" >&2; exit 2; }
	$(GRADING)backup restaurer $(abspath $(SAUVEGARDE)) --eleves $(abspath $(ELEVES)) \
	  $(if $(HUB_DB),--hub-db $(abspath $(HUB_DB)))

## make purge-sauvegardes GARDER=N GARDER_JOURS=J: delete the backups neither rule keeps
purge-sauvegardes: setup
	$(GRADING)backup purger $(BACKUP_PLACE)

## make donnees-eleve ID=...: everything the class system holds about one learner, in one zip
## (grader/exports/; RGPD articles 15 and 20)
donnees-eleve: export COURSE_LEARNER_ID = $(value ID)
donnees-eleve: setup
	@test -n "$$COURSE_LEARNER_ID" || { echo "Donnez l'identifiant : make donnees-eleve ID=chloé" >&2; exit 2; }
	$(GRADING)learner_export --eleves $(abspath $(ELEVES)) -- "$$COURSE_LEARNER_ID"

## make oublier-eleve ID=... [CONFIRMER=1] [TEMOIN=...]: erase one learner from the whole class
## system (RGPD article 17): without CONFIRMER, a dry run listing every place they are found;
## with it, everything erased, then the same scan proves it (nothing of them, the control still
## found, the others' grades unchanged); backups, logs and Helm history listed with their expiry
oublier-eleve: export COURSE_LEARNER_ID = $(value ID)
oublier-eleve: export COURSE_CONTROL_ID = $(value TEMOIN)
oublier-eleve: setup
	@test -n "$$COURSE_LEARNER_ID" || { echo "Donnez l'identifiant : make oublier-eleve ID=chloé (CONFIRMER=1 pour effacer)" >&2; exit 2; }
	$(GRADING)erase_learner \
	  $(if $(or $(wildcard $(ELEVES)),$(filter command line environment,$(origin ELEVES))),--eleves $(abspath $(ELEVES))) \
	  $(if $(CONFIRMER),--confirmer) \
	  $(if $(value TEMOIN),--temoin="$$COURSE_CONTROL_ID") $(if $(HUB_URL),--hub-url $(HUB_URL)) \
	  $(if $(HUB_DB),--hub-db $(abspath $(HUB_DB))) $(if $(ECHANGE),--echange $(abspath $(ECHANGE))) \
	  $(if $(HOMES),--dossiers-personnels $(abspath $(HOMES))) \
	  $(if $(PREFIXE_UNIX),--prefixe-unix $(PREFIXE_UNIX)) \
	  $(if $(DOSSIER),--sauvegardes $(abspath $(DOSSIER))) \
	  $(if $(GARDER_JOURS),--garder-jours $(GARDER_JOURS)) \
	  $(if $(HELM_RELEASE),--helm-release $(HELM_RELEASE)) \
	  $(if $(MOTS_DE_PASSE),--mots-de-passe-tljh $(abspath $(MOTS_DE_PASSE))) \
	  -- "$$COURSE_LEARNER_ID"
