# Grading targets, included by the top Makefile (`-include grader/grader.mk`).
# Run them from the repository root (`make grade`, ...) or from grader/ (grader/Makefile delegates). nbgrader itself runs in the grading folder
# (NOTATION, grader/ by default), where it finds nbgrader_config.py (the course root is computed
# from that file), always with the venv's bin/ on PATH (nbgrader's gradebook runs `alembic`). The
# instructor-side package grader/grading is found there and only there: `python -m` puts the
# folder it runs in first on sys.path, and nbgrader_config.py puts its own folder there for
# nbgrader (its plugins), wherever nbgrader runs.
NOTATION ?= grader
NBG_ENV := PATH=$(call q,$(abspath $(BIN))):"$$PATH"
NBGRADER = cd $(call q,$(NOTATION)) && $(NBG_ENV) $(call q,$(abspath $(BIN))/nbgrader)
# a NOTATION without grading/ (grader/demo, which make demo-grading makes): said in French, not
# Python's English « No module named 'grading' » (checked as the recipe starts, shown only then)
HAS_GRADING = $(shell test -d $(call q,$(NOTATION))/grading && echo 1)
GRADING = $(if $(HAS_GRADING),cd $(call q,$(NOTATION)) && $(NBG_ENV) $(MAKE_OPTIONS_ENV) \
$(call q,$(abspath $(PY))) -m grading.,@echo "✘ NOTATION="$(call q,$(NOTATION))" n'a pas de \
dossier grading/ : donnez le \
grader/ d'une copie du cours (la démonstration se lit avec make formgrader NOTATION=grader/demo, \
son rapport est déjà dans grader/demo/rapport/)." >&2; exit 2; : )
# The make variables that give a class command an option's value, VARIABLE=--option, one list:
# `$(call option,JOBS)` is « --jobs $(JOBS) », nothing when JOBS is empty. The command is told
# which of them this line gave (COURSE_MAKE_OPTIONS, names only) and names the variable typed in
# a refusal (« GARDER_JOURS attend un nombre, pas « 7j » »), not its option:
# grading.french.french_args. A path (DOSSIER, HUB_DB…) is checked by the command, in its words.
MAKE_OPTIONS = JOBS=--jobs GARDER=--garder GARDER_JOURS=--garder-jours SANS_HEURE=--sans-heure \
	EXEMPLES=--only TP=--tp HUB_URL=--hub-url PREFIXE_UNIX=--prefixe-unix HELM_RELEASE=--helm-release
option = $(if $($(1)),$(patsubst $(1)=%,%,$(filter $(1)=%,$(MAKE_OPTIONS))) $($(1)))
MAKE_OPTIONS_ENV = COURSE_MAKE_OPTIONS=$(call q,$(strip $(foreach pair,$(MAKE_OPTIONS),\
	$(if $($(firstword $(subst =, ,$(pair)))),$(pair)))))
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
CAVIARDER ?=
TEMOIN ?=
# REINSCRIRE=<id>: a learner erased earlier enrolled again (make students, make restauration)
REINSCRIRE ?=
# REGISTRE: the folder of the register of erased learners, for a restore that finds none
REGISTRE ?=
HUB_URL ?=
ECHANGE ?=
HOMES ?=
PREFIXE_UNIX ?=
HELM_RELEASE ?=
MOTS_DE_PASSE ?=
# An id reaches the tool as typed (« o'brien », « a$b », « `x` », « $(shell …) »): make never
# expands it (`$(value …)`, and not exported as itself: exporting would expand it), the shell
# reads it from the environment in double quotes, after `--` (an id may start with « - »).
unexport ID TEMOIN REINSCRIRE

.PHONY: notebooks students collect zip-collect duedate grade feedback release-feedback export \
	rapport formgrader demo-grading bench-grading \
	sauvegarde restauration purge-sauvegardes donnees-eleve oublier-eleve paquet-eleve

