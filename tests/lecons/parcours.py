"""The course's path, read from the one place that lists it: the table « Le parcours » of the
start page (solutions/lecons/00_commencer_ici.ipynb), the page a learner opens first.

Every list of lessons the tests use comes from here, so a new lesson is its notebook and its
row in that table, and no edit in tests; ``test_parcours.py`` checks the table against the
folder (every numbered notebook on it once, numbers in order, times as computed)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
from helpers import REPO

__all__ = ["GLOSSARY", "PARCOURS", "ROW", "SOLUTIONS", "START", "TP", "Parcours", "Step", "read"]

SOLUTIONS = REPO / "solutions" / "lecons"
START = "00_commencer_ici.ipynb"  # `make lab` opens this one: keep the name
GLOSSARY = "glossaire.ipynb"
TP = "../oublier/oublier.ipynb"  # the graded TP, as the start page links it
# a row of the table: | step | [title](notebook) | what you do | time |
ROW = re.compile(r"^\| (\S+) \| \[[^\]]+\]\(([^)]+)\) \|.*\| ([^|]+) \|$", re.M)


@dataclass(frozen=True)
class Step:
    """One row of the path: its label ("1", "TP", "annexe"), its link, its stated time."""

    label: str
    notebook: str
    time: str

    @property
    def numbered(self) -> bool:
        return self.label.isdigit()


@dataclass(frozen=True)
class Parcours:
    """The rows in the page's order, and the groups the tests check in different ways."""

    steps: tuple[Step, ...]

    def _tp_index(self) -> int:
        return [s.notebook for s in self.steps].index(TP)

    @property
    def lessons(self) -> list[str]:
        """The numbered lessons before the graded TP (what the TP assumes)."""
        return [s.notebook for s in self.steps[: self._tp_index()] if s.numbered]

    @property
    def after_tp(self) -> list[str]:
        """The numbered lessons after the TP (they assume what the TP makes a learner write)."""
        return [s.notebook for s in self.steps[self._tp_index() + 1 :] if s.numbered]

    @property
    def appendices(self) -> list[str]:
        """The optional notebooks: a step neither numbered nor the TP."""
        return [s.notebook for s in self.steps if not s.numbered and s.notebook != TP]

    @property
    def notebooks(self) -> list[str]:
        """Every notebook of the path in this folder (all but the TP), in the page's order."""
        return [s.notebook for s in self.steps if s.notebook != TP]


def read(folder: Path = SOLUTIONS) -> Parcours:
    """The path as the start page of ``folder`` states it; an error if it has no table with
    the TP in it (a test would otherwise run on an empty list and prove nothing)."""
    nb = nbformat.read(folder / START, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    text = text.replace("\u00a0", " ")  # the times may be typeset "25\u00a0min"
    steps = tuple(Step(label, target, time.strip()) for label, target, time in ROW.findall(text))
    if TP not in [s.notebook for s in steps]:
        raise ValueError(f"{folder / START}: no table « Le parcours » with the TP ({TP})")
    return Parcours(steps)


PARCOURS = read()
