"""The course's quizzes as a whole: answers not guessable from place or length, prediction
quizzes before the cell that reveals their answer, the topics the course must ask about."""

from __future__ import annotations

import collections

import nbformat
import pytest
from helpers import REPO
from notebook_text import tags
from parcours import PARCOURS

from course import quiz as q

SOLUTIONS = REPO / "solutions" / "lecons"
NOTEBOOKS = sorted(SOLUTIONS.glob("*.ipynb"))
LESSONS = [p for p in NOTEBOOKS if p.name[:2].isdigit()]  # 00 to 06; not the glossary
MAX_SHARE_PER_POSITION = 0.40
WEAK_DISTRACTORS = (  # replaced by mistakes learners really make (issue 11)
    "Le modèle de langage et ses paramètres",
    "c'est le plus rapide",
    "SELECT outil FROM events",
    "impossible en SQL",
    "ne contiennent que des dates",
    "f-strings sont interdites",
)


def course_quizzes() -> list[tuple[str, nbformat.NotebookNode, q.Quiz]]:
    """Every quiz of the course, built from its cell's source as the kernel builds it."""
    found = []
    q.reset()
    try:
        for path in NOTEBOOKS:
            for cell in nbformat.read(path, as_version=4).cells:
                if "quiz" in tags(cell):
                    quiz = eval(cell.source, {"Quiz": q.Quiz, "Option": q.Option})  # noqa: S307
                    found.append((path.name, cell, quiz))
    finally:
        q.reset()
    return found


@pytest.fixture(scope="module")
def quizzes():
    return course_quizzes()


def test_no_position_holds_more_than_40_percent_of_the_right_answers(quizzes):
    by_size = collections.defaultdict(collections.Counter)
    for _name, _cell, quiz in quizzes:
        by_size[len(quiz.options)][quiz.position_juste] += 1
    total = collections.Counter()
    for counts in by_size.values():
        total.update(counts)
    assert len(quizzes) >= 30
    share = {pos: n / len(quizzes) for pos, n in total.items()}
    assert max(share.values()) <= MAX_SHARE_PER_POSITION, share
    assert len(total) == max(len(z.options) for _n, _c, z in quizzes), "every place is used"


def test_the_right_answer_is_the_longest_option_in_at_most_half(quizzes):
    longest = [
        f"{name} {cell.id}"
        for name, cell, quiz in quizzes
        if len(quiz.options[quiz.indice_juste].texte) == max(len(o.texte) for o in quiz.options)
    ]
    assert len(longest) <= len(quizzes) / 2, longest


def test_quiz_keys_are_unique_and_stable(quizzes):
    idents = [quiz.ident for _n, cell, quiz in quizzes]
    assert len(set(idents)) == len(idents)
    assert all("ident=" in cell.source for _n, cell, _q in quizzes), "an explicit, stable key"


def test_every_lesson_has_a_prediction_quiz_before_the_cell_that_reveals_it():
    for path in LESSONS:
        cells = nbformat.read(path, as_version=4).cells
        index = {c.id: i for i, c in enumerate(cells)}
        predictions = [c for c in cells if "prediction" in tags(c)]
        # an appendix replays known steps: its quizzes are recall quizzes (test_predictions.py)
        assert predictions or path.name in PARCOURS.appendices, f"{path.name}: no prediction"
        for cell in predictions:
            assert "quiz" in tags(cell), cell.id
            reveal = cell.metadata.get("course", {}).get("revele")
            assert reveal in index, f"{path.name} {cell.id}: reveal cell {reveal!r} not found"
            shown = cells[index[reveal]]
            assert shown.cell_type == "code" and "quiz" not in tags(shown), reveal
            assert index[cell.id] < index[reveal], f"{cell.id} comes after {reveal}"
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if "revele" in cell.metadata.get("course", {}):
                assert "prediction" in tags(cell), f"{path.name} {cell.id}"


def test_the_course_asks_about_app_scope_checkpoint_and_secure_delete(quizzes):
    def asked(word: str) -> list[str]:
        return [
            quiz.ident
            for _n, _c, quiz in quizzes
            if word in quiz.question or any(word in o.texte for o in quiz.options)
        ]

    assert asked("app:"), "a quiz on the app: scope"
    assert asked("checkpoint"), "a quiz on the -wal checkpoint"
    secure = asked("secure_delete")
    assert secure
    explained = " ".join(
        o.explication for _n, _c, z in quizzes if z.ident in secure for o in z.options
    )
    assert "macOS" in explained and "conda-forge" in explained  # builds differ


def test_weak_distractors_are_gone(quizzes):
    for name, cell, quiz in quizzes:
        for option in quiz.options:
            for weak in WEAK_DISTRACTORS:
                assert weak not in option.texte, f"{name} {cell.id}: {option.texte}"
