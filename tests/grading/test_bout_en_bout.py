"""End to end, with stock nbgrader commands on a copy of the course, in the sandbox: every sample
gets its expected score, per test, and its grading outcome in the autograded notebook; no feedback
page shows hidden test code or a hidden input; no process of any submission outlives autograde;
the written answer goes through nbgrader's manual grading (gradebook API) into the feedback.
The notebook-level attacks (grader/submissions/carnets: metadata stripped, cell id changed,
answer cell copy-pasted or moved, cells that set the environment or read the gradebook) are graded
in the same single nbgrader run: each scores what it should, and none of their hostile cells ever
ran (no canary file)."""

from __future__ import annotations

import csv
import html
import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from fuites import hidden_leaks
from grading.nbgrader_ext.hidden import HIDDEN
from grading.nbgrader_ext.outcome_record import METADATA_KEY
from grading.samples import build_submission, carnets, write_all, written_answer
from grading_course import generated_course, nbgrader
from helpers import REPO, processes_left, tp_points
from learner_env import learner_env
from nbgrader.api import Gradebook

from course.labo.criteria import TESTS
from course.labo.outcome import OUTCOMES
from course.labo.sandbox import SANDBOX_UIDS
from course.labo.tp_notebook import ANSWER_GRADE_ID

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

HIDDEN_TESTS = [t.id for t in TESTS.values() if not t.visible]
WRITER = "redaction"  # a complete answer with a written procedure, graded by hand
SOLUTION = "solution_enseignant"  # the source notebook's own answer cell, as a submission
PROCEDURE = "Supprimer ses sessions par l'API, puis sa ligne user_states, puis VACUUM."


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory) -> dict:
    """The run's generated course (grading_course.generated_course: nbgrader's
    generate_assignment, run once per run), copied, without the course's feedback template
    (stock nbgrader's page is graded here); then validate, add students, autograde, feedback,
    export."""
    grader = generated_course(tmp_path_factory.mktemp("cours") / "cours")
    root = grader.parent
    shutil.rmtree(grader / "templates")  # nbgrader's own feedback template, as before
    steps = {}
    steps["validate_solution"] = nbgrader(
        grader, "validate", str(root / "solutions" / "oublier" / "oublier.ipynb")
    )
    steps["validate_student"] = nbgrader(
        grader, "validate", str(root / "notebooks" / "oublier" / "oublier.ipynb")
    )
    students = write_all(root, grader / "submitted", canary_dir=root / "canaris")
    nb = nbformat.read(grader / "submitted" / "complete_vacuum" / "oublier" / "oublier.ipynb", 4)
    next(c for c in nb.cells if c.id == "documentation").source = PROCEDURE
    (grader / "submitted" / WRITER / "oublier").mkdir(parents=True)
    nbformat.write(nb, grader / "submitted" / WRITER / "oublier" / "oublier.ipynb")
    students[WRITER] = "complete_vacuum"
    source = nbformat.read(root / "solutions" / "oublier" / "oublier.ipynb", 4)
    answer = next(c for c in source.cells if c.id == "oublier").source
    (grader / "submitted" / SOLUTION / "oublier").mkdir(parents=True)
    nbformat.write(
        build_submission(root / "notebooks" / "oublier" / "oublier.ipynb", answer),
        grader / "submitted" / SOLUTION / "oublier" / "oublier.ipynb",
    )
    students[SOLUTION] = "complete_vacuum"
    first, *others = sorted(students)
    added = nbgrader(grader, "db", "student", "add", first, "--last-name=Exemple")
    assert added.returncode == 0, added.stderr
    # the rest in one stock command (each CLI start costs seconds)
    (grader / "eleves.csv").write_text("id,last_name\n" + "".join(f"{s},Exemple\n" for s in others))
    imported = nbgrader(grader, "db", "student", "import", "eleves.csv")
    assert imported.returncode == 0, imported.stderr
    # graded with what the instructor installs (`make setup`: the lab set and the course)
    steps["autograde"] = nbgrader(grader, "autograde", "oublier", bin_dir=learner_env().bin)
    steps["left_after_autograde"] = _submission_processes()
    # the written answer: left to grade by autograde, then graded by hand (nbgrader's API)
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        steps["to_grade_by_hand"] = {
            student: gb.find_grade(
                "documentation", "oublier", "oublier", student
            ).needs_manual_grade
            for student in students
        }
        grade = gb.find_grade("documentation", "oublier", "oublier", WRITER)
        grade.manual_score = 1.5
        gb.db.commit()
    steps["feedback"] = nbgrader(grader, "generate_feedback", "oublier")
    steps["export"] = nbgrader(grader, "export")
    for name in ("autograde", "feedback", "export"):
        assert steps[name].returncode == 0, steps[name].stderr[-3000:]
    return {"root": root, "steps": steps, "students": students}


