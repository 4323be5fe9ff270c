# Grading targets, included by the top Makefile (`-include grader/grader.mk`).
# Run them from the repository root (make ...); nbgrader itself runs in grader/, where it finds
# nbgrader_config.py (the course root is computed from that file).
# nbgrader reads nbgrader_config.py from the folder it runs in: grader/.
NBGRADER := cd grader && PATH="$(abspath $(BIN)):$$PATH" $(abspath $(BIN))/nbgrader
ASSIGNMENTS := $(notdir $(patsubst %/,%,$(wildcard solutions/*/)))

.PHONY: notebooks

## make notebooks: regenerate ALL of notebooks/ from solutions/ with stock nbgrader (no outputs,
## stable cell ids); a throw-away gradebook so none is left in the repository.
notebooks: setup
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	for a in $(ASSIGNMENTS); do \
	  $(NBGRADER) generate_assignment "$$a" --force \
	    --CourseDirectory.db_url="sqlite:///$$tmp/gradebook.db" --log-level=WARN; \
	done
