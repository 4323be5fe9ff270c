"""CONTRIBUTING.md's table « The one file to edit »: every row names the test that enforces it,
and every path it names exists (a row that points to a moved or deleted file misleads the next
contributor)."""

from __future__ import annotations

import re

from helpers import REPO

CONTRIBUTING = REPO / "CONTRIBUTING.md"


def table_rows(text: str) -> list[str]:
    """The rows of the table under « ## The one file to edit » (header and rule left out)."""
    section = text.split("## The one file to edit", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return rows[2:]


def row_problems(row: str) -> list[str]:
    what = row.split("|")[1].strip()
    out = []
    tests = re.findall(r"`(tests/[\w/]+\.py)(?:::\w+)?`", row)
    if not tests:
        out.append(f"« {what} »: names no test that enforces it")
    for path in re.findall(r"`((?:tests|course|grader|solutions)/[\w/.-]+\.(?:py|ipynb|mk))", row):
        if "<" not in path and "NN_" not in path and not (REPO / path).exists():
            out.append(f"« {what} »: {path} does not exist")
    return out


def test_every_row_names_its_test_and_real_paths():
    rows = table_rows(CONTRIBUTING.read_text(encoding="utf-8"))
    assert len(rows) >= 5
    assert [p for row in rows for p in row_problems(row)] == []


def test_a_row_without_test_or_with_a_stale_path_is_named():
    assert row_problems("| a thing | edit `grader/grading/nulle_part.py` | then nothing |") == [
        "« a thing »: names no test that enforces it",
        "« a thing »: grader/grading/nulle_part.py does not exist",
    ]
