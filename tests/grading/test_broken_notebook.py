"""One broken notebook never stops the class (issue 18, point 3), with real nbgrader runs.

nbgrader ends its whole run on some errors (``SchemaTooOldError`` from a copy-pasted graded cell:
``DeduplicateIds`` empties the twin's metadata, ``CheckCellMetadata`` stops). The TP's notebooks
are rebuilt on the release first, so a copy-pasted answer cell is simply graded; a plain
assignment of the course, which nbgrader grades as it is, still stops nbgrader: the class tool
then names the culprit in French, grades everyone else, exits non-zero, and does not retry the
same unchanged submission for a minute unless asked.
"""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from subprocess import CompletedProcess

import nbformat
import pytest
from grading.autograde import main as autograde
from grading.nbgrader_ext.outcome_record import METADATA_KEY
from grading.runs.known_failures import FILE_NAME
from grading_course import copy_course, generated_course, grading, nbgrader, register, submit
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook
from read_only import changes, freeze, snapshot, thaw
from tool_in_process import in_process

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _plain_assignment(grader: Path) -> Path:
    """solutions/simple: one answer cell and one graded test, graded by stock nbgrader."""
    meta = {"solution": False, "locked": True, "schema_version": 3}
    cells = [
        new_code_cell(
            "### BEGIN SOLUTION\nx = 2\n### END SOLUTION",
            metadata={
                "nbgrader": {
                    **meta,
                    "grade_id": "reponse",
                    "solution": True,
                    "grade": False,
                    "locked": False,
                }
            },
        ),
        new_code_cell(
            "assert x == 2",
            metadata={"nbgrader": {**meta, "grade_id": "test_x", "grade": True, "points": 1}},
        ),
    ]
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    folder = grader.parent / "solutions" / "simple"
    folder.mkdir(parents=True)
    nbformat.write(new_notebook(cells=cells, metadata=kernel), folder / "simple.ipynb")
    assert nbgrader(grader, "generate_assignment", "simple").returncode == 0
    return grader.parent / "notebooks" / "simple" / "simple.ipynb"


def _scores(grader: Path, assignment: str, students: list[str]) -> dict[str, float]:
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        return {s: gb.find_submission(assignment, s).score for s in students}


CLASS = ("ana", "ben", "cyr", "dan")  # ben's answer cell is copy-pasted


@pytest.fixture(scope="module")
def simple_class(tmp_path_factory) -> Path:
    """A course with solutions/simple generated, the class registered as the guide says and its
    submissions in place (ben's answer cell copy-pasted: a new id, the same nbgrader id): built
    once, each test grades its own copy (``_copy``)."""
    grader = copy_course(tmp_path_factory.mktemp("simple") / "cours")
    release = _plain_assignment(grader)
    (grader / "eleves.csv").write_text("id\n" + "".join(f"{s}\n" for s in CLASS))
    registered = nbgrader(grader, "db", "student", "import", "eleves.csv")
    assert registered.returncode == 0, registered.stdout + registered.stderr
    for student in CLASS:
        nb = nbformat.read(release, as_version=4)
        nb.cells[0].source = "x = 2"
        # a grading outcome written by the student: the report would show it as theirs
        nb.metadata[METADATA_KEY] = {"outcome": "=HYPERLINK(1)", "detail": "Noté 10/10"}
        if student == "ben":
            twin = copy.deepcopy(nb.cells[0])
            twin["id"] = "copie"
            nb.cells.insert(1, twin)
        folder = grader / "submitted" / student / "simple"
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / "simple.ipynb")
    return grader


def _copy(grader: Path, dest: Path) -> Path:
    """A copy of the course of `grader` in `dest` (its configuration finds its own root)."""
    shutil.copytree(grader.parent, dest / "cours", symlinks=True)
    return dest / "cours" / "grader"


def test_stock_nbgrader_stops_the_whole_class_at_that_notebook(simple_class, tmp_path):
    """The control: stock nbgrader alone stops the class at ben."""
    grader = _copy(simple_class, tmp_path)
    alone = nbgrader(grader, "autograde", "simple")
    assert alone.returncode != 0 and "old version" in alone.stderr
    assert not (grader / "autograded" / "cyr").exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_notebook_that_stops_nbgrader_is_named_and_the_class_is_graded(
    simple_class, tmp_path, jobs
):
    grader = _copy(simple_class, tmp_path)
    first = grading(grader, "autograde", "simple", "--jobs", jobs)
    out = first.stdout
    assert first.returncode == 1, out + first.stderr
    assert "3 rendu(s) noté(s), 0 déjà noté(s) (laissé(s) tel(s) quel(s)), 1 en échec" in out
    assert "  - ben\u00a0: nbgrader s'est arrêté sur ce rendu" in out
    assert "cellule notée copiée-collée" in out
    assert _scores(grader, "simple", ["ana", "cyr", "dan"]) == {"ana": 1, "cyr": 1, "dan": 1}
    for student in ("ana", "cyr", "dan"):  # the planted outcome never reaches the graded copy
        graded = nbformat.read(grader / "autograded" / student / "simple" / "simple.ipynb", 4)
        assert METADATA_KEY not in graded.metadata
    record = json.loads((grader / FILE_NAME).read_text(encoding="utf-8"))
    assert list(record["simple"]) == ["ben"] and record["simple"]["ben"]["fingerprint"]

    again = in_process(autograde, grader, "simple", "--jobs", jobs)  # within the minute
    assert again.returncode == 1, again.stdout + again.stderr
    assert "0 rendu(s) noté(s), 3 déjà noté(s)" in again.stdout
    assert "  - ben\u00a0: non renoté cette fois\u00a0: sa notation a échoué il y a" in again.stdout
    assert "--reessayer" in again.stdout and "cellule notée copiée-collée" in again.stdout
    log = (grader / "rapport" / "autograde.log").read_text(encoding="utf-8")
    assert "/ben/" not in log  # nbgrader was not asked to grade it again

    forced = in_process(autograde, grader, "simple", "--jobs", jobs, "--reessayer")
    assert forced.returncode == 1
    assert "  - ben\u00a0: nbgrader s'est arrêté sur ce rendu" in forced.stdout

    fixed = grader / "submitted" / "ben" / "simple" / "simple.ipynb"  # ben sends a fixed copy
    nb = nbformat.read(fixed, as_version=4)
    nb.cells.pop(1)
    nbformat.write(nb, fixed)
    retried = in_process(autograde, grader, "simple", "--jobs", jobs)  # changed: graded at once
    assert retried.returncode == 0, retried.stdout + retried.stderr
    assert _scores(grader, "simple", ["ben"]) == {"ben": 1}
    assert json.loads((grader / FILE_NAME).read_text(encoding="utf-8")) == {}


