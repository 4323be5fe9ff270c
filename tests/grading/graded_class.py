"""The class graded with the course's tools that many grading tests read (tests/grading): built
once per run for every xdist worker (run_cache), copied read-only for readers and writable for
writers, and put back as it was when a test changed it anyway.

It stays apart from test_bout_en_bout's ``graded_course``: that class is graded by stock nbgrader
commands (``autograde``, ``generate_feedback``, nbgrader's own feedback page) with every sample
and notebook attack and no due date; this one by the course's tools (``grading.autograde``,
``grading.feedback``'s French page, the class report) with a due date and a late submission.
One class graded both ways would show neither: the second grading would overwrite the first.
Both start from the run's one generated course (grading_course.generated_course)."""

from __future__ import annotations

import inspect
import json
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grading_course import DUE, course_key, generated_course, grading, nbgrader, submit
from read_only import Snapshot, changes, freeze, thaw
from run_cache import built_once

__all__ = ["CLASS", "ROSTER", "GradedClass", "class_in", "master", "put_back"]


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
OUTPUTS = "outputs.json"  # beside the class's cours/: what grading and feedback printed


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


def master() -> Path:
    """This run's graded class (graded once for every xdist worker, keyed by the content of
    every input and of this build); copy it (``class_in``), never write in it."""
    key = course_key(*map(inspect.getsource, (_grade_class, submit)), repr(CLASS), ROSTER, DUE)
    return built_once("classe-notee", key, _grade_class)


def class_in(dest: Path) -> GradedClass:
    """A writable copy of the run's graded class in `dest` (its course folder)."""
    source = master()
    shutil.copytree(source / "cours", dest, symlinks=True)
    outputs = json.loads((source / OUTPUTS).read_text(encoding="utf-8"))
    grader = dest / "grader"
    return GradedClass(
        grader, outputs["grade"], outputs["feedback"], grader / "rapport", grader / "grades.csv"
    )


def put_back(shared: GradedClass, before: Snapshot) -> list[str]:
    """What a test changed in the shared class (its course folder held `before`), undone: the
    folder copied again and frozen again if it was. Empty when nothing changed."""
    folder = shared.grader.parent
    changed = changes(before, folder)
    if changed:
        thaw(folder)
        shutil.rmtree(folder)
        class_in(folder)
        freeze(folder)
    return changed
