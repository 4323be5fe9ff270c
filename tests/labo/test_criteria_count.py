"""The number of the TP's criteria has one source, ``course.labo.criteria.CRITERIA``
(CONTRIBUTING.md: a criterion is added there): every text a learner or an instructor reads that
counts them (the statement, the README, the learner's API, the lessons) says that number, in
words or in digits, and the criteria are numbered 1..N in order."""

from __future__ import annotations

import re

import pytest
from helpers import REPO

from course.labo.criteria import CRITERIA

WORDS = {
    "cinq": 5,
    "six": 6,
    "sept": 7,
    "huit": 8,
    "neuf": 9,
    "dix": 10,
    "onze": 11,
    "douze": 12,
}
COUNT = re.compile(r"\b(\d+|" + "|".join(WORDS) + r")\s+critères\b", re.IGNORECASE)

# Where the criteria are counted in prose: every file a learner or an instructor reads.
TEXTS = sorted(
    {
        *REPO.glob("solutions/**/*.ipynb"),
        *REPO.glob("course/labo/*.py"),
        *REPO.glob("grader/grading/*.py"),
        *REPO.glob("*.md"),
        *REPO.glob("grader/*.md"),
        *REPO.glob("grader/templates/**/*.j2"),
    }
)


def test_criteria_are_numbered_in_order():
    assert [c.number for c in CRITERIA] == list(range(1, len(CRITERIA) + 1))
    assert len({c.key for c in CRITERIA}) == len(CRITERIA)


def _counts(text: str) -> list[int]:
    """Every criteria count in `text` ("sept critères", "3/7 critères")."""
    return [WORDS.get(m.group(1).lower()) or int(m.group(1)) for m in COUNT.finditer(text)]


def test_the_count_is_found_where_it_is_said():
    """The scan itself is checked: the texts do count the criteria, in words and in digits."""
    said = {str(p.relative_to(REPO)): _counts(p.read_text(encoding="utf-8")) for p in TEXTS}
    assert sum(len(v) for v in said.values()) >= 3, said
    assert _counts("vérifie les sept critères ; 3/7 critères respectés") == [7, 7]
    assert _counts("les 12 critères") == [12]


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_text_counts_the_criteria_of_the_table(path):
    counts = _counts(path.read_text(encoding="utf-8"))
    wrong = [n for n in counts if n != len(CRITERIA)]
    assert not wrong, (
        f"{path.relative_to(REPO)} compte {wrong} critères, la table en a {len(CRITERIA)} "
        "(course/labo/criteria.py)"
    )
