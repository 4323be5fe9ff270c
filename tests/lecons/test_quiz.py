"""Unit tests for course.quiz: definition checks, live feedback, static fallbacks, the score."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbconvert import HTMLExporter

from course import quiz as q


@pytest.fixture(autouse=True)
def empty_notebook_registry():
    q.reinitialiser()
    yield
    q.reinitialiser()


def make_quiz(**kwargs) -> q.Quiz:
    return q.Quiz(
        "Quelle table garde la progression ?",
        options=[
            q.Option("sessions", False, "sessions ne garde que l'état propre à la session."),
            q.Option("user_states", True, "Les clés user: y sont rangées sans préfixe."),
            q.Option("events seulement", False, "Les événements gardent les deltas, pas l'état."),
        ],
        **kwargs,
    )


def test_bad_definitions_get_french_errors():
    with pytest.raises(q.QuizError, match="texte non vide"):
        q.Option("", True, "x")
    with pytest.raises(q.QuizError, match="True ou False"):
        q.Option("a", "oui", "x")
    with pytest.raises(q.QuizError, match="explication"):
        q.Option("a", True, "  ")
    bonne = q.Option("a", True, "x")
    fausse = q.Option("b", False, "y")
    with pytest.raises(q.QuizError, match="exactement une option juste"):
        q.Quiz("Q ?", options=[fausse, q.Option("c", False, "z")])
    with pytest.raises(q.QuizError, match="exactement une option juste"):
        q.Quiz("Q ?", options=[bonne, q.Option("c", True, "z")])
    with pytest.raises(q.QuizError, match="entre 2"):
        q.Quiz("Q ?", options=[bonne])
    with pytest.raises(q.QuizError, match="Option"):
        q.Quiz("Q ?", options=[bonne, ("b", False, "y")])
    with pytest.raises(q.QuizError, match="objectif"):
        q.Quiz("Q ?", options=[bonne, fausse], objectif=0)
    with pytest.raises(q.QuizError, match="question"):
        q.Quiz("", options=[bonne, fausse])
    assert q.quiz_du_carnet() == []  # nothing half-registered


def test_every_option_gets_its_own_feedback():
    quiz = make_quiz()
    assert quiz.retour(0).startswith("Pas tout à fait : sessions ne garde")
    assert quiz.retour(1) == f"{q.BONNE} : Les clés user: y sont rangées sans préfixe."
    assert quiz.retour(2).startswith(q.PAS_TOUT_A_FAIT)
    with pytest.raises(q.QuizError, match="inexistante"):
        quiz.repondre(3)
    with pytest.raises(q.QuizError, match="entier"):
        quiz.repondre("1")


def test_widget_follows_the_dom_contract_and_answers_clicks():
    quiz = make_quiz()
    box = quiz.widget()
    assert "quiz" in box._dom_classes
    buttons = [c for c in box.children if "quiz-option" in getattr(c, "_dom_classes", ())]
    feedback = [c for c in box.children if "quiz-feedback" in getattr(c, "_dom_classes", ())]
    assert len(buttons) == 3 and len(feedback) == 1
    assert [("quiz-correct" in b._dom_classes) for b in buttons] == [False, True, False]
    assert feedback[0].value == ""

    buttons[0].click()  # a wrong answer first
    assert "Pas tout à fait" in feedback[0].value
    assert "sessions ne garde que l" in feedback[0].value
    assert buttons[0].button_style == "danger"
    buttons[1].click()
    assert "Bonne réponse" in feedback[0].value and "sans préfixe" in feedback[0].value
    assert buttons[1].button_style == "success" and buttons[0].button_style == ""
    assert quiz.reponses == [0, 1]
    assert quiz.repondu and not quiz.juste_du_premier_coup


def test_one_display_bundle_carries_widget_html_and_text():
    quiz = make_quiz(objectif=2)
    data, meta = quiz._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    for mime in ("text/html", "text/plain"):
        assert quiz.question in data[mime]
        for option in quiz.options:  # every option and every explanation readable statically
            assert option.texte in data[mime]
            assert option.explication in data[mime]
    assert "<details>" in data["text/html"]
    assert meta["course/quiz"] == {"id": quiz.ident, "objectif": 2, "options": 3}
    assert not re.search(r"(src|href)=|https?://", data["text/html"])


def test_static_html_export_shows_question_and_options():
    """What nbconvert makes of a saved quiz output without a kernel (no widget state)."""
    quiz = make_quiz()
    data, meta = quiz._repr_mimebundle_()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("quiz")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data, metadata=meta)]
    nb.cells.append(cell)
    body, _ = HTMLExporter().from_notebook_node(nb)
    assert quiz.question.replace("'", "&#39;") in body or quiz.question in body
    for option in quiz.options:
        assert option.texte in body


def test_rerunning_a_cell_replaces_its_quiz():
    make_quiz()
    make_quiz()
    assert len(q.quiz_du_carnet()) == 1


def test_bilan_counts_first_answers_and_says_what_to_review():
    first = make_quiz(revoir="Section 3 : la table user_states")
    second = q.Quiz(
        "Combien de tables ?",
        options=[q.Option("4", True, "Quatre tables."), q.Option("2", False, "Il y en a plus.")],
    )
    bilan = q.bilan()
    live = bilan.widget()
    assert "0 / 2" in bilan.texte() and "Pas encore répondu" in bilan.texte()
    first.repondre(0)  # wrong first, then right: still to review
    first.repondre(1)
    second.repondre(0)
    assert "1 / 2" in bilan.texte()
    assert "Section 3 : la table user_states" in bilan.texte()
    assert "1 / 2" in live.value and "Section 3" in live.value  # the widget updated itself
    data, meta = bilan._repr_mimebundle_()
    assert meta == {"course/bilan": {}}
    assert "quiz-bilan" in data["text/html"] and "1 / 2" in data["text/plain"]
    assert "quiz-bilan" in live._dom_classes


def test_bilan_all_right():
    quiz = make_quiz()
    quiz.repondre(1)
    assert "passez à la leçon suivante" in q.bilan().texte()
