"""Lesson 7 in the hub's course environment (requirements/hub.txt, as install-course-env.sh
makes it: what a class's kernels run), offline: its shared PostgreSQL starts and every cell runs.
The learner's own environment runs it in every lesson test (conftest.py: `make setup`'s venv)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import REPO
from notebook_text import text_of

# tests/grading's helper modules (exchange_class: the hub's course environment)
sys.path.insert(0, str(REPO / "tests" / "grading"))
from exchange_class import readable_course_env  # noqa: E402

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(1800)]

LESSON = REPO / "solutions" / "lecons" / "07_partager_la_memoire.ipynb"


def test_lesson_7_runs_in_the_hub_s_course_environment(tmp_path: Path, run_notebook):
    python = readable_course_env() / "bin" / "python"
    nb, _seconds = run_notebook(LESSON, tmp_path, python=python)  # any error fails the run
    shown = "\n".join(text_of(nb, cell.id) for cell in nb.cells if cell.cell_type == "code")
    assert "Serveur PostgreSQL démarré en" in shown
    assert "Cellule passée" not in shown and "# demande le serveur PostgreSQL" in LESSON.read_text(
        encoding="utf-8"
    )
