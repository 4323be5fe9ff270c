"""Issue 22, point 6: the teacher's commands work from where a teacher stands, on one fresh
clone: `make` from the root or from grader/, with the venv activated or not; the class tools
(`python -m grading.<outil>`) from the root; stock `nbgrader` from grader/ without activating
the venv (its gradebook's `alembic` is found next to nbgrader)."""

from __future__ import annotations

import csv
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from grading_course import BIN, VENV, clone_head, make, submit
from helpers import tp_points

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

# a PATH without the venv: what a terminal has before `source .venv/bin/activate`
BARE_PATH = "/usr/local/bin:/usr/bin:/bin"
ACTIVATED = {"VIRTUAL_ENV": str(VENV), "PATH": f"{BIN}{os.pathsep}{BARE_PATH}"}


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """One fresh clone for the module, with one submission waiting to be graded."""
    clone = clone_head(tmp_path_factory.mktemp("depuis") / "cours")
    submit(clone / "grader", "ana", "complete_vacuum")
    return clone


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


def test_make_from_grader_and_from_the_root_activated_or_not(clone):
    grader = clone / "grader"
    (grader / "eleves.csv").write_text("identifiant;prénom\nana;Ana\nbea;Béa\n", encoding="utf-8")
    # from grader/, a path relative to grader/ (where the teacher stands), venv not activated
    _ok(make(clone, "students", "ELEVES=eleves.csv", folder="grader"))
    assert _students(grader) == {"ana", "bea"}
    out = _ok(make(clone, "grade", folder="grader"))
    assert "1 rendu(s) noté(s)" in out
    # from grader/ with the venv activated, and from the root activated
    _ok(make(clone, "export", folder="grader", extra_env=ACTIVATED))
    with open(grader / "rapport" / "grades.csv", newline="", encoding="utf-8") as fh:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(fh)}
    assert scores == {"ana": FULL, "bea": 0.0}
    _ok(make(clone, "rapport", extra_env=ACTIVATED))
    assert (grader / "rapport" / "rapport.html").is_file()
    # an unknown target from grader/ is make's own error, from the root Makefile
    proc = make(clone, "pas-une-cible", folder="grader")
    assert proc.returncode != 0 and "pas-une-cible" in proc.stderr


def test_a_class_tool_from_the_root(clone):
    grader = clone / "grader"
    report = grader / "rapport" / "notes.csv"
    report.unlink(missing_ok=True)
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
