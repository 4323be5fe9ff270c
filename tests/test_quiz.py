"""Unit tests for course.quiz: definition checks, live feedback, static fallbacks, the score."""

from __future__ import annotations

import html
import re

import nbformat
import pytest
from nbconvert import HTMLExporter

from course import quiz as q


@pytest.fixture(autouse=True)
def empty_notebook_registry():
    q.reset()
    yield
    q.reset()


def make_quiz(**kwargs) -> q.Quiz:
    return q.Quiz(
        "Quelle table garde la progression d'alice\u00a0?",
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
    assert q.notebook_quizzes() == []  # nothing half-registered


def option_index(quiz: q.Quiz, texte: str) -> int:
    """Where an option is shown (the quiz may order its options its own way)."""
    return next(i for i, o in enumerate(quiz.options) if o.texte == texte)


def test_every_option_gets_its_own_feedback():
    quiz = make_quiz()
    assert quiz.retour(option_index(quiz, "sessions")) == (
        "Pas tout à fait\u00a0: sessions ne garde que l'état propre à la session."
    )
    assert quiz.retour(option_index(quiz, "user_states")) == (
        f"{q.RIGHT}\u00a0: Les clés user: y sont rangées sans préfixe."
    )
    assert quiz.retour(option_index(quiz, "events seulement")).startswith(q.NOT_QUITE)
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
    right, wrong = quiz.indice_juste, option_index(quiz, "sessions")  # the author's numbering
    # buttons come in the displayed (shuffled) order: button k shows option quiz.ordre[k]
    at = quiz.ordre.index
    assert [("quiz-correct" in b._dom_classes) for b in buttons] == [
        quiz.ordre[k] == right for k in range(3)
    ]
    [retour] = feedback
    rendered = (retour.value, retour._dom_classes)

    def shown() -> list[str]:  # the box's class that reveals one option's feedback
        return [c for c in box._dom_classes if c.startswith("quiz-choix-")]

    assert shown() == []
    buttons[at(wrong)].click()  # a wrong answer first
    assert shown() == [f"quiz-choix-{wrong}"]
    assert "quiz-choisie-faux" in buttons[at(wrong)]._dom_classes
    buttons[at(right)].click()
    assert shown() == [f"quiz-choix-{right}"]
    assert "quiz-choisie-juste" in buttons[at(right)]._dom_classes
    assert not any(c.startswith("quiz-choisie") for c in buttons[at(wrong)]._dom_classes)
    # the feedback widget (the live region) never changes: the browser never re-renders it
    assert (retour.value, retour._dom_classes) == rendered
    assert quiz.reponses == [wrong, right]
    assert quiz.repondu and not quiz.juste_du_premier_coup


def test_feedback_lives_in_one_polite_region_with_each_options_text():
    """The region a screen reader watches holds every feedback, each revealed by its class."""
    quiz = make_quiz()
    value = quiz.widget().children[-1].value
    region = re.search(r'<div class="quiz-retours" ([^>]*)>(.*)</div>$', value, re.S)
    assert region, value
    assert 'role="status"' in region.group(1) and 'aria-live="polite"' in region.group(1)
    for i, option in enumerate(quiz.options):
        verdict = q.RIGHT if option.juste else q.NOT_QUITE
        sorte = "juste" if option.juste else "faux"
        assert (
            f'<p class="quiz-retour quiz-retour-{sorte}" data-option="{i}">'
            f'<span class="quiz-verdict"><span aria-hidden="true">'
            f"{'✓' if option.juste else '✗'} </span><strong>{verdict}</strong></span>\u00a0: "
            f"{html.escape(option.explication, quote=False)}</p>"
        ) in region.group(2)
        # shown only while the quiz box carries quiz-choix-i
        rule = f".quiz-retour[data-option='{i}']{{display:block}}"
        assert f".quiz.quiz-choix-{i} .quiz-feedback {rule}" in value


def test_feedback_colours_come_from_the_theme():
    """JupyterLab's variables (light shade 0, dark shade 2 for the verdict), never a fixed
    colour alone: the hex values only stand behind a variable as its fallback."""
    style = re.search(r"<style>(.*?)</style>", q._STYLE, re.S).group(1)
    for variable in (
        "--jp-success-color0",
        "--jp-error-color0",
        "--jp-success-color2",
        "--jp-error-color2",
        "--jp-content-font-color1",
    ):
        assert f"var({variable}," in style
    assert "[data-jp-theme-light=false]" in style
    assert not re.search(r"(?<![,(])#[0-9a-fA-F]{3,6}\b", style)  # every colour has a var()
    assert "#1b5e20" not in style.replace("var(--jp-success-color0,#1b5e20)", "")


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
    assert meta["course/quiz"] == {"id": quiz.ident, "objective": 2, "options": 3}
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
    assert f"<p><strong>Quiz\u00a0: {html.escape(quiz.question, quote=False)}</strong></p>" in body
    for option in quiz.options:
        assert f"<li><span>{html.escape(option.texte, quote=False)}</span><details>" in body


def test_rerunning_a_cell_replaces_its_quiz():
    make_quiz()
    make_quiz()
    assert len(q.notebook_quizzes()) == 1


def test_bilan_counts_first_answers_and_says_what_to_review():
    assert q.notebook_quizzes() == []  # no quiz run in this kernel yet: said, not « 0 / 0 »
    empty = q.bilan()
    assert empty.texte() == (
        "Bilan\u00a0: aucun quiz de ce notebook n'a encore été exécuté dans ce noyau\u00a0; "
        "exécutez ses cellules de quiz, puis de nouveau celle-ci."
    )
    assert "aucun quiz" in empty.html() and "0 / 0" not in empty.html()
    first = make_quiz(revoir="Section 3\u00a0: la table user_states")
    second = q.Quiz(
        "Combien de tables ?",
        options=[q.Option("4", True, "Quatre tables."), q.Option("2", False, "Il y en a plus.")],
    )
    bilan = q.bilan()
    live = bilan.widget()
    text = bilan.texte()
    assert text.startswith("Bilan\u00a0: 0 bonne réponse du premier coup sur 2 (0 question ")
    assert "Pas encore répondu" in text
    first.repondre(option_index(first, "sessions"))  # wrong first, then right: to review
    assert "Bilan\u00a0: 0 bonne réponse du premier coup sur 2 (1 question répondue)" in (
        bilan.texte()
    )
    first.repondre(first.indice_juste)
    second.repondre(second.indice_juste)
    assert "Section 3\u00a0: la table user_states" in bilan.texte()
    said = "Bilan\u00a0: 1 bonne réponse du premier coup sur 2 (2 questions répondues)."
    assert said in bilan.texte()
    assert "1 bonne réponse</strong> du premier coup sur 2" in live.value  # updated itself
    assert "Section 3" in live.value
    data, meta = bilan._repr_mimebundle_()
    assert meta == {"course/bilan": {}}
    assert "quiz-bilan" in data["text/html"] and said in data["text/plain"]
    assert "quiz-bilan" in live._dom_classes


def test_bilan_all_right():
    quiz = make_quiz()
    quiz.repondre(quiz.indice_juste)
    text = q.bilan().texte()
    assert "Bilan\u00a0: 1 bonne réponse du premier coup sur 1 (1 question répondue)." in text
    assert "Tout est juste du premier coup" in text
    second = q.Quiz(
        "Combien ?", options=[q.Option("4", True, "Oui."), q.Option("2", False, "Non.")]
    )
    second.repondre(second.indice_juste)
    assert "Bilan\u00a0: 2 bonnes réponses du premier coup sur 2 (2 questions " in q.bilan().texte()


def test_a_lesson_quiz_is_recorded_and_comes_back_with_its_choice(monkeypatch, progress_file):
    """A lesson's quiz (its ident names the lesson) is recorded in the progress file and, in a
    new kernel (the cache forgotten), comes back answered, its choice shown in the widget; a quiz
    without a lesson's ident is not recorded (the control)."""
    from course import progress

    monkeypatch.setenv(progress.USER_ENV_VAR, "alice")
    progress.reset_cache()
    quiz = make_quiz(ident="l3-table")
    quiz.repondre(0)
    quiz.repondre(1)
    other = make_quiz(ident="essai-libre")
    other.repondre(1)
    progress.reset_cache()
    q.reset()
    again = make_quiz(ident="l3-table")
    assert again.reponses == [0, 1] and not again.juste_du_premier_coup
    assert "quiz-choix-1" in again.widget()._dom_classes
    assert make_quiz(ident="essai-libre").reponses == []
    assert [m["quiz"] for _s, m in progress._events() if m["type"] == "quiz"] == ["l3-table"] * 2