## make notebooks [ECRASER=1] : régénère TOUT notebooks/ depuis solutions/ avec nbgrader (sans
## sorties, identifiants de cellules stables) ; un carnet de notes jetable, aucun n'est laissé dans
## le dépôt (make grade ajoute le devoir au vrai carnet s'il y manque) ; ce qui diffère dans
## notebooks/ (le travail fait avec make lab) est nommé et gardé, ou mis de côté dans build/ (ECRASER=1)
# One nbgrader for every assignment (its id is a glob, as nbgrader's converters allow): one
# start instead of one per assignment (measured: 9.5 s of CPU instead of 17.9 s for three),
# into a folder of its own; grading.student_version puts it in notebooks/.
ECRASER ?=
notebooks: setup
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	( $(NBGRADER) generate_assignment '*' --force --log-level=WARN \
	  --CourseDirectory.db_url="sqlite:///$$tmp/gradebook.db" \
	  --CourseDirectory.release_directory="$$tmp/notebooks" ); \
	( $(GRADING)student_version "$$tmp/notebooks" $(call q,$(abspath notebooks)) \
	  $(if $(ECRASER),--ecraser) )

## make students ELEVES=grader/eleves.csv [REINSCRIRE=id] : inscrit la classe au carnet de notes
## depuis le CSV d'un tableur (UTF-8 ou Windows-1252, « , » ou « ; », colonnes identifiant,
## prénom, nom, courriel), chaque ligne vérifiée d'abord ; un élève effacé (RGPD) est refusé et
## nommé, sauf REINSCRIRE=son identifiant
students: export COURSE_REENROL_ID = $(value REINSCRIRE)
students: setup
	$(GRADING)roster_csv $(call q,$(call abs,$(ELEVES))) $(if $(value REINSCRIRE),--reinscrire="$$COURSE_REENROL_ID")

## make collect : ramasse les rendus de l'échange de nbgrader (JupyterHub) dans grader/submitted/ ;
## une copie qui n'appartient pas à l'élève qu'elle nomme va dans grader/quarantaine/, celle d'un
## élève effacé reste dans l'échange (code de sortie 1)
collect: setup
	$(GRADING)collect $(A) $(ARGS)

## make zip-collect : les rendus venus d'un ENT ou par courriel, en zip dans
## grader/downloaded/<A>/archive/ ; ajoute les nouveaux élèves et les copies plus récentes,
## n'efface jamais rien, nomme chaque fichier refusé (élève effacé compris) ;
## SANS_HEURE=a-l-heure|retard : la règle des copies dont aucune archive ne prouve l'heure de rendu
zip-collect: setup
	$(GRADING)zip_collect $(A) $(call option,SANS_HEURE) $(ARGS)

## make duedate DATE="2025-03-14 18:00:00 Europe/Paris" : la date limite du devoir (au carnet de
## notes, en UTC ; formgrader l'affiche en UTC, le rapport dans le fuseau du cours)
duedate: setup
	@test -n $(call q,$(DATE)) || { echo "Donnez la date : make duedate DATE=\"2025-03-14 18:00:00 Europe/Paris\"" >&2; exit 2; }
	$(GRADING)duedate $(A) $(call q,$(DATE))

## make grade [JOBS=2] [FORCE=1] [ARGS=...] : la correction automatique (nbgrader autograde),
## avec barre de progression et bilan en français
grade: setup
	$(GRADING)autograde $(A) $(call option,JOBS) $(if $(FORCE),--force) \
	  $(if $(SANS_BAC_A_SABLE),--sans-bac-a-sable) $(ARGS)

## make feedback [FORCE=1] : une page HTML de retour par élève dans grader/feedback/ (tests
## cachés retirés)
feedback: setup
	$(GRADING)feedback $(A) $(if $(FORCE),--force) $(ARGS)

## make release-feedback : rend les retours aux élèves par l'échange (JupyterHub)
release-feedback: setup
	$(GRADING)release_feedback $(A) $(ARGS)

