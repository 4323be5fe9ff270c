"""The lesson list comes from one place, the start page's path (parcours.py): a new lesson is
its notebook and its row on that page, and the lesson tests run on it with no edit in tests."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import parcours
import pytest
from helpers import REPO
from parcours import START, TP

SOLUTIONS = REPO / "solutions" / "lecons"
STUDENT = REPO / "notebooks" / "lecons"
NEW = "09_nouvelle_lecon.ipynb"  # after lesson 7 and the annex, 08
MODEL = "05_reprendre_apres_redemarrage.ipynb"  # the new lesson is a renumbered copy of it
# tests that take their notebook list from the path, one that takes every notebook of the
# folder, and the one that checks the page against the folder
FROM_THE_FOLDER = "tests/lecons/test_lecons.py::test_sources_are_clean_and_structured"
FROM_THE_PATH = (
    "tests/lecons/test_parcours.py::test_every_lesson_has_a_recap",
    "tests/lecons/test_predictions.py::test_every_lesson_keeps_a_prediction_quiz",
    "tests/lecons/test_lecons_issue21.py::test_one_register_one_term_and_names_with_a_capital",
)
ORDER = "tests/lecons/test_parcours.py::test_the_start_page_gives_the_order_and_the_computed_times"


def renumbered(source: Path, number: int) -> nbformat.NotebookNode:
    """A copy of a lesson as lesson ``number``: its cell ids take the new prefix."""
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        cell.id = re.sub(r"^l\d+-c", f"l{number}-c", cell.id)
    return nb


def row_of(name: str) -> str:
    """The start page's table row that links ``name``."""
    page = nbformat.read(SOLUTIONS / START, as_version=4)
    text = "\n".join(c.source for c in page.cells if c.cell_type == "markdown")
    return next(line for line in text.splitlines() if f"]({name})" in line)


def with_row(folder: Path, after: str, row: str | None) -> None:
    """The start page of ``folder`` with ``row`` added after the row that links ``after``."""
    page = nbformat.read(folder / START, as_version=4)
    anchor = row_of(after)
    cell = next(c for c in page.cells if anchor in c.source)
    if row is not None:
        cell.source = cell.source.replace(anchor, f"{anchor}\n{row}")
    nbformat.write(page, folder / START)


def new_row(label: str, name: str) -> str:
    """A row for ``name`` with the model lesson's time (the new lesson is the same length)."""
    time = row_of(MODEL).rsplit("|", 2)[1].strip()
    return f"| {label} | [Une nouvelle leçon]({name}) | ce que vous y faites | {time} |"


def test_the_path_reads_a_new_lesson_before_or_after_the_tp(tmp_path: Path):
    shutil.copy(SOLUTIONS / START, tmp_path / START)
    before = parcours.read(tmp_path)
    assert before == parcours.PARCOURS
    with_row(tmp_path, parcours.PARCOURS.lessons[-1], new_row("6", "06_lecon_six.ipynb"))
    path = parcours.read(tmp_path)
    assert path.lessons == [*before.lessons, "06_lecon_six.ipynb"]
    assert (path.after_tp, path.appendices) == (before.after_tp, before.appendices)
    shutil.copy(SOLUTIONS / START, tmp_path / START)
    with_row(tmp_path, before.after_tp[-1], new_row("9", NEW))
    path = parcours.read(tmp_path)
    assert path.after_tp == [*before.after_tp, NEW] and path.lessons == before.lessons
    assert path.notebooks == [*before.notebooks[:-1], NEW, before.notebooks[-1]]


def test_a_start_page_without_the_path_is_an_error(tmp_path: Path):
    page = nbformat.read(SOLUTIONS / START, as_version=4)
    for cell in page.cells:
        cell.source = cell.source.replace(f"]({TP})", "](ailleurs.ipynb)")
    nbformat.write(page, tmp_path / START)
    with pytest.raises(ValueError, match="Le parcours"):
        parcours.read(tmp_path)


def course_copy(dest: Path, row: str | None) -> Path:
    """This checkout's tests and lessons in ``dest``, with lesson 9 (a renumbered lesson 5) in
    both trees and, if ``row`` is given, its row on the start page; nothing in tests edited."""
    dest.mkdir()
    shutil.copy(REPO / "pyproject.toml", dest)
    shutil.copytree(
        REPO / "tests", dest / "tests", ignore=shutil.ignore_patterns("__pycache__", "hub")
    )
    for tree, target in ((SOLUTIONS, "solutions/lecons"), (STUDENT, "notebooks/lecons")):
        shutil.copytree(tree, dest / target)
        nbformat.write(renumbered(tree / MODEL, 9), dest / target / NEW)
    (dest / "grader").symlink_to(REPO / "grader")
    with_row(dest / "solutions" / "lecons", parcours.PARCOURS.after_tp[-1], row)
    return dest


def run_pytest(copy: Path, *args: str) -> dict[str, str]:
    """The copy's own tests run by pytest in the copy: node id -> outcome."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    basetemp = copy / "tmp"  # its own, inside this test's folder
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-v", f"--basetemp={basetemp}", *args],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^(tests/\S+) (PASSED|FAILED|ERROR|SKIPPED)", proc.stdout, re.M)
    }
    assert found, proc.stdout[-3000:] + proc.stderr[-3000:]
    return found


@pytest.mark.slow
def test_a_new_lesson_reaches_the_lesson_tests_with_no_edit_in_tests(tmp_path: Path):
    """In a copy with lesson 9 and its row, the tests that go over the lessons run on it and
    pass, and the page check passes; the control, the same copy without the row, fails the
    page check (a lesson the path forgets) and gives lesson 9 none of those tests."""
    tests = (FROM_THE_FOLDER, *FROM_THE_PATH)
    files = sorted({node.split("::")[0] for node in (*tests, ORDER)})
    names = " or ".join(node.split("::")[1] for node in tests)
    args = ["-k", f"(09_nouvelle and ({names})) or {ORDER.split('::')[1]}", *files]
    added = run_pytest(course_copy(tmp_path / "avec", new_row("9", NEW)), *args)
    assert added == {ORDER: "PASSED", **{f"{test}[{NEW}]": "PASSED" for test in tests}}
    forgotten = run_pytest(course_copy(tmp_path / "sans", None), *args)
    assert forgotten == {ORDER: "FAILED", f"{FROM_THE_FOLDER}[{NEW}]": "PASSED"}
