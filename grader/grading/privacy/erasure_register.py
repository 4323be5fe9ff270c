"""The register of erased learners: what keeps an erased learner from coming back unseen.

An erasure (``make oublier-eleve CONFIRMER=1``) removes every trace of a learner, but a backup
made before, the teacher's master roster, the LMS archive or the exchange may still hold them: a
restore, a roster import (``make students``), ``make collect`` and ``make zip-collect`` read the
register, skip the learner, name them and fail, unless the teacher confirms a re-enrolment
(``REINSCRIRE=<id>``, which removes the learner from every register it can write).

It holds no personal data: one HMAC-SHA-256 of the id (NFC) per erasure, with its date, keyed by
a private random file (``.cle-effacements``, mode 0600) beside it, so the register alone cannot
be checked against a list of names. It lives beside the gradebook (``effacements.json``), beside
the backups (``sauvegardes/``: a restore into a fresh clone still finds it) and inside every
backup written after the erasure, all with one key (the first found).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..classroom.ids import normalize_id, quoted
from ..classroom.paths import sqlite_path

__all__ = [
    "KEY_NAME",
    "class_registers",
    "erased_problem",
    "skip_erased",
    "REGISTER_NAME",
    "Register",
    "erased_on",
    "merge_register",
    "registers_of",
    "record_erasure",
    "reenrol",
    "write_private",
]

KEY_NAME = ".cle-effacements"
REGISTER_NAME = "effacements.json"


def write_private(path: Path, data: bytes) -> None:
    """Write `path` atomically, readable by its owner only (grades and ids are not public)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a new folder: private too
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


@dataclass(frozen=True)
class Register:
    """One register file and its key, in `folder`."""

    folder: Path

    def key(self) -> bytes | None:
        try:
            return bytes.fromhex((self.folder / KEY_NAME).read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            return None

    def entries(self) -> list[dict]:
        try:
            data = json.loads((self.folder / REGISTER_NAME).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        erased = data.get("effaces") if isinstance(data, dict) else None
        return [e for e in erased or [] if isinstance(e, dict) and "empreinte" in e]

    def _save(self, entries: list[dict], key: bytes) -> None:
        if self.key() != key:
            write_private(self.folder / KEY_NAME, key.hex().encode() + b"\n")
        note = (
            "Registre des élèves effacés (RGPD, article 17)\u00a0: une empreinte HMAC-SHA-256 "
            f"de l'identifiant par effacement, avec la clé {KEY_NAME}\u00a0; aucune donnée "
            "personnelle."
        )
        body = {"format": 1, "note": note, "effaces": entries}
        data = json.dumps(body, indent=1, ensure_ascii=False).encode()
        write_private(self.folder / REGISTER_NAME, data)


def _digest(key: bytes, sid: str) -> str:
    return hmac.new(key, normalize_id(sid).encode(), hashlib.sha256).hexdigest()


def registers_of(gradebook_dir: Path, backups: Path | None = None) -> list[Register]:
    """The registers of a class: beside its gradebook, beside its backups."""
    places = [gradebook_dir, backups or gradebook_dir / "sauvegardes"]
    return [Register(p) for p in dict.fromkeys(p.resolve() for p in places)]


def erased_on(sid: str, registers: list[Register]) -> str | None:
    """The date (``AAAA-MM-JJ``) `sid` was erased, by any of `registers`; None if never."""
    for register in registers:
        key = register.key()
        for entry in register.entries() if key is not None else []:
            if hmac.compare_digest(str(entry["empreinte"]), _digest(key, sid)):
                return str(entry.get("date", "?"))
    return None


def record_erasure(sid: str, registers: list[Register], when: datetime | None = None) -> None:
    """Record `sid` as erased in every register (created with the class's key if missing)."""
    # the class's key: the first one found, else a new random one
    key = next((k for r in registers if (k := r.key()) is not None), secrets.token_bytes(32))
    day = (when or datetime.now(UTC)).strftime("%Y-%m-%d")
    for register in registers:
        own = register.key()
        key_here = own or key  # a register keeps its own key
        digest, entries = _digest(key_here, sid), register.entries()
        # recorded already, under its own key: its first date stays
        if own != key_here or digest not in {e["empreinte"] for e in entries}:
            register._save([*entries, {"empreinte": digest, "date": day}], key_here)


def reenrol(sid: str, registers: list[Register]) -> bool:
    """Remove `sid` from every register (a re-enrolment the teacher confirmed); whether any
    register held them."""
    found = False
    for register in (r for r in registers if r.key() is not None):
        key, entries = register.key(), register.entries()
        digest = _digest(key, sid)
        kept = [e for e in entries if not hmac.compare_digest(str(e["empreinte"]), digest)]
        if len(kept) != len(entries):
            found = True
            register._save(kept, key)
    return found


def merge_register(source: Register, dest: Register) -> None:
    """Add `source`'s erasures to `dest` (created with `source`'s key if it has none). Registers
    with two different keys cannot be merged: both stay, each checked with its own key."""
    key = source.key()
    if key is None or not source.entries() or dest.key() not in (None, key):
        return
    known = {e["empreinte"] for e in dest.entries()}
    added = [e for e in source.entries() if e["empreinte"] not in known]
    if added or dest.key() is None:
        dest._save(dest.entries() + added, key)


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
    day = "/".join(reversed(when.split("-")))
    return (
        f"{quoted(normalize_id(sid))} a été effacé(e) le {day} à sa demande (RGPD)\u00a0: non "
        f"collecté\u00a0; pour une réinscription voulue, make students REINSCRIRE={sid}"
    )


def skip_erased(found: Iterable, regexp: str, dirs, problems: list[str]) -> Iterator:
    """The download's members (``zip_collect.Member``) except those of an erased learner, each
    named in `problems`."""
    registers = class_registers(dirs.db_url, dirs.grader_dir)
    for member in found:
        match = re.match(regexp, member.path) if regexp else None
        sid = match.groupdict().get("student_id") if match else None
        problem = erased_problem(sid, registers) if sid else None
        if problem:
            problems.append(f"{member.origin}\u00a0: {problem}")
            continue
        yield member
