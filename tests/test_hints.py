"""The hint ladders (course/hints.py): three levels that differ, from where to look to close to
the code, never the whole answer; the count of hints shown and kept; the TP's ladder follows the
last verifier's first cause; a lesson's exercise has a ladder, not a solution below its hint."""

from __future__ import annotations

import re

import nbformat
import pytest
from helpers import REPO

from course import progress
from course.hints import LADDERS, LEVELS, TP_CALL, TP_START, indice
from course.labo import verifier
from course.labo.criteria import CRITERIA

SOLUTIONS = REPO / "solutions" / "lecons"
SUBMISSIONS = REPO / "grader" / "submissions"
# the statements of the TP's full answer (grader/submissions/complete_vacuum.py)
TP_ANSWER = (
    "list_sessions",
    "delete_session",
    "PRAGMA foreign_keys = ON",
    "DELETE FROM user_states",
    "VACUUM",
    "wal_checkpoint(TRUNCATE)",
)
CODE = re.compile(r"`[^`]*[(=\[][^`]*`")  # code in backticks: a call, a subscript, an assignment


def _headings(notebook: str) -> set[str]:
    nb = nbformat.read(SOLUTIONS / notebook, as_version=4)
    return {
        line.lstrip("#").strip()
        for cell in nb.cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    }


def _solution_lines(function: str) -> list[str]:
    """The statements of a lesson exercise's solution, or of the second TP's (between its
    nbgrader markers)."""
    for path in [*SOLUTIONS.glob("0*.ipynb"), *SOLUTIONS.parent.glob("oublier_partage/*.ipynb")]:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.metadata.get("nbgrader", {}).get("solution") and f"def {function}(" in (
                cell.source
            ):
                body = cell.source.split("### BEGIN SOLUTION", 1)[1].split("### END SOLUTION")[0]
                return [line.strip() for line in body.splitlines() if line.strip()]
    raise AssertionError(f"no exercise {function}")


def test_the_tp_has_a_ladder_for_each_criterion_and_each_fault_of_the_call():
    faults = {TP_START, TP_CALL, "tp:transaction", "tp:async"}
    assert {f"tp:{c.key}" for c in CRITERIA} | faults == {
        key for key in LADDERS if key.startswith("tp:")
    }


@pytest.mark.parametrize("key", sorted(LADDERS))
def test_each_level_differs_and_only_the_last_is_close_to_the_code(key):
    ladder = LADDERS[key]
    assert len(ladder.levels) == LEVELS == len(set(ladder.levels))
    first, second, last = ladder.levels
    assert not CODE.search(first) and not CODE.search(second), ladder.levels[:2]
    assert CODE.search(last), last  # the last one is close to the code
    # where to look: sections that exist in the lessons named
    for place in ladder.places:
        assert place.section.replace("`", "") in {
            h.replace("`", "") for h in _headings(place.notebook)
        }, place


@pytest.mark.parametrize("key", sorted(k for k in LADDERS if k.startswith("tp:")))
def test_no_level_of_the_tp_holds_its_full_answer(key):
    for level in LADDERS[key].levels:
        held = [statement for statement in TP_ANSWER if statement in level]
        assert len(held) <= 2, (key, held)


@pytest.mark.parametrize("key", sorted(k for k in LADDERS if not k.startswith("tp:")))
def test_no_level_of_an_exercise_holds_its_solution(key):
    solution = _solution_lines(key)
    for level in LADDERS[key].levels:
        whole = [line for line in solution if len(line) > 12 and line in level]
        assert len(whole) < len(solution) / 2, (key, whole)
    # the positive control: the same measure, on a level that would paste the solution
    pasted = "\n".join(solution)
    assert len([line for line in solution if len(line) > 12 and line in pasted]) >= (
        len(solution) / 2
    )


def test_levels_come_one_after_the_other_and_the_count_is_shown_and_kept(monkeypatch, capsys):
    monkeypatch.setenv(progress.USER_ENV_VAR, "alice")
    progress.reset_cache()
    indice(1, "requete_niveau")
    first = capsys.readouterr().out
    assert first.startswith("Indice 1/3 — l'exercice requete_niveau. Où regarder\u00a0: la leçon 3")
    assert LADDERS["requete_niveau"].levels[0] in first
    assert "Encore bloqué\u00a0? indice(2, 'requete_niveau')." in first
    count = "Indices utilisés\u00a0: 1/3 pour l'exercice requete_niveau, 1 indice dans tout le "
    count += "cours."
    assert count in first
    indice(1, "requete_niveau")  # the same level again: not counted twice
    assert "Indices utilisés\u00a0: 1/3" in capsys.readouterr().out
    indice(exercice="requete_niveau")  # the next one
    second = capsys.readouterr().out
    assert second.startswith("Indice 2/3") and LADDERS["requete_niveau"].levels[1] in second
    progress.reset_cache()  # a new kernel: the count comes from the progress file
    indice(3, "requete_niveau")
    third = capsys.readouterr().out
    assert "Indices utilisés\u00a0: 3/3 pour l'exercice requete_niveau, 3 indices" in third
    assert "C'est le dernier niveau" in third
    assert "3 indices demandés" in repr(progress.mon_parcours())
    with pytest.raises(ValueError, match="de 1 à 3"):
        indice(4, "requete_niveau")
    with pytest.raises(ValueError, match="Exercice inconnu"):
        indice(1, "inexistant")


