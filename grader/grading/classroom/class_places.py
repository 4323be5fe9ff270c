"""Where the class keeps its learners' data: the one list ``make sauvegarde``, ``make
donnees-eleve`` and ``make oublier-eleve`` read. A place the backup knows and the erasure does
not would bring an erased learner back at the next restore: add new places here or nowhere."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from .gradebook import STUDENTS, GradebookError, gradebook_rows
from .ids import normalize_id
from .paths import CourseDirs

__all__ = [
    "DEPOSITED_BY",
    "FAILURES_FILE",
    "FAILURES_TMP",
    "quarantined_for",
    "BACKED_UP",
    "id_variant",
    "id_within",
    "PER_LEARNER",
    "PLACES",
    "Place",
    "learner_ids",
    "own_folders",
    "registered_ids",
]


@dataclass(frozen=True)
class Place:
    key: str  # its CourseDirs attribute, and its folder's name inside a backup
    label: str  # French, in the commands' summaries and the erasure's list
    export_name: str  # its folder in a learner's export (empty: not exported)
    backed_up: bool  # in make sauvegarde: what an instructor cannot rebuild
    per_learner: bool  # one folder per learner, named by their id

    def folder(self, dirs: CourseDirs) -> Path:
        return getattr(dirs, self.key)


PLACES = (
    Place("submitted", "rendus", "rendus", backed_up=True, per_learner=True),
    Place("autograded", "copies notées", "copies_notees", backed_up=True, per_learner=True),
    Place("feedback", "retours", "retours", backed_up=True, per_learner=True),
    # received archives, and the copies zip collect replaced (<assignment>/remplaces/<id>/)
    Place("downloaded", "archives reçues", "copies_remplacees", backed_up=True, per_learner=False),
    # copies collect refused: the student's own copy stays in the exchange, so not backed up
    Place("quarantine", "quarantaine", "mises_de_cote", backed_up=False, per_learner=False),
    # rebuilt by make donnees-eleve, make rapport; backups are not backed up
    Place("exports", "export de ses données", "", backed_up=False, per_learner=False),
    Place("report", "rapport", "", backed_up=False, per_learner=False),
    Place("backups", "sauvegarde", "", backed_up=False, per_learner=False),
)
BACKED_UP = tuple(p for p in PLACES if p.backed_up)
PER_LEARNER = tuple(p for p in PLACES if p.per_learner)


def own_folders(parent: Path, sid: str) -> list[Path]:
    """Every `parent`/<sid> matched in NFC (a folder per form, macOS or NFD zip names, is the
    learner's too); a link never is."""
    if not parent.is_dir():
        return []
    return [
        child
        for child in sorted(parent.iterdir())
        if child.is_dir() and not child.is_symlink() and normalize_id(child.name) == sid
    ]


def _caseless(value: str) -> str:
    """Unicode's caseless match (NFKC of the case-folded NFKC): ``Ben``, ``BEN``, ``ｂｅｎ`` are
    ``ben``."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", value).casefold())


def _cleaned(value: str) -> str:
    """`value` caseless (_caseless), its format characters (Unicode category Cf: zero width
    space, soft hyphen…) removed and its trailing dots and spaces stripped (Windows drops them):
    ``BEN.``, ``ben\u200b``, ``be\u00adn`` are ``ben``. Letters of another script that look
    the same (a Cyrillic « о » for a Latin « o ») are another id: out of this rule's scope."""
    kept = "".join(c for c in _caseless(value) if unicodedata.category(c) != "Cf")
    return re.sub(r"[\s.]+\Z", "", kept)


def id_variant(name: str, sid: str) -> bool:
    """Whether `name` (a folder's, an exchange entry's id) is not `sid` (NFC) but the same id
    once case, Unicode form, invisible characters and trailing dots and spaces are set aside:
    another id for nbgrader, which tells them apart (maybe another learner's), so never `sid`'s
    own folder, yet maybe a copy of their data."""
    return normalize_id(name) != sid and _cleaned(name) == _cleaned(sid)


# names the systems leave in any folder (macOS, Windows, Jupyter): never a copy's name
_SYSTEM_NAMES = frozenset({".ds_store", "thumbs.db", "desktop.ini", ".ipynb_checkpoints"})


def id_within(name: str, sid: str, registered: Iterable[str] = ()) -> bool:
    """Whether `name` holds `sid` whole (as id_variant compares them), bounded by its start or
    end or by a character that is neither a letter nor a digit: a copy's name (``ben.old``,
    ``old_ben_copie``, ``ben (2)``), never ``benoit``; not `sid` itself, nor a `registered` id
    (NFC: ``ben.x``, another learner's own folder), nor what systems leave everywhere."""
    own = normalize_id(name)
    if own == sid or own in registered or name.casefold() in _SYSTEM_NAMES:
        return False
    bounded = rf"(?<![^\W_]){re.escape(_cleaned(sid))}(?![^\W_])"
    return re.search(bounded, _cleaned(name)) is not None


def learner_ids(dirs: CourseDirs, roster_ids: Iterable[str] = ()) -> set[str]:
    """Every learner id the class names (NFC): roster, gradebook (read-only), per-learner
    folders, the copies zip collect replaced."""
    ids = registered_ids(dirs, roster_ids)
    for place in PER_LEARNER:
        folder = place.folder(dirs)
        if folder.is_dir():
            ids |= {normalize_id(p.name) for p in folder.iterdir() if p.is_dir()}
    ids |= {normalize_id(p.name) for p in dirs.downloaded.glob("*/remplaces/*") if p.is_dir()}
    return ids


def registered_ids(dirs: CourseDirs, roster_ids: Iterable[str] = ()) -> set[str]:
    """The learners the class registered (NFC): its roster and its gradebook's students
    (read-only, a file or a server), never a folder's name alone (a copy in the wrong case, a
    stray folder)."""
    ids = {normalize_id(i) for i in roster_ids}
    # a damaged or unreachable gradebook is named by the command that needs its rows
    with suppress(GradebookError):
        rows = gradebook_rows(dirs.db_url, STUDENTS) or []
        ids |= {normalize_id(r[0]) for r in rows if isinstance(r[0], str)}
    return ids


DEPOSITED_BY = "DEPOSE_PAR.txt"  # in a set-aside copy: who owned its files in the exchange
# beside the gradebook: the submissions make grade saw fail, by id (runs.known_failures); the
# erasure cleans it as a log
FAILURES_FILE = "echecs-autograde.json"
FAILURES_TMP = ".echecs-"  # its next version being written: left only by a make grade stopped


def quarantined_for(quarantine: Path, sid: str, *, authored: bool = False) -> list[Path]:
    """The set-aside copies that are `sid`'s: named ``<id>+…`` or deposited by them (named in
    ``DEPOSE_PAR.txt``, which collect writes from the files' owners); links never followed.
    `authored` (an export): one in their name that a classmate deposited holds the classmate's
    work, so it is not theirs."""
    found = []
    for base in sorted(quarantine.iterdir()) if quarantine.is_dir() else []:
        for entry in sorted(base.iterdir()) if base.is_dir() and not base.is_symlink() else []:
            if entry.is_symlink() or not entry.is_dir():
                continue
            named = normalize_id(entry.name).split("+")[0] == sid
            note, by = entry / DEPOSITED_BY, ""
            with suppress(OSError):
                by = note.read_text(encoding="utf-8") if note.is_file() else ""
            depositors = {normalize_id(line.strip()) for line in by.splitlines() if line.strip()}
            if sid in depositors or (named and not (authored and depositors)):
                found.append(entry)
    return found
