"""The path through the course: the start page (order, computed times, how the TP is graded),
the glossary and its anchors, links, recaps, hints and solutions, the next step after each
notebook."""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat
import pytest
from helpers import REPO, tp_points
from notebook_text import NBSP, markdown, tags
from parcours import GLOSSARY, PARCOURS, START, TP

SOLUTIONS = REPO / "solutions" / "lecons"
STUDENT = REPO / "notebooks" / "lecons"
TP_SOURCE = REPO / "solutions" / "oublier" / "oublier.ipynb"
# the path, from the start page's table (parcours.py): the lessons before the TP, the ones
# after it (they assume what oublier must ensure), the optional appendices
LESSONS = PARCOURS.lessons
AFTER_TP = PARCOURS.after_tp
APPENDICES = PARCOURS.appendices
LINK = re.compile(r"\[[^\]]+\]\(([^)\s]+)\)")
# the terms the issue and the brief fix (slug of their anchor in the glossary)
REQUIRED_TERMS = (
    "session seance evenement etat portee cascade cle-etrangere page-libre wal checkpoint "
    "vacuum droit-a-l-effacement notebook tp repartiteur-de-charge eleve enseignant rendu "
    "bac-a-sable"
).split()
# how the start page computes a notebook's time (stated in its text)
WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_CELL = 1
MINUTES_PER_QUIZ = 1.5
MINUTES_PER_EXERCISE = 10


def read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def minutes(nb) -> int:
    """Reading time of the text, plus a fixed time per code cell, quiz and exercise, rounded
    up to 5 minutes."""
    words = sum(len(re.findall(r"\w+", c.source)) for c in nb.cells if c.cell_type == "markdown")
    quizzes = sum("quiz" in tags(c) for c in nb.cells)
    exercises = sum(bool(c.metadata.get("nbgrader", {}).get("solution")) for c in nb.cells)
    code = sum(
        1
        for c in nb.cells
        if c.cell_type == "code"
        and c.source.strip()
        and "quiz" not in tags(c)
        and not c.metadata.get("nbgrader", {}).get("solution")
        and not c.source.strip().startswith("bilan(")
    )
    total = (
        words / WORDS_PER_MINUTE
        + code * MINUTES_PER_CODE_CELL
        + quizzes * MINUTES_PER_QUIZ
        + exercises * MINUTES_PER_EXERCISE
    )
    return math.ceil(total / 5) * 5


def glossary_anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>', markdown(read(SOLUTIONS / GLOSSARY))))


def test_the_start_page_gives_the_order_and_the_computed_times():
    start = markdown(read(SOLUTIONS / START))
    steps = PARCOURS.steps
    assert [s.notebook for s in steps].count(TP) == 1, "the graded TP, once"
    # every numbered notebook of the folder is a step, once; the start page is the page itself
    numbered = sorted(p.name for p in SOLUTIONS.glob("[0-9][0-9]_*.ipynb") if p.name != START)
    assert sorted(PARCOURS.notebooks) == numbered
    # lessons 1 to n, the graded TP, the lessons after it, the optional appendices last
    assert LESSONS and [s.notebook for s in steps] == [*LESSONS, TP, *AFTER_TP, *APPENDICES]
    for step in steps:
        if step.numbered:
            assert step.notebook.startswith(f"{int(step.label):02d}_"), step
    numbers = [int(s.label) for s in steps if s.numbered]
    assert numbers[: len(LESSONS)] == list(range(1, len(LESSONS) + 1)), "lessons 1 to n"
    assert numbers == sorted(set(numbers)), "numbers in order, each once"
    assert [s.label for s in steps if s.notebook == TP] == ["TP"]
    stated = {s.notebook: s.time for s in steps}
    for name in PARCOURS.notebooks:
        assert stated[name] == f"{minutes(read(STUDENT / name))} min", name
    # the rule the test applies is the rule the page states
    start = " ".join(start.split())
    assert f"({WORDS_PER_MINUTE} mots par minute)" in start
    assert "1 minute par cellule de code, 1,5 minute par quiz et 10 minutes par exercice" in start
    assert "arrondi aux 5 minutes supérieures" in start


def test_the_start_page_covers_prerequisites_await_quizzes_and_the_tp():
    nb = read(SOLUTIONS / START)
    start = markdown(nb)
    for heading in (
        "## Ce qu'il faut savoir avant",
        "## `async def` et `await` en trois minutes",
        "## Les quiz et le bilan",
        "## Le TP noté",
    ):
        assert heading in start
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "async def saluer" in code and "await sans_await" in code  # top-level await, run


