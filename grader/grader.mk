# Grading targets, included by the top Makefile (`-include grader/grader.mk`).
# Run them from the repository root (`make grade`, ...). nbgrader itself runs in grader/, where it
# finds nbgrader_config.py (the course root is computed from that file), and always with the
# venv's bin/ on PATH (nbgrader's gradebook runs `alembic`).
NBG_ENV := PATH="$(abspath $(BIN)):$$PATH"
NBGRADER := cd grader && $(NBG_ENV) $(abspath $(BIN))/nbgrader
ASSIGNMENTS := $(notdir $(patsubst %/,%,$(wildcard solutions/*/)))
# the assignment to grade (A=lecons for another one), parallel workers, the class list
A ?= oublier
JOBS ?= 1
ELEVES ?= grader/eleves.csv

.PHONY: notebooks students collect grade feedback release-feedback export rapport formgrader \
	demo-grading bench-grading

## make notebooks: regenerate ALL of notebooks/ from solutions/ with stock nbgrader (no outputs,
## stable cell ids); a throw-away gradebook so none is left in the repository.
notebooks: setup
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for a in $(ASSIGNMENTS); do \
	  ( $(NBGRADER) generate_assignment "$$a" --force \
	    --CourseDirectory.db_url="sqlite:///$$tmp/gradebook.db" --log-level=WARN ); \
	done

## make students ELEVES=eleves.csv: register the class (CSV with an `id` column) in the gradebook
students: setup
	$(NBGRADER) db student import $(abspath $(ELEVES))

## make collect: collect submissions from nbgrader's exchange (JupyterHub) into grader/submitted/
collect: setup
	$(NBGRADER) collect $(A)

## make grade [A=oublier] [JOBS=2]: stock `nbgrader autograde`, with a progress bar
grade: setup
	$(NBG_ENV) $(PY) -m course.labo.classe $(A) --jobs $(JOBS)

## make feedback: one HTML page per student in grader/feedback/ (hidden tests removed)
feedback: setup
	$(NBGRADER) generate_feedback $(A)

## make release-feedback: give feedback back through the exchange (JupyterHub)
release-feedback: setup
	$(NBGRADER) release_feedback $(A)

## make export: every grade of the gradebook in grader/rapport/grades.csv
export: setup
	mkdir -p grader/rapport
	$(NBGRADER) export --to rapport/grades.csv

## make rapport: grader/rapport/notes.csv and rapport.html (plots of what the class missed)
rapport: setup
	$(NBG_ENV) $(PY) -m course.labo.rapport --assignment $(A)

## make formgrader: JupyterLab for instructors (menu Nbgrader > Formgrader), course root served
formgrader: setup
	cd grader && $(NBG_ENV) $(abspath $(BIN))/jupyter lab --ServerApp.root_dir=$(abspath .)

## make demo-grading: the whole cycle on the sample submissions of grader/submissions/
demo-grading: setup
	rm -rf grader/submitted grader/autograded grader/feedback grader/gradebook.db
	$(NBGRADER) generate_assignment oublier --force --log-level=WARN
	$(NBG_ENV) $(PY) -m course.labo.soumissions
	$(PY) -c "import sys,pathlib; ids=sorted(p.name for p in pathlib.Path('grader/submitted').iterdir()); pathlib.Path('grader/rapport').mkdir(exist_ok=True); pathlib.Path('grader/rapport/eleves.csv').write_text('id\n' + ''.join(i + '\n' for i in ids))"
	$(NBGRADER) db student import rapport/eleves.csv --log-level=WARN
	$(MAKE) --no-print-directory grade feedback export rapport A=oublier

## make bench-grading: this lab against a trivial one-cell assignment, 30 submissions each
bench-grading: setup
	$(NBG_ENV) $(PY) -m course.labo.bench --submissions 30 --jobs 2