## make export : toutes les notes du carnet dans grader/rapport/grades.csv (nbgrader export, son
## journal dans rapport/export.log) et rapport/export-tableur.csv (le même pour un tableur français)
export: setup
	$(GRADING)export

## make rapport : grader/rapport/rapport.html, notes-tableur.csv (tableur français) et notes.csv
## (nbgrader export avec le greffon du cours, son journal dans rapport/rapport.log)
rapport: setup
	$(GRADING)rapport $(A)

## make formgrader [LAB_ARGS=...] : ouvre JupyterLab pour l'enseignant, avec le menu Nbgrader > Formgrader
formgrader: setup
	cd $(call q,$(NOTATION)) && $(NBG_ENV) $(call q,$(abspath $(BIN))/jupyter) lab \
	  --ServerApp.root_dir=$(call q,$(abspath .)) $(ROOT_FLAG) $(LAB_ARGS)

## make demo-grading [EXEMPLES=...] : tout le cycle de notation sur les copies d'exemple, dans
## grader/demo/
demo-grading: setup
	cd grader && $(NBG_ENV) $(MAKE_OPTIONS_ENV) $(call q,$(abspath $(PY))) -m grading.demo \
	  $(call option,EXEMPLES) $(if $(SANS_BAC_A_SABLE),--sans-bac-a-sable)

## make bench-grading : mesure ce TP contre un devoir trivial d'une cellule, 30 rendus chacun
bench-grading: setup
	$(GRADING)bench --submissions 30 --jobs 2

BACKUP_PLACE = $(if $(DOSSIER),--dossier $(call q,$(call abs,$(DOSSIER)))) \
	$(call option,GARDER) $(call option,GARDER_JOURS)

## make sauvegarde [DOSSIER=...] [GARDER=N] [GARDER_JOURS=J] [HUB_DB=...] [CONFIRMER=1] : une
## archive .tar.gz dans grader/sauvegardes/ (carnet de notes copié sans risque pendant make grade,
## submitted/, autograded/, feedback/, downloaded/, la liste ELEVES, la base du hub, le registre
## des effacements), puis la purge (GARDER_JOURS=30 par défaut) ; refusée si le carnet de notes
## manque, est vide, illisible ou a moins d'élèves ou de notes que la dernière sauvegarde, sauf
## CONFIRMER=1
sauvegarde: setup
	$(GRADING)backup sauvegarder --eleves $(call q,$(call abs,$(ELEVES))) $(strip $(BACKUP_PLACE) \
	  $(if $(CONFIRMER),--confirmer) $(if $(HUB_DB),--hub-db $(call q,$(call abs,$(HUB_DB)))))

## make restauration SAUVEGARDE=... [REINSCRIRE=id] [REGISTRE=dossier] [CONFIRMER=1] : restaure
## une sauvegarde dans un cours sans carnet de notes, rendus ni liste (un clone neuf) ; chaque
## octet vérifié d'abord, rien d'écrasé ; un élève effacé depuis est effacé de nouveau et nommé
## (code de sortie 1) ; sans registre des effacements (ni dans grader/, ni à côté de la
## sauvegarde), refusée sauf REGISTRE=son dossier ou CONFIRMER=1
restauration: export COURSE_REENROL_ID = $(value REINSCRIRE)
restauration: setup
	@test -n $(call q,$(SAUVEGARDE)) || { echo "Donnez la sauvegarde : make restauration SAUVEGARDE=grader/sauvegardes/sauvegarde-….tar.gz" >&2; exit 2; }
	$(GRADING)backup restaurer $(call q,$(call abs,$(SAUVEGARDE))) --eleves $(call q,$(call abs,$(ELEVES))) $(strip \
	  $(if $(HUB_DB),--hub-db $(call q,$(call abs,$(HUB_DB)))) \
	  $(if $(REGISTRE),--registre $(call q,$(call abs,$(REGISTRE)))) $(if $(CONFIRMER),--confirmer) \
	  $(if $(value REINSCRIRE),--reinscrire="$$COURSE_REENROL_ID"))

