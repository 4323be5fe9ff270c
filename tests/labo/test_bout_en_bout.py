"""End to end, with stock nbgrader commands on a copy of the course: every sample gets its
expected score, per test, and no feedback page shows hidden test code."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from grading.samples import write_all
from nbgrader.api import Gradebook

from course.labo import TESTS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

HIDDEN_TESTS = [t.id for t in TESTS.values() if not t.visible]


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory, repo_root: Path, run_nbgrader) -> dict:
    """Copy the course, then generate, validate, add students, autograde, feedback, export."""
    root = tmp_path_factory.mktemp("cours")
    shutil.copytree(repo_root / "solutions" / "oublier", root / "solutions" / "oublier")
    (root / "grader").mkdir()
    shutil.copy(repo_root / "grader" / "nbgrader_config.py", root / "grader")
    shutil.copytree(repo_root / "grader" / "submissions", root / "grader" / "submissions")
    grader = root / "grader"
    steps = {}
    steps["generate"] = run_nbgrader(grader, "generate_assignment", "oublier")
    assert steps["generate"].returncode == 0, steps["generate"].stderr
    steps["validate_solution"] = run_nbgrader(
        grader, "validate", str(root / "solutions" / "oublier" / "oublier.ipynb")
    )
    steps["validate_student"] = run_nbgrader(
        grader, "validate", str(root / "notebooks" / "oublier" / "oublier.ipynb")
    )
    students = write_all(root, grader / "submitted")
    first, *others = sorted(students)
    added = run_nbgrader(grader, "db", "student", "add", first, "--last-name=Exemple")
    assert added.returncode == 0, added.stderr
    # the rest in one stock command (each CLI start costs seconds)
    (grader / "eleves.csv").write_text("id,last_name\n" + "".join(f"{s},Exemple\n" for s in others))
    imported = run_nbgrader(grader, "db", "student", "import", "eleves.csv")
    assert imported.returncode == 0, imported.stderr
    steps["autograde"] = run_nbgrader(grader, "autograde", "oublier")
    steps["feedback"] = run_nbgrader(grader, "generate_feedback", "oublier")
    steps["export"] = run_nbgrader(grader, "export")
    for name in ("autograde", "feedback", "export"):
        assert steps[name].returncode == 0, steps[name].stderr[-3000:]
    return {"root": root, "steps": steps, "students": students}


def test_student_version_is_the_committed_one(graded_course, repo_root):
    generated = graded_course["root"] / "notebooks" / "oublier" / "oublier.ipynb"
    assert (
        generated.read_bytes()
        == (repo_root / "notebooks" / "oublier" / "oublier.ipynb").read_bytes()
    )


def test_student_version_has_stub_and_no_hidden_test(graded_course):
    nb = nbformat.read(graded_course["root"] / "notebooks" / "oublier" / "oublier.ipynb", 4)
    text = "\n".join(c.source for c in nb.cells)
    assert "raise NotImplementedError()" in text and "# VOTRE CODE ICI" in text
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text
    for tid in HIDDEN_TESTS:
        assert f'"{tid}"' not in text


def test_validate_passes_on_solution_and_fails_on_student_version(graded_course):
    steps = graded_course["steps"]
    assert "Success! Your notebook passes all the tests." in steps["validate_solution"].stdout
    student = steps["validate_student"].stdout
    assert "VALIDATION FAILED" in student and "NotImplementedError" in student


def test_every_sample_gets_its_expected_score(graded_course, expected_scores):
    grades = {}
    with open(graded_course["root"] / "grader" / "grades.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            grades[row["student_id"]] = float(row["score"])
    assert len(grades) >= 12
    assert {s: grades[s] for s in expected_scores} == {
        s: float(e["score"]) for s, e in expected_scores.items()
    }


def test_every_sample_fails_exactly_the_expected_tests(graded_course, expected_scores):
    db = graded_course["root"] / "grader" / "gradebook.db"
    failed = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        for student in expected_scores:
            nb = gb.find_submission("oublier", student).notebooks[0]
            failed[student] = sorted(
                g.name.removeprefix("test_") for g in nb.grades if g.score < g.max_score
            )
    want = {
        s: sorted(TESTS) if e["echecs"] == "tous" else sorted(e["echecs"])
        for s, e in expected_scores.items()
    }
    assert failed == want


def _feedback_text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def test_feedback_never_shows_hidden_tests(graded_course, repo_root):
    pages = sorted((graded_course["root"] / "grader" / "feedback").glob("*/oublier/*.html"))
    assert len(pages) == len(graded_course["students"])
    for page in pages:
        text = _feedback_text(page)
        assert 'noter(oublier, "sessions")' in text  # visible test code is there...
        for tid in HIDDEN_TESTS:  # ...hidden test code never is
            assert f'noter(oublier, "{tid}")' not in text, page
        assert "HIDDEN TESTS" not in text and "course/labo" not in text, page


def test_feedback_explains_in_french_what_is_missing(graded_course):
    text = _feedback_text(
        graded_course["root"] / "grader" / "feedback" / "graine" / "oublier" / "oublier.html"
    )
    assert "la ligne user_states de l'élève existe encore" in text
    loop = _feedback_text(
        graded_course["root"]
        / "grader"
        / "feedback"
        / "boucle_infinie"
        / "oublier"
        / "oublier.html"
    )
    assert "n'a pas terminé en" in loop


def test_no_cell_ever_times_out_in_the_kernel(graded_course):
    """Student cells never run in the kernel during autograde: even a top-level await that
    never ends (essai_bloquant) costs no kernel timeout."""
    autograded = sorted((graded_course["root"] / "grader" / "autograded").glob("*/oublier/*.ipynb"))
    assert len(autograded) == len(graded_course["students"])
    for path in autograded:
        nb = nbformat.read(path, 4)
        for cell in nb.cells:
            for out in cell.get("outputs", []):
                assert out.get("ename") != "CellTimeoutError", path
    essai = nbformat.read(
        graded_course["root"]
        / "grader"
        / "autograded"
        / "essai_bloquant"
        / "oublier"
        / "oublier.ipynb",
        4,
    )
    cell = next(
        c for c in essai.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "oublier"
    )
    assert "await oublier(None" in cell.source  # the student's own code is kept for feedback


def test_loops_do_not_delay_grading_beyond_their_time_limit(graded_course):
    log = graded_course["steps"]["autograde"].stderr
    seconds = [float(s) for s in re.findall(r"points hors du noyau en ([\d.]+) s", log)]
    assert len(seconds) == len(graded_course["students"])
    from course.labo import DEFAULT_TIMEOUT

    assert max(seconds) < DEFAULT_TIMEOUT + 15
    assert json.dumps(seconds)
