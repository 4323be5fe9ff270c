"""Student ids as the class tools read them: one rule to admit them, matched, never guessed.

One reader of the class list and one rule for ids, ``grader/hub/roster.py`` (standard library
only), loaded here from its path: the hub, ``make students``, collect and zip collection admit
the same ids. An id already in the class's data is only checked as a folder name
(`stored_id_problem`): it can still be graded, exported and erased. Ids are compared in NFC
(macOS writes ``chloé`` decomposed); an unknown id is never mapped, only hinted at."""

from __future__ import annotations

import difflib
import importlib.util
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from .gradebook import gradebook_rows

__all__ = [
    "ROSTER_FILE",
    "Member",
    "RosterError",
    "close_ids",
    "closest",
    "decode_roster",
    "id_problem",
    "normalize_id",
    "parse_roster",
    "quoted",
    "read_roster",
    "registered_students",
    "shown",
    "stored_id_problem",
]

# the hub's folder beside this package (kept in the instructors' course template for this file)
ROSTER_FILE = Path(__file__).resolve().parents[2] / "hub" / "roster.py"


def _hub_roster() -> ModuleType:
    """grader/hub/roster.py, loaded from its file (the hub's folder is no package)."""
    loaded = sys.modules.get("roster")
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() == ROSTER_FILE:
        return loaded
    spec = importlib.util.spec_from_file_location("cours_roster", ROSTER_FILE)
    if spec is None or spec.loader is None or not ROSTER_FILE.is_file():
        raise ImportError(f"{ROSTER_FILE}\u00a0: lecteur de la liste de la classe introuvable")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


_roster = _hub_roster()
Member = _roster.Member
RosterError = _roster.RosterError
decode_roster = _roster.decode_roster
id_problem = _roster.id_problem
parse_roster = _roster.parse_roster
read_roster = _roster.read_roster


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
    return next(iter(close_ids(value, candidates, 1)), None)


def close_ids(value: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    """Up to `n` registered ids near `value` (not itself): the same letters in another case or
    accent first, then the close spellings."""
    folded: dict[str, list[str]] = {}
    for c in sorted(set(candidates) - {value}):
        folded.setdefault(_folded(c), []).append(c)
    same = folded.get(_folded(value), [])
    near = difflib.get_close_matches(_folded(value), list(folded), n=n, cutoff=0.6)
    found = same + [c for key in near for c in folded[key]]
    return list(dict.fromkeys(found))[:n]


# not text: controls (a terminal's escape sequences), invisible formats, line/paragraph breaks
UNPRINTABLE = ("Cc", "Cf", "Zl", "Zp")


def shown(text: str) -> str:
    """`text` safe for a terminal and a log: no escape sequence, no line break that
    ``str.splitlines`` knows (a forged log line), no lone surrogate (not UTF-8)."""
    return "".join(
        repr(c)[1:-1] if unicodedata.category(c) in (*UNPRINTABLE, "Cs") else c for c in text
    )


MARKUP = '"<>&`'  # never in an id: formgrader writes ids raw into its pages' scripts


def stored_id_problem(value: str) -> str | None:
    """Why `value`, an id already in the class's data, cannot be read as one, in French, or
    None. Looser than `id_problem` (old gradebooks hold spaces, accents); never path
    separators, ``.``/``..``, controls, surrounding blanks, or what ends a string or a tag
    (formgrader writes ids raw into a script)."""
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


# by hand: a name, an e-mail or no submission; by nbgrader while grading: none (CASE, not `||`,
# OR in MySQL)
REGISTERED = (
    "SELECT id, CASE WHEN coalesce(first_name, '') <> '' OR coalesce(last_name, '') <> '' "
    "OR coalesce(email, '') <> '' THEN 1 ELSE 0 END, "
    "(SELECT count(*) FROM submitted_assignment WHERE student_id = student.id) FROM student"
)


def registered_students(db_url: str) -> list[str]:
    """Ids of the class list, or ``[]`` when the class has none (then any id is accepted): the
    students nbgrader registered itself are no class list (else every student not yet graded
    would be refused after a grading stopped half-way)."""
    rows = gradebook_rows(db_url, REGISTERED) or []
    if not any(named or not submissions for _, named, submissions in rows):
        return []
    return sorted(row[0] for row in rows)
