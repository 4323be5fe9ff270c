"""Predictions are predictions (issues 21 and 34): nothing a learner reads before a prediction
quiz, anywhere on the path (earlier notebooks included, in the start page's order), states its
answer; a quiz whose answer an earlier lesson gives is a recall quiz, labelled « Rappel ».

The measure is in ``predictions.py``: the share of the right answer's own word pairs (its option
and explanation, less what the question and the wrong options say) already in the text before
the quiz. The controls show that it finds an answer planted earlier (the right option with its
explanation at the very start of the path, or the explanation alone just above the quiz), and
that it finds the real sentences that answered the quizzes issue 34 turned into recall quizzes.
"""

from __future__ import annotations

import copy
import re

import nbformat
import pytest
from notebook_text import NBSP, tags
from parcours import PARCOURS
from predictions import THRESHOLD, build, path_cells, predictions

CELLS = path_cells()
RECALL = f"Rappel{NBSP}: "
# recall quizzes whose answer the path states in its own words (issue 34): tagged back as
# predictions, the check must find them (l4-reste: l3-c05 and l4-c06; l5-wal: l4-c15, word for
# word; l6-wal: l4-c15 and l5-c05; l6-reste: lesson 4; l3-app: l1-c03)
STATED_BEFORE = ("l3-app", "l4-reste", "l5-wal", "l6-wal", "l6-reste")


def quiz_cells(cells=CELLS):
    return [(name, cell) for name, cell in cells if "quiz" in tags(cell)]


def test_the_path_is_every_notebook_in_the_start_pages_order():
    names = list(dict.fromkeys(name for name, _cell in CELLS))
    in_folder = [name for name in names if name != "oublier.ipynb"]
    assert in_folder[1:-1] == PARCOURS.notebooks, "the start page, its table, the glossary"
    assert names.index("oublier.ipynb") == 1 + [s.notebook for s in PARCOURS.steps].index(
        "../oublier/oublier.ipynb"
    ), "the TP where the table puts it"


def test_no_prediction_quiz_is_answered_before_it_is_asked():
    found = predictions(CELLS)
    assert len(found) >= len(PARCOURS.lessons), "at least one prediction per lesson"
    answered = [p for p in found if p.share >= THRESHOLD]
    assert answered == [], [(p.notebook, p.ident, round(p.share, 2), p.found) for p in answered]


@pytest.mark.parametrize("name", [*PARCOURS.lessons, *PARCOURS.after_tp])
def test_every_lesson_keeps_a_prediction_quiz(name: str):
    assert any(n == name and "prediction" in tags(c) for n, c in CELLS), name


def test_recall_quizzes_say_so_and_reveal_nothing():
    for name, cell in quiz_cells():
        quiz = build(cell.source)
        labelled = quiz.question.startswith(RECALL)
        assert labelled == ("rappel" in tags(cell)), f"{name} {cell.id}: « Rappel » and its tag"
        if labelled:
            assert "prediction" not in tags(cell), cell.id
            assert "revele" not in cell.metadata.get("course", {}), cell.id
        else:
            assert not re.match(r"rappel\b", quiz.question, re.I), cell.id


def test_control_an_answer_planted_at_the_start_of_the_path_is_found():
    """The right option and its explanation, put in the start page's first cell."""
    for name, cell in CELLS:
        if "prediction" not in tags(cell):
            continue
        quiz = build(cell.source)
        right = quiz.options[quiz.indice_juste]
        spoiled = copy.deepcopy(CELLS)
        spoiled[0][1].source += f"\n\nÀ savoir : {right.texte}. {right.explication}"
        caught = {p.ident: p.share for p in predictions(spoiled)}
        assert caught[quiz.ident] >= THRESHOLD, (name, quiz.ident, caught[quiz.ident])


def test_control_an_explanation_planted_just_above_its_quiz_is_found():
    for index, (name, cell) in enumerate(CELLS):
        if "prediction" not in tags(cell):
            continue
        quiz = build(cell.source)
        spoiled = copy.deepcopy(CELLS)
        planted = nbformat.v4.new_markdown_cell(quiz.options[quiz.indice_juste].explication)
        spoiled.insert(index, (name, planted))
        caught = {p.ident: p.share for p in predictions(spoiled)}
        assert caught[quiz.ident] >= THRESHOLD, (name, quiz.ident, caught[quiz.ident])


def test_control_the_recall_quizzes_answered_by_the_path_are_caught_as_predictions():
    """Tag the recall quizzes back as predictions: the check finds the earlier text that
    answers them, in the path as it is (no planted sentence)."""
    tagged = copy.deepcopy(CELLS)
    for _name, cell in tagged:
        if "rappel" in tags(cell):
            cell.metadata["tags"] = ["quiz", "prediction"]
    shares = {p.ident: p.share for p in predictions(tagged)}
    assert all(ident in shares for ident in STATED_BEFORE), sorted(shares)
    missed = {ident: shares[ident] for ident in STATED_BEFORE if shares[ident] < THRESHOLD}
    assert missed == {}, missed