def test_a_copy_pasted_answer_cell_of_the_lab_is_graded_with_the_class(tmp_path):
    """The TP itself: the copy-pasted answer cell no longer reaches DeduplicateIds."""
    grader = generated_course(tmp_path / "cours")
    register(grader, "ana", "ben", "cyr")
    submit(grader, "ana", "complete_vacuum")
    path = submit(grader, "ben", "complete_vacuum") / "oublier.ipynb"
    nb = nbformat.read(path, as_version=4)
    at = next(k for k, c in enumerate(nb.cells) if c.id == "oublier")
    twin = copy.deepcopy(nb.cells[at])
    twin["id"] = "oublier-copie"
    nb.cells.insert(at + 1, twin)
    nbformat.write(nb, path)
    submit(grader, "cyr", "graine")
    proc = grading(grader, "autograde", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "3 rendu(s) noté(s)" in proc.stdout
    assert _scores(grader, "oublier", ["ana", "ben", "cyr"]) == {"ana": 10, "ben": 10, "cyr": 5}


@pytest.fixture(scope="module")
def ana_graded_alone(simple_class, tmp_path_factory) -> Iterator[tuple[Path, CompletedProcess]]:
    """A copy of ``simple_class`` where ana's submission is the only one left (ben's copy stops
    nbgrader), her answer writing bytes that are not UTF-8 to the kernel's standard output and
    error, graded by one ``make grade``: its grader/ folder and that command's result, for the
    two tests below (the same commands, each its own assertions). Frozen once graded
    (read_only): a test that changes it works on a copy (``_copy``)."""
    grader = _copy(simple_class, tmp_path_factory.mktemp("ana-seule"))
    for student in ("ben", "cyr", "dan"):
        shutil.rmtree(grader / "submitted" / student)
    ana = grader / "submitted" / "ana" / "simple" / "simple.ipynb"
    nb = nbformat.read(ana, as_version=4)
    raw = 'os.write(1, b"\\xff\\xfe\\n")\nos.write(2, b"\\xc3(\\n")'
    nb.cells[0].source = f"import os\n{raw}\nx = 2"
    nbformat.write(nb, ana)
    graded = grading(grader, "autograde", "simple")
    folder = grader.parent
    before = snapshot(folder)
    freeze(folder)
    try:
        yield grader, graded
    finally:
        thaw(folder)
    assert changes(before, folder) == [], "a test wrote into the shared class"


def test_an_outcome_left_in_a_copy_graded_before_is_not_in_the_report(ana_graded_alone, tmp_path):
    """Review (attack2): a plain assignment's copies graded before nbgrader dropped a planted
    ``course_grading`` keep it, and ``make grade`` leaves a graded copy as it is: the report
    showed ana's forged outcome and « message donné à l'élève » as the grading's. Only the labs'
    hooks write that record: for any other assignment the report never reads one. (ana alone
    graded: ``ana_graded_alone``.)"""
    shared, graded = ana_graded_alone
    assert graded.returncode == 0, graded.stdout + graded.stderr
    grader = _copy(shared, tmp_path)
    copy = grader / "autograded" / "ana" / "simple" / "simple.ipynb"
    nb = nbformat.read(copy, as_version=4)  # as a copy graded before that fix holds it
    nb.metadata[METADATA_KEY] = {"outcome": "timeout", "detail": "Forgé par ana"}
    nbformat.write(nb, copy)
    report = grading(grader, "rapport", "simple")
    assert report.returncode == 0, report.stdout + report.stderr
    written = [grader / "rapport" / name for name in ("notes.csv", "rapport.html")]
    texts = [path.read_text(encoding="utf-8") for path in written]
    assert "Forgé par ana" not in texts[0] and "Forgé par ana" not in texts[1]
    assert "simple" in texts[1]  # the control: the page is the assignment's


def test_bytes_a_student_writes_to_the_kernels_own_output_never_stop_the_class(ana_graded_alone):
    """A plain assignment is graded by nbgrader's kernel, whose standard output and error are
    nbgrader's, hence the class command's log: an answer that writes bytes that are not UTF-8
    there (``os.write(2, …)``, ana's in ``ana_graded_alone``) must not stop the log's reader, and
    the class is graded."""
    grader, graded = ana_graded_alone
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert "Traceback" not in graded.stdout + graded.stderr
    assert _scores(grader, "simple", ["ana"]) == {"ana": 1}