## make purge-sauvegardes [GARDER=N] [GARDER_JOURS=J] : efface les sauvegardes de plus de J
## jours (30 par défaut) ou au-delà des N plus récentes ; garde toujours la plus récente qui
## contient un carnet de notes, et dit ce qu'elle garde et pourquoi
purge-sauvegardes: setup
	$(GRADING)backup purger $(BACKUP_PLACE)

## make donnees-eleve ID=... : tout ce que le système de la classe détient sur un élève, dans
## un zip (grader/exports/ ; RGPD, articles 13, 15 et 20)
donnees-eleve: export COURSE_LEARNER_ID = $(value ID)
donnees-eleve: setup
	@test -n "$$COURSE_LEARNER_ID" || { echo "Donnez l'identifiant : make donnees-eleve ID=chloe" >&2; exit 2; }
	$(GRADING)learner_export --eleves $(call q,$(call abs,$(ELEVES))) -- "$$COURSE_LEARNER_ID"

## make oublier-eleve ID=... [CONFIRMER=1] [CAVIARDER=1] [TEMOIN=...] : efface un élève de
## tout le système de la classe (RGPD, article 17) : sans CONFIRMER, un essai à blanc qui liste
## chaque endroit où il se trouve (ses mentions dans le travail des autres comprises) ; avec,
## tout est effacé, puis la même recherche le prouve (plus rien de lui, le témoin toujours trouvé,
## les notes des autres inchangées) ; CAVIARDER=1 remplace aussi ses mentions chez les autres ;
## sauvegardes et historique Helm listés avec leur date d'expiration
# the erasure's options, on one line: make echoes its command without a line of bare `\`
ERASE_ARGS = $(strip $(if $(or $(wildcard $(ELEVES)),$(filter command line environment,$(origin ELEVES))),--eleves $(call q,$(call abs,$(ELEVES)))) \
	$(if $(CONFIRMER),--confirmer) $(if $(CAVIARDER),--caviarder) \
	$(if $(value TEMOIN),--temoin="$$COURSE_CONTROL_ID") $(call option,HUB_URL) \
	$(if $(HUB_DB),--hub-db $(call q,$(call abs,$(HUB_DB)))) $(if $(ECHANGE),--echange $(call q,$(call abs,$(ECHANGE)))) \
	$(if $(HOMES),--dossiers-personnels $(call q,$(call abs,$(HOMES)))) \
	$(call option,PREFIXE_UNIX) \
	$(if $(DOSSIER),--sauvegardes $(call q,$(call abs,$(DOSSIER)))) \
	$(call option,GARDER_JOURS) \
	$(call option,HELM_RELEASE) \
	$(if $(MOTS_DE_PASSE),--mots-de-passe-tljh $(call q,$(call abs,$(MOTS_DE_PASSE)))))
oublier-eleve: export COURSE_LEARNER_ID = $(value ID)
oublier-eleve: export COURSE_CONTROL_ID = $(value TEMOIN)
oublier-eleve: setup
	@test -n "$$COURSE_LEARNER_ID" || { echo "Donnez l'identifiant : make oublier-eleve ID=chloe (CONFIRMER=1 pour effacer)" >&2; exit 2; }
	$(GRADING)erase_learner $(ERASE_ARGS) -- "$$COURSE_LEARNER_ID"

## make paquet-eleve [TP=oublier] : le zip à donner aux élèves, build/paquet-eleve/memoire-tuteur-eleve.zip :
## leçons et TP générés (TP : ceux que vous donnez, par défaut tous), le paquet course et make lab,
## jamais solutions/ ni grader/ ; refusé si une solution, un test ou une entrée cachés s'y trouvent
TP ?=
paquet-eleve: notebooks
	$(GRADING)student_package $(call option,TP) $(ARGS)
