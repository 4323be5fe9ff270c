"""Fixtures of the tests of grader/grading (the instructor's side of the TP): sample answers,
course copies with the TP generated, a class graded with a due date, a late, a stub and a
missing submission."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import run_cache
from grading_course import DUE, course_key, generated_course, grading, nbgrader, submit
from read_only import Snapshot, changes, freeze, snapshot, thaw
from run_cache import built_once

# this folder's helper modules (exchange_class.py) import as tests/hub's do
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session", autouse=True)
def run_cache_folder(tmp_path_factory) -> Path:
    """Where the run keeps the generated course and the graded class, for every worker."""
    return run_cache.configure(tmp_path_factory)


@pytest.fixture
def course(tmp_path) -> Path:
    """A fresh course copy with the TP generated into its real gradebook; its grader/ folder."""
    return generated_course(tmp_path / "cours")


@dataclass
class GradedClass:
    """A class graded with the course's tools: ana on time (complete answer), ben late by a day
    and a half (the lesson's seed answer), cyr on time with the stub left as is, dou registered
    but without a submission."""

    grader: Path
    grade_out: str
    feedback_out: str
    report_dir: Path
    export_csv: Path

    def feedback_page(self, student: str) -> Path:
        return self.grader / "feedback" / student / "oublier" / "oublier.html"


CLASS = {
    "ana": ("complete_vacuum", "2025-03-14 17:59:00"),
    "ben": ("graine", "2025-03-16 06:00:00"),
    "cyr": ("ebauche", "2025-03-14 12:00:00"),
}


ROSTER = "id,first_name,last_name\nana,Ana,Martin\nben,Ben,Durand\ncyr,Cyr,Petit\ndou,Dou,Leroy\n"
OUTPUTS = "sorties.json"  # beside the class's cours/: what grade and feedback printed


def _grade_class(folder: Path) -> None:
    """The class graded with the course's tools in `folder`/cours (run_cache builds it)."""
    grader = generated_course(folder / "cours")
    steps: list[Callable[[], subprocess.CompletedProcess]] = [
        lambda: nbgrader(grader, "db", "assignment", "add", "oublier", f"--duedate={DUE}"),
    ]
    for step in steps:
        proc = step()
        assert proc.returncode == 0, proc.stdout + proc.stderr
    (grader / "eleves.csv").write_text(ROSTER)
    proc = nbgrader(grader, "db", "student", "import", "eleves.csv")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for student, (sample, stamp) in CLASS.items():
        submit(grader, student, sample, stamp)
    grade = grading(grader, "autograde", "oublier")
    assert grade.returncode == 0, grade.stdout + grade.stderr
    feedback = grading(grader, "feedback", "oublier")
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    report = nbgrader(
        grader, "export", "--exporter=grading.report.ClassReport", "--assignment=oublier"
    )
    assert report.returncode == 0, report.stdout + report.stderr
    export = nbgrader(grader, "export", "--to=grades.csv")
    assert export.returncode == 0, export.stdout + export.stderr
    outputs = {"grade": grade.stdout, "feedback": feedback.stdout}
    (folder / OUTPUTS).write_text(json.dumps(outputs), encoding="utf-8")


def graded_class_master() -> Path:
    """This run's graded class (run_cache: graded once for every xdist worker, keyed by the
    content of every input and of this file's build); copy it, never write in it."""
    key = course_key(inspect.getsource(_grade_class), repr(CLASS), ROSTER, DUE)
    return built_once("classe-notee", key, _grade_class)


def _class_in(master: Path, dest: Path) -> GradedClass:
    """A copy of the graded class `master` in `dest` (its cours/ folder)."""
    shutil.copytree(master / "cours", dest, symlinks=True)
    outputs = json.loads((master / OUTPUTS).read_text(encoding="utf-8"))
    grader = dest / "grader"
    return GradedClass(
        grader, outputs["grade"], outputs["feedback"], grader / "rapport", grader / "grades.csv"
    )


@pytest.fixture(scope="session")
def shared_graded_class(tmp_path_factory) -> Iterator[tuple[GradedClass, Snapshot]]:
    """This worker's copy of the run's graded class, made read-only (read_only.freeze), with
    what it holds."""
    master = graded_class_master()
    shared = _class_in(master, tmp_path_factory.mktemp("classe-partagee") / "cours")
    folder = shared.grader.parent
    before = snapshot(folder)
    freeze(folder)
    try:
        yield shared, before
    finally:
        thaw(folder)


@pytest.fixture
def graded_class(shared_graded_class) -> Iterator[GradedClass]:
    """The graded class, shared by every test that only reads it: writing into it fails (it is
    immutable, as root too) and a test that changed it anyway fails at teardown, and the class
    is restored for the next test. A test that writes uses ``graded_class_copy``."""
    shared, before = shared_graded_class
    yield shared
    folder = shared.grader.parent
    changed = changes(before, folder)
    if changed:
        thaw(folder)
        shutil.rmtree(folder)
        _class_in(graded_class_master(), folder)
        freeze(folder)
        pytest.fail(
            "this test wrote into the shared graded class (use graded_class_copy): "
            + ", ".join(changed[:20])
        )


@pytest.fixture
def graded_class_copy(tmp_path) -> GradedClass:
    """A private, writable copy of the graded class, for a test that changes it."""
    return _class_in(graded_class_master(), tmp_path / "cours")
