"""The register of erased learners: what keeps an erased learner from coming back unseen.

A backup, the master roster, the LMS archive or the exchange may still hold them: a restore,
``make students``, ``make collect`` and ``make zip-collect`` skip them, name them and fail, unless
the teacher confirms a re-enrolment (``REINSCRIRE=<id>``: ``reinscrit_le`` beside the kept
``efface_le``). Erased while any register holds an erasure later than their re-enrolment: a
backup taken before the re-enrolment still erases them. No personal data: an HMAC-SHA-256 of the
id (NFC) keyed by a private random file (``.cle-effacements``, 0600), so no list of names can be
checked against it; beside the gradebook, beside the backups (a restore into a fresh clone finds
it) and in every later backup, all with one key."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..classroom.gradebook import sqlite_path
from ..classroom.ids import normalize_id, quoted
from ..french.french_format import french_day

__all__ = [
    "KEY_NAME",
    "class_registers",
    "erasure_of",
    "erased_problem",
    "skip_erased",
    "start_register",
    "REGISTER_NAME",
    "Register",
    "erased_on",
    "merge_register",
    "private_temporary",
    "registers_of",
    "record_erasure",
    "reenrol",
    "write_private",
]

KEY_NAME = ".cle-effacements"
REGISTER_NAME = "effacements.json"


def private_temporary(path: Path) -> Path:
    """Where ``write_private`` writes the next version of `path`, before it replaces it."""
    return path.with_name(f".{path.name}.tmp")


def write_private(path: Path, data: bytes) -> None:
    """Write `path` atomically, readable by its owner only (grades and ids are not public)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new folder: private too
    tmp = private_temporary(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


@dataclass(frozen=True)
class Register:
    """One register file and its key, in `folder`."""

    folder: Path

    def _data(self) -> dict:
        try:
            data = json.loads((self.folder / REGISTER_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def found(self) -> bool:
        """Whether a readable register (its file and its key) is here, even an empty one."""
        return self.key() is not None and "effaces" in self._data()

    def key(self) -> bytes | None:
        try:
            return bytes.fromhex((self.folder / KEY_NAME).read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return None

    def entries(self) -> list[dict]:
        erased = self._data().get("effaces")
        # a line damaged by hand names nobody: a fingerprint is text
        return [
            e for e in erased or [] if isinstance(e, dict) and isinstance(e.get("empreinte"), str)
        ]

    def _save(self, entries: list[dict], key: bytes) -> None:
        if self.key() != key:
            write_private(self.folder / KEY_NAME, key.hex().encode() + b"\n")
        note = (
            "Registre des élèves effacés (RGPD, article 17)\u00a0: une empreinte HMAC-SHA-256 "
            f"de l'identifiant par élève effacé, avec la clé {KEY_NAME}, l'heure (UTC) de son "
            "effacement et, s'il a été réinscrit depuis, celle de sa réinscription\u00a0; "
            "aucune donnée personnelle."
        )
        body = {"format": 1, "note": note, "effaces": entries}
        data = json.dumps(body, indent=1, ensure_ascii=False).encode()
        write_private(self.folder / REGISTER_NAME, data)


def _digest(key: bytes, sid: str) -> str:
    return hmac.new(key, normalize_id(sid).encode(), hashlib.sha256).hexdigest()


def _is(entry: dict, digest: str) -> bool:
    """Whether a register's line is the learner of `digest` (a constant-time comparison)."""
    return hmac.compare_digest(entry["empreinte"].encode(), digest.encode())  # any text


def registers_of(gradebook_dir: Path, backups: Path | None = None) -> list[Register]:
    """The registers of a class: beside its gradebook, beside its backups."""
    places = [gradebook_dir, backups or gradebook_dir / "sauvegardes"]
    return [Register(p) for p in dict.fromkeys(p.resolve() for p in places)]


def _time(entry: dict, name: str) -> datetime | None:
    """The UTC time `name` of a register's entry; an erasure recorded before times were kept
    (its day only) counts from the start of its day."""
    with suppress(KeyError, ValueError):
        return datetime.fromisoformat(str(entry[name])).astimezone(UTC)
    if name == "efface_le":
        try:
            return datetime.strptime(str(entry.get("date")), "%Y-%m-%d").replace(tzinfo=UTC)
        except ValueError:
            return datetime.min.replace(tzinfo=UTC)
    return None


@dataclass(frozen=True)
class Erasure:
    """What the registers hold on one learner: the day and time of their erasure, and of their
    re-enrolment if one came after (then they are a learner of the class again)."""

    day: str  # AAAA-MM-JJ
    erased: datetime
    reenrolled: datetime | None

    @property
    def active(self) -> bool:
        return self.reenrolled is None or self.reenrolled <= self.erased


def _erasure(entry: dict) -> Erasure:
    erased = _time(entry, "efface_le") or datetime.min.replace(tzinfo=UTC)
    return Erasure(str(entry.get("date", "?")), erased, _time(entry, "reinscrit_le"))


def erasure_of(sid: str, registers: list[Register]) -> Erasure | None:
    """`sid`'s erasure, as all `registers` hold it: erased if one of them says so (the safe
    reading of registers that disagree), else re-enrolled at the latest re-enrolment."""
    found: list[Erasure] = []
    for register in registers:
        key = register.key()
        for entry in register.entries() if key is not None else []:
            if _is(entry, _digest(key, sid)):
                found.append(_erasure(entry))
    active = [e for e in found if e.active]
    if active:
        return min(active, key=lambda e: e.erased)  # its first date is the one to tell
    return max(found, key=lambda e: e.reenrolled or e.erased, default=None)


def erased_on(sid: str, registers: list[Register]) -> str | None:
    """`sid`'s erasure date (``AAAA-MM-JJ``) in any of `registers`; None if never or re-enrolled."""
    erasure = erasure_of(sid, registers)
    return erasure.day if erasure is not None and erasure.active else None


def record_erasure(sid: str, registers: list[Register], when: datetime | None = None) -> None:
    """Record `sid` as erased in every register (created with the class's key if missing); a
    learner erased and not re-enrolled since keeps their first date."""
    # the class's key: the first one found, else a new random one
    key = next((k for r in registers if (k := r.key()) is not None), secrets.token_bytes(32))
    now = (when or datetime.now(UTC)).astimezone(UTC)
    fields = {"date": now.strftime("%Y-%m-%d"), "efface_le": now.isoformat()}
    for register in registers:
        own = register.key()
        key_here = own or key  # a register keeps its own key
        digest, entries = _digest(key_here, sid), register.entries()
        mine = [e for e in entries if _is(e, digest)]
        if own == key_here and mine and all(_erasure(e).active for e in mine):
            continue  # recorded already, under its own key: its first date stays
        others = [e for e in entries if not _is(e, digest)]
        # erased again after a re-enrolment: the new erasure wins, whatever the clocks say (a
        # re-enrolment stamped later by another machine's clock must not undo it)
        register._save([*others, {"empreinte": digest, **fields}], key_here)


def reenrol(sid: str, registers: list[Register], when: datetime | None = None) -> bool:
    """Record `sid`'s re-enrolment in each register with their erasure (kept); whether any had."""
    stamp = (when or datetime.now(UTC)).astimezone(UTC).isoformat()
    found = False
    for register in (r for r in registers if r.key() is not None):
        key, entries = register.key(), register.entries()
        mine = [e for e in entries if _is(e, _digest(key, sid))]
        for entry in mine:
            entry["reinscrit_le"] = stamp
        if mine:
            found = True
            register._save(entries, key)
    return found


def merge_register(source: Register, dest: Register) -> None:
    """Add `source`'s erasures and re-enrolments to `dest` (keyed as `source` if it has no key or
    no entry yet), the later time of each kept; registers with two keys and entries in both stay,
    unmerged."""
    key = source.key()
    if key is None or not source.entries():
        return
    if dest.key() != key and dest.entries():
        return
    before = dest.entries() if dest.key() == key else []
    merged = {e["empreinte"]: dict(e) for e in before}
    for entry in source.entries():
        here = merged.setdefault(entry["empreinte"], dict(entry))
        for name in ("efface_le", "reinscrit_le"):
            theirs, ours = _time(entry, name), _time(here, name)
            if name in entry and theirs is not None and (ours is None or theirs > ours):
                here[name] = entry[name]
                if name == "efface_le":
                    here["date"] = entry.get("date", here.get("date"))
    entries = list(merged.values())
    if entries != before or dest.key() != key:
        dest._save(entries, key)


def start_register(dest: Register, others: list[Register]) -> None:
    """An empty register in `dest` when it has none (a restore from there knows a register was
    checked), keyed as `dest`, `others` or anew; one already there, even damaged, is kept."""
    if (dest.folder / REGISTER_NAME).exists():
        return
    key = next((k for r in (dest, *others) if (k := r.key()) is not None), None)
    dest._save([], key or secrets.token_bytes(32))


def class_registers(db_url: str, grader_dir: Path | None = None) -> list[Register]:
    """The registers of a course: beside its gradebook (SQLite URL `db_url`), beside its backups
    (``<grader_dir>/sauvegardes``, by default beside the gradebook)."""
    gradebook = sqlite_path(db_url)
    where = gradebook.parent if gradebook is not None else grader_dir or Path.cwd()
    return registers_of(where, (grader_dir or where) / "sauvegardes")


def erased_problem(sid: str, registers: list[Register]) -> str | None:
    """Why a copy of `sid` is not collected (they were erased), in French; None otherwise."""
    when = erased_on(sid, registers)
    if when is None:
        return None
    return (
        f"{quoted(normalize_id(sid))} a été effacé(e) le {french_day(when)} à sa demande "
        f"(RGPD)\u00a0: non collecté\u00a0; pour une réinscription voulue, "
        f"make students REINSCRIRE={sid}"
    )


def skip_erased(found: Iterable, regexp: str, dirs, problems: list[str]) -> Iterator:
    """The download's members but an erased learner's, each of those named in `problems`."""
    registers = class_registers(dirs.db_url, dirs.grader_dir)
    for member in found:
        match = re.match(regexp, member.path) if regexp else None
        sid = match.groupdict().get("student_id") if match else None
        problem = erased_problem(sid, registers) if sid else None
        if problem:
            problems.append(f"{member.origin}\u00a0: {problem}")
            continue
        yield member
