"""No graded answer in anything a learner reads before the due date (issue 34), for both TPs
(`oublier` and `oublier_partage`), compared as code: every code cell and every fenced block of
the Markdown (folded in ``<details>`` or not) of every student notebook and every lesson source,
against the instructor's solutions and every sample that scores full marks (graded_code.py).

test_sans_corrige.py reads the SQL a notebook builds for the first TP; this one compares the
code itself, for both TPs, so that a folded « Solution » pasted as is is found whatever it holds.
"""

from __future__ import annotations

import copy

import nbformat
import pytest
from graded_code import SHINGLE, THRESHOLD, graded_answers, reproduced, shingles
from helpers import REPO

ANSWERS = graded_answers()
# what a learner reads: the student version of everything, and the lessons' sources (their own
# exercises' solutions are not graded); only the TPs' instructor notebooks hold the answers
READ = sorted((REPO / "notebooks").rglob("*.ipynb")) + sorted(
    (REPO / "solutions" / "lecons").glob("*.ipynb")
)


def read(path):
    return nbformat.read(path, as_version=4)


def worst(nb) -> tuple[float, str]:
    return max((reproduced(answer, nb), answer.origin) for answer in ANSWERS)


def test_the_graded_answers_of_both_tps_are_read():
    by_assignment = {a.assignment for a in ANSWERS}
    assert by_assignment == {"oublier", "oublier_partage"}
    for assignment in by_assignment:
        origins = [a.origin for a in ANSWERS if a.assignment == assignment]
        assert len(origins) >= 2, origins  # the solution cell and a full-marks sample
    assert all(len(shingles(a.code)) >= 2 * SHINGLE for a in ANSWERS), "each answer is code"
    assert len(READ) >= 10 and any(p.parent.name == "oublier_partage" for p in READ)


@pytest.mark.parametrize("path", READ, ids=lambda p: str(p.relative_to(REPO)))
def test_no_notebook_a_learner_reads_reproduces_a_graded_answer(path):
    share, origin = worst(read(path))
    assert share < THRESHOLD, f"{path.relative_to(REPO)} reproduit {origin} à {share:.0%}"


def lesson_with(*sources: str, where: str = "details"):
    """Lesson 1 with ``sources`` added: in a folded « Solution », or as code cells."""
    nb = read(REPO / "solutions" / "lecons" / "01_choisir_un_service.ipynb")
    for source in sources:
        if where == "details":
            fold = (
                f"<details>\n<summary>Solution</summary>\n\n```python\n{source}\n```\n\n</details>"
            )
            nb.cells.insert(5, nbformat.v4.new_markdown_cell(fold))
        else:
            nb.cells.insert(5, nbformat.v4.new_code_cell(source))
    return nb


@pytest.mark.parametrize("assignment", ["oublier", "oublier_partage"])
def test_control_a_solution_pasted_in_a_fold_or_a_cell_is_found(assignment):
    answer = next(a for a in ANSWERS if a.assignment == assignment)
    assert worst(lesson_with(answer.code))[0] >= THRESHOLD  # the fold of l7-c32, issue 34
    assert worst(lesson_with(answer.code, where="cell"))[0] >= THRESHOLD
    lines = answer.code.splitlines()
    half = len(lines) // 2
    split = lesson_with("\n".join(lines[:half]), "\n".join(lines[half:]), where="cell")
    assert worst(split)[0] >= THRESHOLD, "an answer split over two cells"


def test_control_renamed_variables_do_not_hide_an_answer():
    answer = next(a for a in ANSWERS if a.assignment == "oublier")
    renamed = answer.code.replace("conn", "c").replace("reponse", "r").replace("session", "s")
    assert renamed != answer.code
    assert worst(lesson_with(renamed))[0] >= THRESHOLD


def test_control_the_instructors_tp_holds_its_answer_and_the_students_does_not():
    for assignment in ("oublier", "oublier_partage"):
        teacher = read(REPO / "solutions" / assignment / f"{assignment}.ipynb")
        student = read(REPO / "notebooks" / assignment / f"{assignment}.ipynb")
        assert worst(teacher)[0] == 1.0, assignment
        assert worst(student)[0] < THRESHOLD, assignment
        spoiled = copy.deepcopy(student)
        solution = next(a for a in ANSWERS if a.assignment == assignment)
        spoiled.cells.append(nbformat.v4.new_markdown_cell(f"```python\n{solution.code}```"))
        assert worst(spoiled)[0] >= THRESHOLD, assignment
