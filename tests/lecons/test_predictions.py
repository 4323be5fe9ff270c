"""Predictions are predictions (issue 21): nothing a learner reads before a prediction quiz in its
lesson (title, objectives, headings, earlier cells, earlier quizzes) states its answer.

Each prediction quiz names, in its metadata (``course.cle``), the key statements of its right
answer: phrases the right option or its explanation uses. The check looks for them, normalised,
in every cell before the quiz; the controls show that it does find a right answer put before
its quiz, and that each key is a statement the lesson really makes at or after the quiz.
"""

from __future__ import annotations

import copy
import re
import unicodedata

import nbformat
import pytest
from helpers import REPO
from notebook_text import tags
from parcours import PARCOURS, START

from course import quiz as q

SOLUTIONS = REPO / "solutions" / "lecons"
# the start page and every notebook of its path (parcours.py)
LESSONS = [START, *PARCOURS.notebooks]
APPENDIX = "06_annexe_adk.ipynb"  # for its own claims (cells l6-…)


def normalise(text: str) -> str:
    """Lower case, one kind of space and apostrophe, no Markdown emphasis or code marks."""
    text = unicodedata.normalize("NFC", text).lower()
    text = text.replace("\u00a0", " ").replace("\u202f", " ").replace("’", "'")
    text = re.sub(r"[`*_\\]", "", text)
    return re.sub(r"\s+", " ", text)


def build(cell) -> q.Quiz:
    q.reinitialiser()
    try:
        return eval(cell.source, {"Quiz": q.Quiz, "Option": q.Option})  # noqa: S307
    finally:
        q.reinitialiser()


def predictions(cells) -> list[tuple[int, nbformat.NotebookNode]]:
    return [(i, c) for i, c in enumerate(cells) if "prediction" in tags(c)]


def keys_of(cell) -> list[str]:
    return [normalise(k) for k in cell.metadata.get("course", {}).get("cle", [])]


def stated_before(cells, index: int, keys: list[str]) -> list[tuple[str, str]]:
    """(key, cell id) for each key found in a cell before ``index``."""
    return [
        (key, cell.id) for cell in cells[:index] for key in keys if key in normalise(cell.source)
    ]


def lesson_cells(name: str):
    return nbformat.read(SOLUTIONS / name, as_version=4).cells


@pytest.mark.parametrize("name", LESSONS)
def test_nothing_before_a_prediction_quiz_states_its_answer(name: str):
    cells = lesson_cells(name)
    found = predictions(cells)
    assert found, f"{name}: no prediction quiz"
    for index, cell in found:
        keys = keys_of(cell)
        assert keys, f"{name} {cell.id}: name its answer's key statements in course.cle"
        quiz = build(cell)
        right = quiz.options[quiz.indice_juste]
        answer = normalise(f"{right.texte} {right.explication}")
        assert any(k in answer for k in keys), f"{cell.id}: no key is in the right answer"
        after = normalise(" ".join(c.source for c in cells[index:]))
        assert all(k in after for k in keys), f"{cell.id}: a key the lesson never states"
        assert stated_before(cells, index, keys) == [], f"{name} {quiz.ident}: answer given first"


@pytest.mark.parametrize("name", LESSONS)
def test_control_the_check_finds_a_right_answer_put_before_its_quiz(name: str):
    """The check can fail: the right option, copied into a heading above the quiz (or into the
    objectives), is found for every prediction quiz of the lesson."""
    cells = lesson_cells(name)
    for index, cell in predictions(cells):
        quiz = build(cell)
        right = quiz.options[quiz.indice_juste]
        for where in (0, index):  # the title/objectives cell, or just above the quiz
            spoiled = copy.deepcopy(cells)
            if where == 0:
                spoiled[0].source += f"\n5. Savoir que {right.texte} ({right.explication})"
                position = index
            else:
                spoiled.insert(index, nbformat.v4.new_markdown_cell(f"## {right.texte}"))
                position = index + 1
                if not any(k in normalise(right.texte) for k in keys_of(cell)):
                    spoiled[index].source += f"\n\n{right.explication}"
            assert stated_before(spoiled, position, keys_of(cell)), (name, quiz.ident, where)


# the annex's two, as they stood before the third pass: l6-reste's heading, and the sentence
# above l6-wal that said what a connection in WAL mode leaves beside the file
APPENDIX_QUOTED = [
    (APPENDIX, ("l6-c13", "## 3. La ligne user_states survit, avec ADK aussi")),
    (
        APPENDIX,
        (
            "l6-c08",
            "Pour chacun, une connexion reste ouverte : en mode WAL, une connexion "
            "ouverte a toujours son `-wal`.",
        ),
    ),
]


def test_control_the_statements_issue_21_found_are_caught():
    """The eight answers given first that issue 21 quotes, put back where they were."""
    quoted = {
        "00_commencer_ici.ipynb": ("l0-c06", "l'appel donne une [coroutine](glossaire.ipynb)"),
        "02_brancher_sqlite.ipynb": (
            "l2-c12",
            "`list_sessions` renvoie les sessions **triées par date de dernière modification**",
        ),
        "03_ce_que_contient_le_fichier.ipynb": (
            "l3-c13",
            "2. Dire où va chaque portée d'état : `temp:` nulle part.",
        ),
        "04_effacer_un_eleve.ipynb": (
            "l4-c16",
            "elle devient une [page libre](glossaire.ipynb#page-libre), avec son ancien contenu",
        ),
        "05_reprendre_apres_redemarrage.ipynb": (
            "l5-c24",
            "`lecon05.db-wal` reçoit les pages nouvellement écrites ; le checkpoint les recopie",
        ),
    }
    for name, (quiz_id, sentence) in [*quoted.items(), *APPENDIX_QUOTED]:
        cells = lesson_cells(name)
        index = next(i for i, c in enumerate(cells) if c.id == quiz_id)
        cells.insert(1, nbformat.v4.new_markdown_cell(sentence))
        assert stated_before(cells, index + 1, keys_of(cells[index + 1])), (name, quiz_id)
