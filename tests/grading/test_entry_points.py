"""Issue 22, point 6: the teacher's commands work from where a teacher stands, on one fresh
clone: the class tools (`python -m grading.<outil>`) from grader/; stock `nbgrader` from
grader/ without activating the venv (its new gradebook is stamped without the `alembic` command).
`make` from the root or from grader/, with the venv activated or not, is shown on the clone
that test_cycle_fresh_clone.py grades (students, grade, export and report each from one of
those places, an unknown target from grader/): one clone graded once for both."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import nbformat
import pytest
from grading.nbgrader_ext.outcome_record import METADATA_KEY
from grading_course import BIN, clone_head, generated_course, submit
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
    # the first command makes the gradebook, which nbgrader stamps by running `alembic`: not on
    # this PATH
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


def _bare_env() -> dict[str, str]:
    """A terminal without the venv activated and without PYTHONPATH: nothing but the course's own
    files can make ``grading`` importable."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PATH": BARE_PATH}


def test_a_class_tool_from_grader(clone):
    grader = clone / "grader"
    report = grader / "rapport" / "notes.csv"
    report.unlink(missing_ok=True)
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:  # the report's class
        gb.update_or_create_assignment("oublier")
        gb.update_or_create_student("ana")
    proc = subprocess.run(
        [str(BIN / "python"), "-m", "grading.rapport"],
        cwd=grader,
        env=_bare_env(),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    _ok(proc)
    with open(report, newline="", encoding="utf-8-sig") as fh:
        assert "ana" in fh.read()
    # elsewhere, `grading` is not importable (students' folders included)
    proc = subprocess.run(
        [str(BIN / "python"), "-c", "import grading"],
        cwd=clone / "notebooks",
        env=_bare_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode != 0 and "No module named 'grading'" in proc.stderr


def test_nbgrader_finds_the_hooks_through_nbgrader_config_alone(tmp_path):
    """The one way `grading` is importable for nbgrader: nbgrader_config.py puts its own folder
    on sys.path. nbgrader puts the folder it runs in on sys.path too, so the line is what counts
    wherever nbgrader runs elsewhere than grader/: formgrader and the hub's instructors (their
    configuration loads the course's, as here), the demo course. Stock autograde, started for
    real from such a folder with no PYTHONPATH and no venv on PATH, runs the course's hooks
    (their record is in the graded copy); the same course without that line cannot load them
    (nothing else provides them)."""
    graded = {}
    for name, keep_line in (("avec", True), ("sans", False)):
        grader = generated_course(tmp_path / name)
        config = grader / "nbgrader_config.py"
        if not keep_line:
            text = config.read_text(encoding="utf-8")
            line = "    sys.path.insert(0, str(HERE))"
            assert line in text
            config.write_text(text.replace(line, "    pass"), encoding="utf-8")
        submit(grader, "ana", "complete")
        elsewhere = tmp_path / name / "ailleurs"
        elsewhere.mkdir()
        (elsewhere / "nbgrader_config.py").write_text(
            f"c = get_config()\nload_subconfig({str(config)!r})\n", encoding="utf-8"
        )
        proc = subprocess.run(
            [str(BIN / "nbgrader"), "autograde", "oublier", "--log-level=INFO"],
            cwd=elsewhere,
            env=_bare_env(),
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )
        graded[name] = (proc, grader / "autograded" / "ana" / "oublier" / "oublier.ipynb")
    proc, copy = graded["avec"]
    _ok(proc)
    record = nbformat.read(copy, as_version=4).metadata[METADATA_KEY]
    assert record["outcome"] == "graded", record
    proc, copy = graded["sans"]
    assert proc.returncode != 0 and not copy.exists()
    assert "No module named 'grading'" in proc.stdout + proc.stderr
