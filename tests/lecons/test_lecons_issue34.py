"""Issue 34, the lessons' side: quiz options that do not give the answer away in any notebook,
code cells a learner reads without typography escapes, files numbered in the path's order."""

from __future__ import annotations

import collections
import re
from pathlib import Path

import nbformat
import pytest
from helpers import REPO
from notebook_text import tags, text_of
from parcours import GLOSSARY, PARCOURS, START
from predictions import build

SOLUTIONS = REPO / "solutions" / "lecons"
# every notebook with quizzes: the start page, each step of the path, the glossary
WITH_QUIZZES = [START, *PARCOURS.notebooks, GLOSSARY]
MAX_LONGEST_SHARE = 1 / 3  # of a notebook's quizzes whose right option is the longest
MAX_POSITION_SHARE = 1 / 2  # of a notebook's quizzes whose right option is at one place
# what a learner reads: every notebook of the student version and of the sources
READ_BY_LEARNERS = sorted((REPO / "notebooks").rglob("*.ipynb")) + sorted(
    (REPO / "solutions").rglob("*.ipynb")
)
# an escape written for typography (spaces, quotes, dashes, ellipsis) instead of the character
TYPOGRAPHY_ESCAPE = re.compile(
    r"\\(?:u00a0|u202f|u2009|u00ab|u00bb|u2019|u2018|u201c|u201d|u2013|u2014|u2026|xa0)"
    r"|\\N\{(?:NO-BREAK SPACE|NARROW NO-BREAK SPACE|[A-Z -]*QUOTATION MARK|EM DASH|EN DASH)\}",
    re.IGNORECASE,
)


def quizzes(name: str):
    cells = nbformat.read(SOLUTIONS / name, as_version=4).cells
    return [(cell.id, build(cell.source)) for cell in cells if "quiz" in tags(cell)]


def right_is_longest(quiz) -> bool:
    """Ties count: a right option as long as the longest is read as the longest."""
    right = len(quiz.options[quiz.indice_juste].texte)
    return right >= max(len(o.texte) for o in quiz.options)


def giveaways(found) -> tuple[list[str], dict[int, int]]:
    longest = [ident for ident, quiz in found if right_is_longest(quiz)]
    return longest, collections.Counter(quiz.position_juste for _id, quiz in found)


@pytest.mark.parametrize("name", WITH_QUIZZES)
def test_no_quiz_gives_its_answer_by_length_or_place(name: str):
    found = quizzes(name)
    if not found:
        return
    longest, places = giveaways(found)
    assert len(longest) <= MAX_LONGEST_SHARE * len(found), (name, longest)
    assert max(places.values()) <= MAX_POSITION_SHARE * len(found), (name, dict(places))


def test_control_the_longest_right_option_is_counted():
    """Lengthen every right option of lesson 1: each quiz counts, and the check fails."""
    name = PARCOURS.lessons[0]
    found = quizzes(name)
    lengthened = []
    for ident, quiz in found:
        right = quiz.options[quiz.indice_juste]
        longer = type(right)(right.texte + " " + "x" * 200, True, right.explication)
        options = [longer if o.juste else o for o in quiz.options]
        lengthened.append((ident, type(quiz)(quiz.question, options, ident=quiz.ident)))
    longest, _places = giveaways(lengthened)
    assert len(longest) == len(found) > MAX_LONGEST_SHARE * len(found)


def test_code_a_learner_reads_has_no_typography_escapes():
    """Every code cell of every notebook: the real character, never its escape."""
    assert len(READ_BY_LEARNERS) >= 2 * len(WITH_QUIZZES)
    found = []
    for path in READ_BY_LEARNERS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and TYPOGRAPHY_ESCAPE.search(cell.source):
                found.append(f"{path.relative_to(REPO)} {cell.id}")
    assert found == [], found


def test_control_an_escape_in_a_code_cell_is_found():
    for source in ('print("Ouvert\\u00a0:", x)', 'f"{n}\\N{NO-BREAK SPACE}!"', 'm = "\\xa0»"'):
        assert TYPOGRAPHY_ESCAPE.search(source), source
    # the escapes the lessons teach are content, not typography: « d\u00e9corateurs »
    assert not TYPOGRAPHY_ESCAPE.search('TEMOIN = "d\\\\u00e9corateurs"')


def numbered_in_order(names: list[str]) -> bool:
    """The files' numbers rise with the path, each once."""
    numbers = [int(name[:2]) for name in names]
    return numbers == sorted(set(numbers))


def test_files_are_numbered_in_the_paths_order():
    assert all(name[:2].isdigit() for name in PARCOURS.notebooks), PARCOURS.notebooks
    assert numbered_in_order([START, *PARCOURS.notebooks]), PARCOURS.notebooks
    # the annex checks the learner's TP: it comes after it, and after the lesson 7 before it
    assert PARCOURS.appendices and all(name not in PARCOURS.lessons for name in PARCOURS.appendices)
    # control: the order issue 34 found (the annex numbered 06, after lesson 07) is refused
    assert not numbered_in_order(["05_x.ipynb", "07_y.ipynb", "06_annexe_adk.ipynb"])


def test_the_readme_lists_every_notebook_of_the_path_in_its_order():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    table = readme.split("### Les leçons", 1)[1].split("\n### ", 1)[0]
    rows = re.findall(r"^\| `([\w-]+)` \|", table, re.M)
    expected = [Path(name).stem for name in (START, *PARCOURS.notebooks, GLOSSARY)]
    assert rows == expected


@pytest.mark.slow
def test_lesson_3s_read_only_connection_closes_last_and_leaves_the_wal(executed_lessons):
    """What lesson 5 (l5-c05) says of lesson 3, on lesson 3's own run: its `lecture`
    (mode=ro) closes after the service, so lecon03.db-wal stays, until a connection that can
    write opens and closes (lesson 3 shows both, and leaves its folder tidy); lesson 5, whose
    last connection can write, leaves no -wal (the control)."""
    nb3, _s, folder3 = executed_lessons["03_ce_que_contient_le_fichier.ipynb"]
    said = text_of(nb3, "l3-c24")
    assert "Lecture fermée : ['lecon03.db', 'lecon03.db-shm', 'lecon03.db-wal']" in said, said
    assert sorted(p.name for p in folder3.glob("lecon03.db*")) == ["lecon03.db"]
    _nb, _s, folder5 = executed_lessons["05_reprendre_apres_redemarrage.ipynb"]
    assert sorted(p.name for p in folder5.glob("lecon05.db*")) == ["lecon05.db"]