def _submission_processes() -> list[str]:
    """Processes of a submission still alive: the sandbox's uids (grading as root), or the
    detached sleep of evasion_processus_detache."""
    return processes_left(lambda uid, cmd: uid in SANDBOX_UIDS or "sleep 864001" in cmd)


def test_student_version_is_the_committed_one(graded_course):
    generated = graded_course["root"] / "notebooks" / "oublier" / "oublier.ipynb"
    assert generated.read_bytes() == (REPO / "notebooks" / "oublier" / "oublier.ipynb").read_bytes()


def test_student_version_has_stub_and_no_hidden_test(graded_course):
    nb = nbformat.read(graded_course["root"] / "notebooks" / "oublier" / "oublier.ipynb", 4)
    text = "\n".join(c.source for c in nb.cells)
    assert "raise NotImplementedError()" in text and "# VOTRE CODE ICI" in text
    assert "HIDDEN" not in text and "BEGIN SOLUTION" not in text
    for tid in HIDDEN_TESTS:
        assert f'"{tid}"' not in text


def test_validate_fails_hidden_tests_in_a_kernel_and_on_the_student_version(graded_course):
    """nbgrader validate runs notebooks in a kernel, where a hidden test never passes (only the
    grading hooks compute it, out of the kernel): the solution fails there on its hidden tests
    alone; its answer, graded as a submission, gets 10/10 (test_the_instructor_s_solution_...)."""
    steps = graded_course["steps"]
    solution = steps["validate_solution"].stdout
    assert "VALIDATION FAILED" in solution and "Test caché" in solution
    assert "user_states de l'élève existe encore" not in solution  # the visible tests pass
    for tid in ("sessions", "user_states", "autres"):  # only hidden test cells failed
        assert f'noter(oublier, "{tid}")' not in solution
    student = steps["validate_student"].stdout
    assert "VALIDATION FAILED" in student and "NotImplementedError" in student


def test_the_instructor_s_solution_gets_every_point(graded_course):
    with open(graded_course["root"] / "grader" / "grades.csv", newline="") as fh:
        grades = {row["student_id"]: float(row["score"]) for row in csv.DictReader(fh)}
    assert grades[SOLUTION] == FULL


def test_every_sample_gets_its_expected_score(graded_course, expected_scores):
    grades = {}
    with open(graded_course["root"] / "grader" / "grades.csv", newline="") as fh:
        for row in csv.DictReader(fh):
            grades[row["student_id"]] = float(row["score"])
    assert len(grades) >= 12
    assert grades[WRITER] == FULL + 1.5  # the tests' points and the written answer's 1.5
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
                g.name.removeprefix("test_")
                for g in nb.grades
                if g.score < g.max_score and g.name != "documentation"
            )
    want = {
        s: sorted(TESTS) if e["echecs"] == "tous" else sorted(e["echecs"])
        for s, e in expected_scores.items()
    }
    assert failed == want


def _feedback_text(path: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))


def test_feedback_never_shows_hidden_tests(graded_course):
    pages = sorted((graded_course["root"] / "grader" / "feedback").glob("*/oublier/*.html"))
    assert len(pages) == len(graded_course["students"])
    hidden_inputs = {HIDDEN.learner, HIDDEN.quoted, HIDDEN.unknown, "Girard", "artagnan"}
    leaks = hidden_leaks()
    for page in pages:
        text = _feedback_text(page)
        assert 'noter(oublier, "sessions")' in text  # visible test code is there...
        for tid in HIDDEN_TESTS:  # ...hidden test code never is
            assert f'noter(oublier, "{tid}")' not in text, page
        assert "HIDDEN TESTS" not in text and "course/labo" not in text, page
        for word in hidden_inputs:  # nor any hidden input, even in a student's error
            assert word not in text, (page, word)
        # every hidden value, a sandbox uid, a grading folder: not even in a class name that a
        # hostile sample (fuite_*) builds from what it saw
        assert leaks(text) == [], page


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


