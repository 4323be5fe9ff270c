"""French end to end: typography and vocabulary of every learner-facing text (tests/french_text.py).

The checker is tested first on texts built here (it must catch an ordinary space and accept
U+00A0, and leave code alone), then run on the course: the lessons and the TP (both versions),
the README, and the messages of the course's and the grading's modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from french_text import (
    NBSP,
    NNBSP,
    check_file,
    check_markdown,
    check_python_source,
    check_text,
    learner_files,
    looks_french,
)
from helpers import REPO


def messages(findings) -> list[str]:
    return [f.message for f in findings]


# --------------------------------------------------------------------------- the checker itself


@pytest.mark.parametrize("mark", [":", ";", "?", "!"])
def test_an_ordinary_space_before_a_double_mark_is_caught_and_a_non_breaking_one_accepted(mark):
    assert [m for _, m, _ in check_text(f"Bilan {mark} trois")] == [
        f"espace ordinaire avant « {mark} » (insécable U+00A0)"
    ]
    assert check_text(f"Bilan{NBSP}{mark} trois") == []
    assert check_text(f"Bilan{NNBSP}{mark} trois") == []
    assert [m for _, m, _ in check_text(f"Bilan{mark} trois")] == [
        f"pas d'espace avant « {mark} » (insécable U+00A0)"
    ]


def test_guillemets_need_non_breaking_spaces_inside():
    assert len(check_text("le TP « oublier » suit")) == 2
    assert len(check_text("le TP «oublier» suit")) == 2
    assert check_text(f"le TP «{NBSP}oublier{NBSP}» suit") == []
    assert check_text(f"le TP «{NNBSP}oublier{NNBSP}» suit") == []


def test_a_finding_says_where_and_shows_the_space():
    text = f"# Titre{NBSP}: bien\n\nDeuxième ligne{NBSP}; puis la troisième :\nfin"
    [finding] = check_markdown(text, "lecon.ipynb, cellule 2 (markdown)")
    assert finding.where == "lecon.ipynb, cellule 2 (markdown), ligne 3"
    assert finding.excerpt.endswith("la troisième␣:")
    assert "lecon.ipynb, cellule 2 (markdown), ligne 3" in str(finding)


def test_markdown_code_urls_html_math_and_mermaid_are_not_prose():
    text = (
        "Lancez `python -m course.tuteur --user alice ; echo ok` puis `x[1 :]`.\n"
        "Voir https://example.org/a?b=c:d et [le lien](http://x.org/?q=1:z 'titre : ici').\n"
        "Une réunion à 10:30 et un ratio 4,5:1, la clé user:progression.\n"
        '<span style="color: red">Rouge</span> et $a : b$ et ![image](a.png)\n'
        "<!-- un commentaire : ignoré -->\n"
        "```mermaid\nerDiagram\n  sessions ||--o{ events : contient\n```\n"
        "~~~python\nd = {'a' : 1}\n~~~\n"
        "| a | b |\n|:---|---:|\n"
    )
    assert check_markdown(text, "x") == []
    # the same text with one prose mistake: exactly that one is found, on its line
    found = check_markdown(text + "Et ici : une faute.\n", "x")
    assert [(f.where, f.message) for f in found] == [
        ("x, ligne 15", "espace ordinaire avant « : » (insécable U+00A0)")
    ]


def test_a_line_break_inside_a_paragraph_is_an_ordinary_space():
    text = f"Une question\n? Et une citation «\nici{NBSP}».\n\n![image]\n"
    assert [(f.where, f.message) for f in check_markdown(text, "x")] == [
        ("x, ligne 2", "retour à la ligne avant « ? »"),
        ("x, ligne 2", "retour à la ligne après « « »"),
    ]
    assert check_markdown(f"Une question{NBSP}?\nEt une citation «{NBSP}ici{NBSP}».", "x") == []


def test_a_code_span_followed_by_a_mark_still_needs_the_space():
    assert messages(check_markdown("La fonction `oublier`: elle efface.", "x")) == [
        "pas d'espace avant « : » (insécable U+00A0)"
    ]
    assert check_markdown(f"La fonction `oublier`{NBSP}: elle efface.", "x") == []


def test_python_strings_are_checked_and_python_syntax_is_not():
    source = f'''
def f(x):
    """Returns the value: an English docstring is the course's internal documentation."""
    d = {{"a": 1, "b" : x[1 :]}}
    sql = "SELECT * FROM sessions WHERE user_id = ? AND app_name = ? LIMIT ?"
    prefixe = "user:"
    etat = "l'état user: survit{NBSP}; app: aussi"
    code = "for x in liste: parcourt les éléments"
    mermaid = "sequenceDiagram\\n  accTitle: Essai\\n  A ->> B : bonjour"
    css = ".quiz-feedback {{ display: none; color: var(--jp-ui-font-color1); }}"
    schema = """
CREATE TABLE IF NOT EXISTS t (
    a TEXT PRIMARY KEY
);"""
    print(f"{{d}}{NBSP}: {{sql}}")
    print("Bilan : trois réponses")
    raise ValueError(f"Option {{x}} inexistante: choisissez")
