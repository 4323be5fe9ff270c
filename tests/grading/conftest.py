"""Fixtures of the tests of grader/grading (the instructor's side of the TP): sample answers,
course copies with the TP generated, a class graded with a due date, a late, a stub and a
missing submission."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from grading_course import DUE, generated_course, grading, nbgrader, submit

# this folder's helper modules (exchange_class.py) import as tests/hub's do
sys.path.insert(0, str(Path(__file__).parent))


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


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory) -> GradedClass:
    grader = generated_course(tmp_path_factory.mktemp("classe") / "cours")
    steps: list[Callable[[], subprocess.CompletedProcess]] = [
        lambda: nbgrader(grader, "db", "assignment", "add", "oublier", f"--duedate={DUE}"),
    ]
    for step in steps:
        proc = step()
        assert proc.returncode == 0, proc.stdout + proc.stderr
    (grader / "eleves.csv").write_text(
        "id,first_name,last_name\nana,Ana,Martin\nben,Ben,Durand\ncyr,Cyr,Petit\ndou,Dou,Leroy\n"
    )
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
    return GradedClass(
        grader, grade.stdout, feedback.stdout, grader / "rapport", grader / "grades.csv"
    )