def test_the_start_page_states_the_tp_grading_as_the_tp_defines_it():
    graded = [
        c
        for c in read(TP_SOURCE).cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"]["solution"]
    ]
    total = sum(c.metadata["nbgrader"]["points"] for c in graded)
    hidden = sum(c.metadata["nbgrader"]["points"] for c in graded if "HIDDEN TESTS" in c.source)
    by_hand = sum(
        c.metadata["nbgrader"]["points"]
        for c in read(TP_SOURCE).cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.metadata["nbgrader"]["solution"]
    )
    start = markdown(read(SOLUTIONS / START))
    assert f"**visibles** ({total - hidden} points)" in start
    assert f"**cachés** ({hidden} points)" in start
    # the points stated one way everywhere: the start page, the TP's statement, the README
    stated = f"noté sur **{total + by_hand} points** : **{total} points** de tests automatiques"
    tp = markdown(read(TP_SOURCE))
    readme = " ".join((REPO / "README.md").read_text().replace(NBSP, " ").split())
    for where, text in (("start", start), ("TP", tp), ("README", readme)):
        text = " ".join(text.split())
        assert stated in text, where
        assert f"**{by_hand} points** de documentation" in text, where
    assert (total, by_hand) == tp_points()


# what a learner reads first: the course's README, and the one of the package they are given
LEARNER_READMES = (REPO / "README.md", REPO / "grader" / "grading" / "student_package.md")


def test_the_learners_readmes_name_every_graded_tp():
    """Each graded TP of solutions/ (``oublier``, ``oublier_partage``), by its notebook and the
    subject of its title, where the README names the TPs: the second one was left out."""
    tps = sorted(p.parent for p in (REPO / "solutions").glob("*/*.ipynb") if p.parent != SOLUTIONS)
    assert [tp.name for tp in tps] == ["oublier", "oublier_partage"]
    for readme in LEARNER_READMES:
        text = " ".join(readme.read_text(encoding="utf-8").replace(NBSP, " ").split())
        for tp in tps:
            title = read(tp / f"{tp.name}.ipynb").cells[0].source.splitlines()[0]
            subject = title.replace(NBSP, " ").split(" : ", 1)[1]  # « # TP noté : oublier… »
            named = f"« {subject} » (`notebooks/{tp.name}/{tp.name}.ipynb`)"
            assert named in text, f"{readme.name}: {named}"


def test_the_glossary_defines_the_course_vocabulary_with_anchors():
    anchors = glossary_anchors()
    assert set(REQUIRED_TERMS) <= anchors, set(REQUIRED_TERMS) - anchors
    glossary = read(SOLUTIONS / GLOSSARY)
    index = glossary.cells[0].source
    assert all(f"{GLOSSARY}#{slug})" in index for slug in anchors), "an index of every term"


@pytest.mark.parametrize("tree", [SOLUTIONS, STUDENT])
def test_every_relative_link_reaches_a_file_and_every_anchor_a_glossary_term(tree: Path):
    anchors = glossary_anchors()
    checked = 0
    for path in sorted(tree.glob("*.ipynb")):
        for cell in read(path).cells:
            if cell.cell_type != "markdown":
                continue
            for target in LINK.findall(cell.source):
                if re.match(r"[a-z]+:", target):
                    continue  # no remote links in the lessons (test_lecons checks it)
                file, _, anchor = target.partition("#")
                assert (path.parent / file).is_file(), f"{path.name} {cell.id}: {target}"
                if anchor:
                    assert file == GLOSSARY and anchor in anchors, f"{path.name}: {target}"
                checked += 1
    assert checked > 50


def test_lessons_link_the_core_terms_to_the_glossary():
    linked = set()
    for name in [START, *LESSONS]:
        found = set(re.findall(rf"\]\({GLOSSARY}#([a-z0-9-]+)\)", markdown(read(SOLUTIONS / name))))
        assert found or name == START, f"{name} never links to the glossary"
        linked |= found
    core = set(REQUIRED_TERMS) - {"notebook", "tp", "eleve", "rendu"}
    assert core <= linked, core - linked


@pytest.mark.parametrize("name", PARCOURS.notebooks)
def test_every_lesson_has_a_recap(name: str):
    text = markdown(read(SOLUTIONS / name))
    recap = text.split("## À retenir", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^- ", recap, re.M)) >= 3


def test_each_notebook_says_what_comes_next_and_the_last_lesson_points_to_the_tp():
    order = [START, *LESSONS]
    for current, following in zip(order, order[1:], strict=False):
        last = read(SOLUTIONS / current).cells[-1].source
        assert following in last, f"{current}: its score should send to {following}"
    for name in (LESSONS[-1], *APPENDICES):
        nb = read(SOLUTIONS / name)
        assert "oublier/oublier.ipynb" in nb.cells[-1].source
        assert "](../oublier/oublier.ipynb)" in markdown(nb)
    assert "leçon suivante" not in read(SOLUTIONS / LESSONS[-1]).cells[-1].source
