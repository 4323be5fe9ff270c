"""Issue 22, point 6: the teacher's commands work from where a teacher stands, on one fresh
clone: the class tools (`python -m grading.<outil>`) from the root; stock `nbgrader` from
grader/ without activating the venv (its gradebook's `alembic` is found next to nbgrader).
`make` from the root or from grader/, with the venv activated or not, is shown on the clone
that test_cycle_fresh_clone.py grades (students, grade, export and report each from one of
those places, an unknown target from grader/): one clone graded once for both."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from grading_course import BIN, clone_head
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# a PATH without the venv: what a terminal has before `source .venv/bin/activate`
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """One fresh clone for the module."""
    return clone_head(tmp_path_factory.mktemp("depuis") / "cours")


def _ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _students(grader: Path) -> set[str]:
    with sqlite3.connect(grader / "gradebook.db") as db:
        return {row[0] for row in db.execute("SELECT id FROM student")}


def test_stock_nbgrader_from_grader_without_the_venv_activated(clone):
    # the first command makes the gradebook, which runs `alembic`: not on this PATH
    proc = subprocess.run(
        [str(BIN / "nbgrader"), "db", "student", "add", "bea", "--first-name=Béa"],
        cwd=clone / "grader",
        env={**os.environ, "PATH": BARE_PATH, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    _ok(proc)
    assert _students(clone / "grader") == {"bea"}


def test_a_class_tool_from_the_root(clone):
    grader = clone / "grader"
    report = grader / "rapport" / "notes.csv"
    report.unlink(missing_ok=True)
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:  # the report's class
        gb.update_or_create_assignment("oublier")
        gb.update_or_create_student("ana")
    proc = subprocess.run(
        [str(BIN / "python"), "-m", "grading.report"],
        cwd=clone,
        env={**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PATH": BARE_PATH},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    _ok(proc)
    with open(report, newline="", encoding="utf-8-sig") as fh:
        assert "ana" in fh.read()
    # elsewhere than a course root, `grading` is not importable (students' folders included)
    proc = subprocess.run(
        [str(BIN / "python"), "-c", "import grading"],
        cwd=clone / "notebooks",
        env={**os.environ, "PYTHONPATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "No module named 'grading'" in proc.stderr
