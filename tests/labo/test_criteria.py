"""One structure per criterion: the statement's table, the notebook's graded cells and the
verdicts all come from ``course.labo.criteria.CRITERIA``."""

from __future__ import annotations

import re

import nbformat
import pytest
from helpers import REPO

from course.labo.criteria import CRITERIA, TESTS, grade_titles, statement_table


@pytest.fixture(scope="module")
def solution() -> nbformat.NotebookNode:
    return nbformat.read(REPO / "solutions" / "oublier" / "oublier.ipynb", as_version=4)


def _grade_cells(nb) -> dict[str, dict]:
    return {
        c.metadata["nbgrader"]["grade_id"]: c
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }


def test_statement_table_is_the_criteria(solution):
    statement = next(c for c in solution.cells if c.id == "enonce").source
    rows = re.findall(r"^\| (\d\..*?) \| (\d+) \| (\d+) \|$", statement, re.M)
    assert [(title.replace("`", ""), int(p), int(v)) for title, p, v in rows] == statement_table()
    assert "| Documentation de la procédure (notée à la main) | 2 | — |" in statement


def test_every_test_is_a_grade_cell_worth_its_points(solution):
    cells = _grade_cells(solution)
    code = {gid: c for gid, c in cells.items() if c.cell_type == "code"}
    assert set(code) == {t.grade_id for t in TESTS.values()}
    for test in TESTS.values():
        cell = code[test.grade_id]
        assert cell.metadata["nbgrader"]["points"] == test.points
        assert f'noter(oublier, "{test.id}")' in cell.source
        assert ("### BEGIN HIDDEN TESTS" in cell.source) is (not test.visible)
    assert sum(t.points for t in TESTS.values()) == sum(c.points for c in CRITERIA)


def test_the_written_answer_is_graded_by_hand(solution):
    cells = _grade_cells(solution)
    answer = cells["documentation"]
    meta = answer.metadata["nbgrader"]
    assert answer.cell_type == "markdown" and meta["solution"] and meta["points"] == 2
    assert "Barème pour le correcteur" in answer.source  # the instructor's version only
    release = nbformat.read(REPO / "notebooks" / "oublier" / "oublier.ipynb", as_version=4)
    student = next(c for c in release.cells if c.id == "documentation")
    assert student.source == "VOTRE RÉPONSE ICI"


def test_every_criterion_has_a_hidden_test_and_a_title_per_grade_cell():
    for criterion in CRITERIA:
        assert any(not t.visible for t in criterion.tests), criterion.key
    titles = grade_titles()
    assert set(titles) == {t.grade_id for t in TESTS.values()}
    assert titles["test_user_states_cache"] == "Sa ligne user_states (l'état user:) a disparu"
    assert [c.number for c in CRITERIA] == list(range(1, 8))