def test_a_tp_check_offers_its_own_ladder_and_indice_climbs_it(capsys):
    """`offer_hints`, what both TPs' checks call: the second TP's ladder is named as its
    function, its hints are not the first TP's; all criteria held, no hint (the control)."""
    from course.hints import offer_hints

    offer_hints("oublier_partage")
    assert capsys.readouterr().out == (
        "\nBloqué sur le second TP, oublier_partage\u00a0? indice(1), puis indice(2), puis "
        "indice(3).\n"
    )
    indice(1)
    shown = capsys.readouterr().out
    assert shown.startswith(
        "Indice 1/3 — le second TP, oublier_partage. Où regarder\u00a0: la leçon 7"
    )
    assert LADDERS["oublier_partage"].levels[0] in shown
    indice(2, "oublier_partage")  # by its name too, as a lesson's exercise
    assert LADDERS["oublier_partage"].levels[1] in capsys.readouterr().out
    assert LADDERS["oublier_partage"].step == "07"  # counted in lesson 7's line of the path
    offer_hints(None)
    assert capsys.readouterr().out == ""
    indice(1)
    assert "pas besoin d'indice" in capsys.readouterr().out
    offer_hints(TP_START)  # the first TP's own, kept
    indice(1)
    assert LADDERS[TP_START].levels[0] in capsys.readouterr().out


@pytest.mark.parametrize("key", sorted(LADDERS))
def test_a_hint_prints_plain_text_without_markdown_backticks(key, capsys):
    """A hint is printed, not rendered: the backticks that mark code in its source (the last
    level always has some, and some sections' titles: the control) are not shown."""
    ladder = LADDERS[key]
    assert "`" in ladder.levels[-1]
    for level in range(1, LEVELS + 1):
        indice(level, key)
        shown = capsys.readouterr().out
        assert "`" not in shown, shown
        assert ladder.levels[level - 1].replace("`", "") in shown


def _cell(name: str) -> str:
    return "import sqlite3\nfrom course.tuteur import APP_NAME\n" + (
        SUBMISSIONS / f"{name}.py"
    ).read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sample", "ladder"),
    [
        ("graine", "tp:user_states"),
        ("complete", "tp:fichier"),
        ("vacuum_avant_commit", "tp:transaction"),
        ("ebauche", TP_START),
        # helper attack (a learner's path): an error, or the file taken away, sent the learner
        # to « des sessions de l'élève restent »
        ("exception", TP_CALL),
        ("base_supprimee", TP_CALL),
    ],
)
def test_the_tp_hint_follows_the_last_verifier(sample, ladder, capsys):
    verifier(_cell(sample))
    told = capsys.readouterr().out
    assert f"Bloqué sur {LADDERS[ladder].topic}\u00a0? indice(1)" in told
    indice(1)
    assert LADDERS[ladder].levels[0] in capsys.readouterr().out


@pytest.mark.slow
def test_a_forgotten_await_is_sent_to_the_await_hints(capsys):
    """A service call without await fails on a coroutine, or (delete_session) does nothing but
    warn: either way the hint is about await."""
    slip = _cell("complete_vacuum").replace("await service.list_sessions", "service.list_sessions")
    verifier(slip)
    told = capsys.readouterr().out
    assert f"Bloqué sur {LADDERS['tp:async'].topic}\u00a0? indice(1)" in told
    # without await on delete_session, nothing is raised: Python's warning is what tells
    api_only = "".join(_cell("complete_vacuum").splitlines(True)[:7])  # no SQL after the API
    slip = api_only.replace("await service.delete_session", "service.delete_session")
    verifier(slip)
    told = capsys.readouterr().out
    assert "coroutine jamais attendue" in told
    assert f"Bloqué sur {LADDERS['tp:async'].topic}\u00a0? indice(1)" in told


@pytest.mark.slow
def test_no_hint_once_every_criterion_holds(capsys):
    verifier(_cell("complete_vacuum"))
    capsys.readouterr()
    indice(1)
    assert capsys.readouterr().out == (
        "Votre dernier verifier respecte tous les critères\u00a0: pas besoin d'indice.\n"
    )


