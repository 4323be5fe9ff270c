"""Judges the files a runner left (``python -I -m course.labo.checker DIR SHA256 < FIXTURE``).

A fresh process that never ran student code: it reads each snapshot (the database and its
``-wal`` as they were right after a call) with its own sqlite3 connection, compares every row
with the fixture, and scans the raw bytes for the learner's personal data. The fixture comes on
stdin from the grading process's memory (checked against its SHA-256), never from a file that a
submission could have rewritten. Prints JSON facts.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

__all__ = ["TABLES", "facts_for", "main"]

TABLES = ("app_states", "user_states", "sessions", "events")
APP = "tuteur"
COLUMNS: dict[str, list[str]] = {}  # the fixture's, filled when it is read


def _read_rows(
    path: Path | bytes,
    columns: dict[str, list[str]] | None = None,
) -> tuple[dict[str, set[tuple]] | None, str | None]:
    """All rows of the four tables of a file (or of a database image), or (None, problem).

    With `columns`, each table must have exactly those columns (the fixture's).
    """
    try:
        if isinstance(path, bytes):
            image = bytearray(path)
            image[18:20] = b"\x01\x01"  # no WAL mode in memory: read it as a rollback journal
            conn = sqlite3.connect(":memory:")
            conn.deserialize(bytes(image))
        else:
            conn = sqlite3.connect(f"file:{path}", uri=True)
    except sqlite3.Error as exc:
        return None, f"fichier illisible : {exc}"
    try:
        rows: dict[str, set[tuple]] = {}
        for table in TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            if not cols:
                return None, f"la table {table} n'existe plus"
            if columns is not None and cols != columns[table]:
                return None, f"les colonnes de la table {table} ont changé"
            names = ", ".join(f'"{c}"' for c in cols)
            rows[table] = set(conn.execute(f"SELECT {names} FROM {table}"))
            if columns is None:
                COLUMNS[table] = cols
        return rows, None
    except sqlite3.Error as exc:
        return None, f"lecture impossible : {exc}"
    finally:
        conn.close()


def _learner_rows(rows: dict[str, set[tuple]], user_id: str) -> dict[str, set[tuple]]:
    """Rows that belong to `user_id` in the tutor's app (column 0 app_name, 1 user_id)."""
    out = {t: set() for t in TABLES}
    for table in ("user_states", "sessions"):
        out[table] = {r for r in rows[table] if r[0] == APP and r[1] == user_id}
    # events: (id, app_name, user_id, session_id, ...)
    out["events"] = {r for r in rows["events"] if r[1] == APP and r[2] == user_id}
    return out


def _digest(rows: dict[str, set[tuple]]) -> str:
    h = hashlib.sha256()
    for table in TABLES:
        for row in sorted(rows[table], key=repr):
            h.update(repr(row).encode())
        h.update(b"|")
    return h.hexdigest()


def facts_for(
    snapshot: Path, reference: dict[str, set[tuple]], user_id: str, markers: tuple[str, ...]
) -> dict:
    """Facts about one snapshot for the learner `user_id`."""
    if not snapshot.exists():
        return {"present": False, "valide": False}
    scratch = Path(tempfile.mkdtemp(prefix="controle-"))
    try:
        copy = scratch / "copie.db"
        shutil.copyfile(snapshot, copy)
        wal = Path(f"{snapshot}-wal")
        if wal.exists():
            shutil.copyfile(wal, f"{copy}-wal")
        rows, problem = _read_rows(copy, COLUMNS)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if rows is None:
        return {"present": True, "valide": False, "probleme": problem}
    mine = _learner_rows(rows, user_id)
    ref_mine = _learner_rows(reference, user_id)
    expected_others = {t: reference[t] - ref_mine[t] for t in TABLES}
    others = {t: rows[t] - mine[t] for t in TABLES}
    raw = snapshot.read_bytes() + (wal.read_bytes() if wal.exists() else b"")
    return {
        "present": True,
        "valide": True,
        "sessions_restantes": len(mine["sessions"]),
        "evenements_restants": len(mine["events"]),
        "user_state_restant": bool(mine["user_states"]),
        "autres_intacts": others == expected_others,
        "marqueurs": [m for m in markers if m.encode() in raw],
        "empreinte": _digest(rows),
    }


def main(workdir: str, digest: str) -> int:
    from .fixture import MARKERS
    from .runner import PLAN

    work = Path(workdir)
    image = sys.stdin.buffer.read()
    if hashlib.sha256(image).hexdigest() != digest:
        raise SystemExit("base d'exemple reçue altérée (empreinte SHA-256 différente)")
    reference, problem = _read_rows(image, None)
    if reference is None:
        raise SystemExit(f"base d'exemple illisible : {problem}")
    ref_sessions = {r[2] for r in reference["sessions"] if r[0] == APP and r[1] == "alice"}
    alice_markers = tuple(MARKERS["alice"]) + tuple(sorted(ref_sessions))
    out = {}
    for name, _db, user_id in PLAN:
        markers = alice_markers if user_id == "alice" else ()
        out[name] = facts_for(work / "instantanes" / f"{name}.db", reference, user_id, markers)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
