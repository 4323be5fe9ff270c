"""course.quiz: options shown in a deterministic shuffled order, and the score's next step."""

from __future__ import annotations

import collections
import re

import pytest

from course import quiz as q


@pytest.fixture(autouse=True)
def empty_notebook_registry():
    q.reset()
    yield
    q.reset()


def five_options(right: int = 0) -> list[q.Option]:
    return [q.Option(f"option {i}", i == right, f"explication de l'option {i}.") for i in range(5)]


def test_the_order_is_a_permutation_drawn_from_the_key_alone():
    first = q.display_order("l3-temp", 5)
    assert sorted(first) == list(range(5))
    assert q.display_order("l3-temp", 5) == first  # same key, same order: in any kernel
    others = {q.display_order(f"quiz-{i}", 5) for i in range(50)}
    assert len(others) > 20, "different keys give different orders"


def test_each_position_is_as_likely_for_the_right_answer():
    """Over many keys the right answer lands evenly: the shuffle itself favours no place."""
    counts = collections.Counter(q.display_order(f"k{i}", 3).index(0) for i in range(3000))
    assert set(counts) == {0, 1, 2}
    assert all(900 < n < 1100 for n in counts.values()), counts


def test_ident_is_the_key_when_given_else_the_question():
    by_ident = q.Quiz("Question A ?", options=five_options(), ident="cle-stable")
    reworded = q.Quiz("Question A, reformulée ?", options=five_options(), ident="cle-stable")
    assert by_ident.ordre == reworded.ordre == q.display_order("cle-stable", 5)
    no_ident = q.Quiz("Question B ?", options=five_options())
    assert no_ident.ordre == q.display_order("Question B ?", 5)


def test_widget_and_static_fallbacks_show_the_same_shuffled_order():
    quiz = q.Quiz("Où ?", options=five_options(right=3), ident="ordre-test")
    assert quiz.ordre != (0, 1, 2, 3, 4)  # this key does shuffle (else the test shows nothing)
    shown = [quiz.options[i].texte for i in quiz.ordre]
    assert [o.texte for o in quiz.options_affichees] == shown
    buttons = [c for c in quiz.widget().children if "quiz-option" in c._dom_classes]
    assert [b.description for b in buttons] == [
        f"{letter}. {texte}" for letter, texte in zip("ABCDE", shown, strict=True)
    ]
    assert re.findall(r"^  [A-E]\. (.+)$", quiz.texte(), re.MULTILINE) == shown
    assert re.findall(r"<li><span>(.+?)</span>", quiz.html()) == shown
    position = quiz.position_juste
    assert shown[position] == "option 3" and "quiz-correct" in buttons[position]._dom_classes


def test_a_click_on_a_displayed_button_answers_that_option():
    quiz = q.Quiz("Où ?", options=five_options(right=3), ident="ordre-test")
    buttons = [c for c in quiz.widget().children if "quiz-option" in c._dom_classes]
    buttons[quiz.position_juste].click()
    assert quiz.reponses == [3] and quiz.juste_du_premier_coup
    wrong = next(p for p in range(5) if p != quiz.position_juste)
    buttons[wrong].click()
    assert quiz.reponses == [3, quiz.ordre[wrong]]
    assert "quiz-choisie-faux" in buttons[wrong]._dom_classes
    assert not any(c.startswith("quiz-choisie") for c in buttons[quiz.position_juste]._dom_classes)


def test_the_score_names_the_next_step():
    quiz = q.Quiz("Où ?", options=five_options(), ident="suite-test")
    last = q.bilan(suite="passez au TP noté, oublier/oublier.ipynb")
    quiz.repondre(0)
    assert "passez au TP noté, oublier/oublier.ipynb." in last.texte()
    assert "leçon suivante" not in last.texte() and "passez au TP noté" in last.html()
    assert "passez à la leçon suivante" in q.bilan().texte()  # the default, for a middle lesson
    with pytest.raises(q.QuizError, match="suite"):
        q.bilan(suite="  ")