@pytest.mark.parametrize("lesson", [lesson for lesson in progress.LESSONS if lesson.exercises])
def test_each_exercise_has_a_ladder_and_no_solution_below_it(lesson):
    """Every exercise of the lesson (an nbgrader solution cell) has its ladder, and no Markdown
    cell of the lesson shows its solution (a fold included)."""
    cells = nbformat.read(SOLUTIONS / lesson.notebook, as_version=4).cells
    asked = []
    for cell in cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            asked.append(re.search(r"def (\w+)", cell.source).group(1))
    assert asked == list(lesson.exercises)
    markdown = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    for name in asked:
        assert name in LADDERS and LADDERS[name].step == lesson.key
        assert f"def {name}(" not in markdown
        assert f'indice(1, "{name}")' in markdown  # the ladder is offered where the fold was
        solution = _solution_lines(name)
        assert not [line for line in solution if len(line) > 30 and line in markdown], name
    assert "<summary>Solution</summary>" not in markdown


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda: indice(4, "requete_niveau"), "Le niveau d'un indice va de 1 à 3"),
        (lambda: indice(0, "requete_niveau"), "Le niveau d'un indice va de 1 à 3"),
        (lambda: indice("a", "requete_niveau"), "Le niveau d'un indice va de 1 à 3"),
        (lambda: indice(1, "nexistepas"), "Exercice inconnu"),
        (lambda: verifier(), "Donnez votre fonction à vérifier"),
        (lambda: __import__("course.labo").labo.noter(len, "truc"), "Test inconnu"),
        (
            lambda: __import__("course.labo.partage").labo.partage.noter_partage(len, "truc"),
            "Test inconnu",
        ),
    ],
    ids=["niveau-4", "niveau-0", "niveau-texte", "exercice", "verifier-seul", "noter", "partage"],
)
def test_a_helper_called_wrongly_says_so_in_one_french_line(call, said, monkeypatch):
    """Helper attack (a learner's path): indice(4), indice("a"), verifier() or noter(f, "truc")
    ended in a Python traceback around the French message. IPython shows a learner's error as
    its ``_render_traceback_`` lines: one French line, no frames."""
    monkeypatch.setenv(progress.USER_ENV_VAR, "alice")
    progress.reset_cache()
    with pytest.raises((ValueError, TypeError)) as raised:
        call()
    lines = raised.value._render_traceback_()
    assert len(lines) == 1 and said in lines[0], lines
    assert "Traceback" not in lines[0] and "\u00a0:" in lines[0]


@pytest.mark.parametrize("tp", ["oublier/oublier.ipynb", "oublier_partage/oublier_partage.ipynb"])
def test_a_tp_that_offers_indice_imports_it(tp):
    """Learner's walk, stop 57: the second TP's check ends on « indice(1), puis indice(2)… »,
    and ``indice(1)`` gave a NameError: its notebook never imported it. In the learner's
    version of each TP, the check's own cell (or one above it) imports it."""
    nb = nbformat.read(REPO / "notebooks" / tp, as_version=4)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    check = next(i for i, s in enumerate(code) if re.search(r"^verifier(_partage)?\(", s, re.M))
    assert any("from course.hints import indice" in s for s in code[: check + 1]), code[check]


def test_a_second_tp_check_stopped_before_its_end_leaves_indice_on_its_ladder(capsys):
    """Learner's walk, stop 57: after ``verifier_partage`` was interrupted (or refused),
    ``indice(1)`` gave the first TP's hint: only a check that ended chose the ladder."""
    from course.hints import offer_hints
    from course.labo.partage import verifier_partage

    offer_hints(TP_START)  # the first TP's, as after its check
    with pytest.raises(TypeError):  # refused before it runs: not a function of a cell
        verifier_partage(42)
    capsys.readouterr()
    indice(1)
    assert capsys.readouterr().out.startswith("Indice 1/3 — le second TP, oublier_partage.")


def test_indice_without_a_name_in_a_fresh_kernel_follows_the_notebook_s_folder(
    tmp_path, monkeypatch, capsys
):
    """Second learner's walk, stop 58: in a lesson's fresh (or restarted) kernel, indice() gave
    the first TP's hint and counted it against that TP; in the second TP's, the first TP's too.
    Now the TP whose folder the notebook runs in, and in a lesson, the question of which."""
    from course import hints

    monkeypatch.setattr(hints, "_tp_cause", [None])
    for folder, first in (("oublier", TP_START), ("oublier_partage", "oublier_partage")):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        indice(1)
        assert LADDERS[first].levels[0] in capsys.readouterr().out, folder
        monkeypatch.setattr(hints, "_tp_cause", [None])
    (tmp_path / "lecons").mkdir()
    monkeypatch.chdir(tmp_path / "lecons")
    used = len(progress.hints_used())
    indice(2)
    said = capsys.readouterr().out
    assert said.startswith("Sur quel exercice\u00a0? Donnez son nom") and '"requete_niveau"' in said
    assert len(progress.hints_used()) == used  # nothing counted
