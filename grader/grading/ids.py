"""Student ids as the class tools read them: matched, never guessed.

An id comes from a folder name, an archive member, a roster or ``--student``; the same id can
reach us in two Unicode forms (macOS writes ``chloé`` as ``chlo`` + U+0301 in zips and on
disk, a roster typed on Windows has the composed ``é``). Every id is compared in NFC. An id
that matches no registered student is never mapped to one: it is named, with the closest
registered id as a hint for the instructor.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Iterable

__all__ = [
    "UNPRINTABLE",
    "close_ids",
    "closest",
    "id_problem",
    "normalize_id",
    "quoted",
    "registered_students",
]


def normalize_id(value: str) -> str:
    """The id in Unicode NFC (composed accents), the form every tool compares."""
    return unicodedata.normalize("NFC", value)


def quoted(text: object) -> str:
    """`text` between French quotes, with their no-break spaces."""
    return f"«\u00a0{text}\u00a0»"


def _folded(value: str) -> str:
    """Lower case without accents: only to *suggest* an id, never to match one."""
    decomposed = unicodedata.normalize("NFD", value.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def closest(value: str, candidates: Iterable[str]) -> str | None:
    """The registered id nearest to `value` (a hint in a message), or None."""
    options = sorted(set(candidates))
    if not options:
        return None
    folded = {_folded(c): c for c in options}
    if _folded(value) in folded:
        return folded[_folded(value)]
    best = difflib.get_close_matches(_folded(value), list(folded), n=1, cutoff=0.6)
    return folded[best[0]] if best else None


def close_ids(value: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` registered ids near `value`, nearest first: the same letters in another case or
    accent first (« Chloé » for « chloé »), then the close spellings."""
    options = sorted(set(candidates) - {value})
    folded: dict[str, list[str]] = {}
    for c in options:
        folded.setdefault(_folded(c), []).append(c)
    same = folded.get(_folded(value), [])
    near = difflib.get_close_matches(_folded(value), list(folded), n=n, cutoff=0.6)
    found = same + [c for key in near for c in folded[key]]
    return list(dict.fromkeys(found))[:n]


# Unicode categories of characters that are not text: controls (a terminal's escape sequences),
# invisible formats, line and paragraph separators
UNPRINTABLE = ("Cc", "Cf", "Zl", "Zp")
MARKUP = '"<>&`'  # never in an id: formgrader writes ids raw into its pages' scripts


def id_problem(value: str) -> str | None:
    """Why `value` cannot be a student id (a folder name in submitted/), in French, or None.

    Spaces and accents are allowed; path separators, ``.``/``..``, control characters,
    surrounding blanks and the characters that end a string or a tag in a page are not
    (nbgrader's formgrader writes an id raw into a script: ``var student_id = "…";``).
    """
    if not value:
        return "identifiant vide"
    if value in (".", ".."):
        return f"identifiant {quoted(value)} interdit"
    if "/" in value or "\\" in value:
        return "identifiant contenant " + quoted("/") + " ou " + quoted("\\")
    if any(unicodedata.category(c) in UNPRINTABLE for c in value):
        return "identifiant contenant un caractère de contrôle"
    if any(c in MARKUP for c in value):
        return "identifiant contenant " + ", ".join(quoted(c) for c in MARKUP)
    if value != value.strip():
        return "identifiant commençant ou finissant par un blanc"
    return None


def registered_students(db_url: str) -> list[str]:
    """Ids of the class list, or ``[]`` when the class has none (then any id is accepted).

    A class has a list once one student was registered by hand: with a name or an e-mail
    (``make students``, ``nbgrader db student import``), or before handing anything in
    (``nbgrader db student add``). The students nbgrader registers itself while grading have
    neither: counting them would refuse, as « pas un élève inscrit », every student not yet
    graded after a grading stopped half-way, a backup restored from the middle of one, or a
    late submission in a class without a list.
    """
    from nbgrader.api import Gradebook

    with Gradebook(db_url) as gb:
        students = list(gb.students)
        if not any(s.first_name or s.last_name or s.email or not s.submissions for s in students):
            return []
        return sorted(s.id for s in students)
