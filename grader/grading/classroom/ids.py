"""Student ids as the class tools read them: one rule to admit them, matched, never guessed.

The class list has one reader and ids one rule, ``grader/hub/roster.py`` (`read_roster`,
`ID_PATTERN`, `id_problem`): the hub loads that file as it is (standard library only, mounted
beside its configuration), the class tools load it here from its path, so the hub, ``make
students``, collect and zip collection admit and refuse the same ids. An id already in the
class's data (a gradebook row, a ``submitted/`` folder, made before the rule or by nbgrader's
own commands) is only checked as a folder name (`stored_id_problem`): it can still be graded,
exported and erased.

The same id can reach us in two Unicode forms (macOS writes ``chloé`` as ``chlo`` + U+0301 in
zips and on disk). Every id is compared in NFC. An id that matches no registered student is
never mapped to one: it is named, with the closest registered id as a hint for the instructor.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

__all__ = [
    "ID_PATTERN",
    "ROSTER_FILE",
    "UNPRINTABLE",
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
    """grader/hub/roster.py, loaded from its file: the hub imports it as the top-level `roster`
    from its own folder, which is not a package and is not on this package's path."""
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
ID_PATTERN = _roster.ID_PATTERN
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


def shown(text: str) -> str:
    """`text` safe for a terminal and for a log read back line by line: a name a student chose
    may hold escape sequences, any line break ``str.splitlines`` knows (which would forge a log
    line) or bytes that are not UTF-8 (lone surrogates, which no UTF-8 file can hold)."""
    return "".join(
        repr(c)[1:-1] if unicodedata.category(c) in (*UNPRINTABLE, "Cs") else c for c in text
    )


MARKUP = '"<>&`'  # never in an id: formgrader writes ids raw into its pages' scripts


def stored_id_problem(value: str) -> str | None:
    """Why `value`, an id already in the class's data, cannot be read as one (a folder name in
    submitted/), in French, or None. Looser than `id_problem`, the rule that admits ids: a
    gradebook from before it may hold spaces or accents, and its learners are still graded,
    exported and erased. Path separators, ``.``/``..``, control characters, surrounding blanks
    and the characters that end a string or a tag in a page never are (nbgrader's formgrader
    writes an id raw into a script: ``var student_id = "…";``).
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