def test_each_autograded_notebook_says_how_its_grading_went(graded_course):
    """``course_grading`` in the autograded notebook's metadata, for the class report."""
    outcomes = {}
    for student in graded_course["students"]:
        path = graded_course["root"] / "grader" / "autograded" / student / "oublier"
        record = nbformat.read(path / "oublier.ipynb", 4).metadata[METADATA_KEY]
        assert set(record) == {"outcome", "detail"} and record["outcome"] in OUTCOMES
        assert record["detail"], student
        outcomes[student] = record["outcome"]
    assert outcomes["complete_vacuum"] == outcomes["graine"] == "graded"
    assert outcomes["ebauche"] == "not_written"
    assert outcomes["boucle_infinie"] == outcomes["sommeil"] == "timeout"
    assert outcomes["evasion_memoire"] == outcomes["evasion_processus"] == "graded"


def test_no_hostile_cell_of_a_notebook_ran_outside_the_sandbox(graded_course):
    """Every carnet is graded (one nbgrader run for the whole class: a copy-pasted cell no longer
    stops it) and no cell it added or changed ever ran: no canary was written."""
    carnet_names = set(carnets(REPO))
    assert len(carnet_names) >= 8 and carnet_names <= set(graded_course["students"])
    canaries = graded_course["root"] / "canaris"
    assert canaries.is_dir() and list(canaries.iterdir()) == []


def test_where_the_answer_was_found_is_said_in_french(graded_course):
    def detail(student: str) -> str:
        path = graded_course["root"] / "grader" / "autograded" / student / "oublier"
        return nbformat.read(path / "oublier.ipynb", 4).metadata[METADATA_KEY]["detail"]

    assert detail("carnet_sans_reponse").startswith("Aucune cellule du rendu ne définit oublier")
    assert "la dernière (cellule 22) est notée" in detail("carnet_reponse_deplacee")
    assert "la dernière (cellule 7) est notée" in detail("carnet_cellule_dupliquee")
    assert "hors de la cellule prévue" in detail("carnet_id_change")
    assert "cellule" not in detail("complete_vacuum").split("Noté")[0]


def test_graded_notebooks_are_the_release_with_the_student_s_answers(graded_course):
    """Cells the student added are gone, the instructor's are back, ids are the release's."""
    release = nbformat.read(graded_course["root"] / "notebooks" / "oublier" / "oublier.ipynb", 4)
    for student in graded_course["students"]:
        path = graded_course["root"] / "grader" / "autograded" / student / "oublier"
        nb = nbformat.read(path / "oublier.ipynb", 4)
        assert [c.id for c in nb.cells] == [c.id for c in release.cells], student
        for cell, ref in zip(nb.cells, release.cells, strict=True):
            if ref.id not in ("oublier", "documentation") and "HIDDEN" not in cell.source:
                assert cell.source == ref.source, (student, ref.id)


def test_no_process_of_a_submission_outlives_autograde(graded_course):
    assert graded_course["steps"]["left_after_autograde"] == []


def test_the_written_answer_is_graded_by_hand_and_shown_in_feedback(graded_course):
    # autograde leaves the written answer to the instructor; nbgrader gives 0 itself to an
    # answer left as the release's stub (every sample but WRITER and those with a <sample>.md)
    to_grade = graded_course["steps"]["to_grade_by_hand"]
    root = graded_course["root"]
    assert to_grade == {
        student: student == WRITER or written_answer(root, sample) is not None
        for student, sample in graded_course["students"].items()
    }
    text = _feedback_text(
        graded_course["root"] / "grader" / "feedback" / WRITER / "oublier" / "oublier.html"
    )
    assert PROCEDURE in text
    assert re.search(r"Score:\s*1\.5\s*/\s*2", text), re.findall(r"Score:[^\n]*", text)
    assert re.search(r"Score:\s*11\.5\s*/\s*12", text)


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
        c for c in essai.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER_GRADE_ID
    )
    assert "await oublier(None" in cell.source  # the student's own code is kept for feedback


def test_loops_do_not_delay_grading_beyond_their_time_limit(graded_course):
    log = graded_course["steps"]["autograde"].stderr
    seconds = [float(s) for s in re.findall(r"points hors du noyau en ([\d.]+) s", log)]
    assert len(seconds) == len(graded_course["students"])
    from course.labo.evaluate import DEFAULT_TIMEOUT

    assert max(seconds) < DEFAULT_TIMEOUT + 15
    assert json.dumps(seconds)