'''
    found = check_python_source(source, "m.py")
    assert [(f.where, f.message) for f in found] == [
        ("m.py:16", "espace ordinaire avant « : » (insécable U+00A0)"),
        ("m.py:17", "pas d'espace avant « : » (insécable U+00A0)"),
    ]
    assert found[0].excerpt == "Bilan␣: trois réponses"


def test_french_docstrings_are_checked_and_english_ones_are_not():
    source = '"""Le bilan des quiz : à afficher.\n\nWhy: the English part is internal."""\n'
    assert [(f.where, f.message) for f in check_python_source(source, "m.py")] == [
        ("m.py:1", "espace ordinaire avant « : » (insécable U+00A0)")
    ]
    assert looks_french("Le bilan des quiz") and not looks_french('reads "Bonne réponse" here')


def test_vocabulary_flags_the_replaced_words_and_allows_identifiers():
    text = (
        "Dans ce carnet, avant le lab et le Labo, derrière un équilibreur de charge, alice, "
        "puis le PRAGMA de point de contrôle."
    )
    assert [m.split(" → ")[0] for m in messages(check_markdown(text, "x"))] == [
        "vocabulaire : « carnet »",
        "vocabulaire : « lab »",
        "vocabulaire : « Labo »",
        "vocabulaire : « équilibreur »",
        "vocabulaire : « alice »",
        "vocabulaire : « point de contrôle »",
    ]
    allowed = (
        "Tapez make lab ou jupyter lab dans JupyterLab, puis `make lab` ; voyez "
        "quiz_du_carnet, course.labo, tests/labo/ et le carnet de notes de nbgrader."
    ).replace(" ;", f"{NBSP};")
    assert check_markdown(allowed, "x") == []
    # a name in a learner's chat message is data, not the lesson's vocabulary
    assert check_python_source('m = "Je m\'appelle Alice Martin, merci."\n', "m.py") == []
    # a name with its capital, and the user_id as code or quoted, are the course's words
    named = f"Alice écrit{NBSP}; son identifiant est `alice`, et la requête vise 'bob'."
    assert check_markdown(named, "x") == []


def test_notebook_cells_are_read_as_markdown_and_as_code(tmp_path):
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Leçon\n\nUne question ?"),
        nbformat.v4.new_code_cell('%load_ext x\n!ls\nprint("Réponse : oui")\nawait f()'),
    ]
    path = tmp_path / "lecon.ipynb"
    nbformat.write(nb, path)
    assert [f.where for f in check_file(path, tmp_path)] == [
        "lecon.ipynb, cellule 0 (markdown), ligne 3",
        "lecon.ipynb, cellule 1 (code), ligne 3",
    ]


# --------------------------------------------------------------------------- the course

FILES = learner_files(REPO)


def test_the_checked_files_are_the_learners_texts():
    rel = {p.relative_to(REPO).as_posix() for p in FILES}
    assert any(r.startswith("notebooks/lecons/") for r in rel)
    assert any(r.startswith("solutions/oublier/") for r in rel)
    assert {"README.md", "course/quiz.py", "course/save_hook.py", "course/inspecter.py"} <= rel
    assert "grader/README.md" in rel  # the instructors' guide: French too
    assert "grader/grading/student_package.md" in rel  # the README of the learners' package
    # the session service's errors and docstrings are read by learners too
    assert {
        "course/sessions/sqlite_session_service.py",
        "course/sessions/errors.py",
        "course/events/content.py",
    } <= rel


@pytest.mark.parametrize("path", FILES, ids=[p.relative_to(REPO).as_posix() for p in FILES])
def test_french_typography_and_vocabulary(path: Path):
    """Every learner-facing text: U+00A0 before : ; ? ! and inside « », one word per idea."""
    findings = check_file(path, REPO)
    assert not findings, f"{len(findings)} problème(s) :\n" + "\n".join(map(str, findings))
