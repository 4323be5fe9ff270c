"""The graded answers as code, and how much of one a block a learner reads reproduces: the
measure of tests/lecons/test_sans_corrige_code.py, kept apart for the test and its controls.

An answer is compared as a token sequence, not as text: comments and layout dropped, every name
that is neither a Python keyword nor an attribute read as one placeholder (a renamed variable
is the same code), the
text of every string kept, lower case with its spaces collapsed (the SQL is the answer). A
notebook reproduces an answer by the share of the answer's runs of ``SHINGLE`` consecutive tokens
that appear in its code: every code cell and every fenced block of its Markdown, folded
(``<details>``) or not. Runs never span two blocks, but a notebook's blocks are pooled, so an
answer split over two cells or a cell and a fold is found as well as an answer in one place.
"""

from __future__ import annotations

import json
import keyword
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from helpers import REPO

__all__ = [
    "SHINGLE",
    "THRESHOLD",
    "Answer",
    "blocks",
    "graded_answers",
    "reproduced",
    "shingles",
    "tokens",
]

SHINGLE = 6  # tokens per run: « DELETE FROM user_states … » spans a string and its neighbours
THRESHOLD = 0.6  # share of an answer's runs that makes a notebook hold the answer
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
TOKEN = re.compile(
    r"""(?P<string>[rRbBuUfF]{0,2}(?:'''.*?'''|\"\"\".*?\"\"\"|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))"""
    r"|(?P<comment>\#[^\n]*)"
    r"|(?P<name>[^\W\d]\w*)"
    r"|(?P<number>\d[\w.]*)"
    r"|(?P<op>\*\*=?|//=?|->|:=|[=!<>]=|[-+*/%&|^@]=|\S)",
    re.S,
)


def tokens(code: str) -> list[str]:
    """The code's tokens, normalised (see the module's docstring)."""
    found = []
    for match in TOKEN.finditer(code):
        kind, text = match.lastgroup, match.group()
        if kind == "comment":
            continue
        if kind == "string":
            body = re.sub(r"^[rRbBuUfF]*('''|\"\"\"|'|\")|('''|\"\"\"|'|\")$", "", text)
            found.append("S:" + " ".join(body.lower().split()))
        elif kind == "name":  # an attribute keeps its name (``.execute``, ``.db_path``)
            kept = keyword.iskeyword(text) or (found and found[-1] == ".")
            found.append(text if kept else "N")
        else:
            found.append(text)
    return found


def shingles(code: str) -> set[tuple[str, ...]]:
    seq = tokens(code)
    return {tuple(seq[i : i + SHINGLE]) for i in range(len(seq) - SHINGLE + 1)}


def blocks(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """(cell id, code) for every code cell and every fenced block of the Markdown cells."""
    found = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            found.append((cell.id, cell.source))
        elif cell.cell_type == "markdown":
            found += [(cell.id, code) for code in FENCE.findall(cell.source)]
    return found


@dataclass(frozen=True)
class Answer:
    """A graded answer: which assignment, where it comes from, its code."""

    assignment: str
    origin: str
    code: str


def _full_marks(folder: Path) -> list[Path]:
    expected = json.loads((folder / "attendus.json").read_text(encoding="utf-8"))
    best = max(v["score"] for v in expected.values())
    return [folder / f"{name}.py" for name, v in expected.items() if v["score"] == best]


def graded_answers() -> list[Answer]:
    """The instructor's solutions of both TPs, and every sample that scores full marks."""
    found = []
    for assignment in ("oublier", "oublier_partage"):
        path = REPO / "solutions" / assignment / f"{assignment}.ipynb"
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
                for code in SOLUTION.findall(cell.source):
                    found.append(Answer(assignment, f"{path.relative_to(REPO)} {cell.id}", code))
    for assignment, folder in (
        ("oublier", REPO / "grader" / "submissions"),
        ("oublier_partage", REPO / "grader" / "submissions" / "partage"),
    ):
        for path in _full_marks(folder):
            if path.is_file():
                code = path.read_text(encoding="utf-8")
                found.append(Answer(assignment, str(path.relative_to(REPO)), code))
    return found


def reproduced(answer: Answer, nb: nbformat.NotebookNode) -> float:
    """The share of the answer's runs of tokens found in the notebook's code."""
    own = shingles(answer.code)
    seen: set[tuple[str, ...]] = set()
    for _id, code in blocks(nb):
        seen |= shingles(code)
    return len(own & seen) / max(len(own), 1)
