"""Judges the files a runner left: ``python -I -m course.labo.snapshot_checker < REQUEST``.

A fresh process that never ran student code (sandboxed too when grading, with the work folders
read-only): it reads each snapshot (the database and its ``-wal`` as they were right after a
call) with its own sqlite3 connection, compares every row with the reference base, and scans the
raw bytes for the learner's personal data. The references come on stdin from the grading
process's memory (each checked against its SHA-256), never from a file that a submission could
have rewritten. Prints one ``SnapshotFacts`` per call, as JSON.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from course.app import APP_NAME
from course.dbfile import TABLES, readonly_uri

from .protocol import CheckRequest, SnapshotCheck, SnapshotFacts, encode_facts

__all__ = ["MAX_SNAPSHOT_BYTES", "TABLES", "facts_for", "main", "read_tables"]

# A base of a few hundred kilobytes cannot legitimately grow past this.
MAX_SNAPSHOT_BYTES = 32 << 20

Rows = dict[str, set[tuple]]


def read_tables(
    source: Path | bytes, columns: dict[str, list[str]] | None = None
) -> tuple[Rows | None, dict[str, list[str]], str | None]:
    """All rows of the four tables of a file (or of a database image), with each table's
    columns, or (None, {}, problem in French).

    With `columns`, each table must have exactly those columns (the reference's). The one place
    that opens the course's SQLite files here.
    """
    try:
        if isinstance(source, bytes):
            image = bytearray(source)
            image[18:20] = b"\x01\x01"  # no WAL mode in memory: read it as a rollback journal
            conn = sqlite3.connect(":memory:")
            conn.deserialize(bytes(image))
        else:
            conn = sqlite3.connect(readonly_uri(source), uri=True)
    except sqlite3.Error as exc:
        return None, {}, f"fichier illisible\u00a0: {exc}"
    try:
        rows: Rows = {}
        found: dict[str, list[str]] = {}
        for table in TABLES:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            if not cols:
                return None, {}, f"la table {table} n'existe plus"
            if columns is not None and cols != columns[table]:
                return None, {}, f"les colonnes de la table {table} ont changé"
            names = ", ".join(f'"{c}"' for c in cols)
            rows[table] = set(conn.execute(f"SELECT {names} FROM {table}"))
            found[table] = cols
        return rows, found, None
    except sqlite3.Error as exc:
        return None, {}, f"lecture impossible\u00a0: {exc}"
    finally:
        conn.close()


def _learner_rows(rows: Rows, user_id: str) -> Rows:
    """Rows that belong to `user_id` in the tutor's app (column 0 app_name, 1 user_id)."""
    out: Rows = {t: set() for t in TABLES}
    for table in ("user_states", "sessions"):
        out[table] = {r for r in rows[table] if r[0] == APP_NAME and r[1] == user_id}
    # events: (id, app_name, user_id, session_id, ...)
    out["events"] = {r for r in rows["events"] if r[1] == APP_NAME and r[2] == user_id}
    return out


def _fingerprint(rows: Rows) -> str:
    h = hashlib.sha256()
    for table in TABLES:
        for row in sorted(rows[table], key=repr):
            h.update(repr(row).encode())
        h.update(b"|")
    return h.hexdigest()


def facts_for(
    snapshot: Path,
    reference: Rows,
    columns: dict[str, list[str]],
    user_id: str,
    personal_data: tuple[str, ...],
) -> SnapshotFacts:
    """Facts about one snapshot for the learner `user_id`."""
    if not snapshot.is_file():
        return SnapshotFacts(present=False)
    wal = Path(f"{snapshot}-wal")
    size = snapshot.stat().st_size + (wal.stat().st_size if wal.is_file() else 0)
    if size > MAX_SNAPSHOT_BYTES:
        return SnapshotFacts(
            present=True,
            problem=f"elle pèse {size >> 20}\u00a0Mio, bien plus que la base d'exemple",
        )
    scratch = Path(tempfile.mkdtemp(prefix="snapshot-check-"))
    try:
        copy = scratch / "copy.db"
        shutil.copyfile(snapshot, copy)
        if wal.is_file():
            shutil.copyfile(wal, f"{copy}-wal")
        rows, _cols, problem = read_tables(copy, columns)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if rows is None:
        return SnapshotFacts(present=True, problem=problem)
    mine = _learner_rows(rows, user_id)
    ref_mine = _learner_rows(reference, user_id)
    expected_others = {t: reference[t] - ref_mine[t] for t in TABLES}
    others = {t: rows[t] - mine[t] for t in TABLES}
    found = 0
    if personal_data:
        raw = snapshot.read_bytes() + (wal.read_bytes() if wal.is_file() else b"")
        session_ids = sorted(r[2] for r in ref_mine["sessions"])
        found = sum(1 for text in (*personal_data, *session_ids) if text.encode() in raw)
    return SnapshotFacts(
        present=True,
        readable=True,
        sessions_left=len(mine["sessions"]),
        events_left=len(mine["events"]),
        user_state_left=bool(mine["user_states"]),
        others_intact=others == expected_others,
        personal_data_found=found,
        fingerprint=_fingerprint(rows),
    )


def _check(
    check: SnapshotCheck, references: dict[str, tuple[Rows, dict[str, list[str]]]]
) -> SnapshotFacts:
    reference, columns = references[check.reference]
    return facts_for(Path(check.snapshot), reference, columns, check.user_id, check.personal_data)


def main() -> int:
    stdin = sys.stdin.buffer
    request = CheckRequest.from_json(stdin.readline().decode("utf-8"))
    references: dict[str, tuple[Rows, dict[str, list[str]]]] = {}
    for ref in request.references:
        image = stdin.read(ref.size)
        if len(image) != ref.size or hashlib.sha256(image).hexdigest() != ref.sha256:
            raise SystemExit(f"base de référence {ref.name} reçue altérée (SHA-256 différent)")
        rows, columns, problem = read_tables(image)
        if rows is None:
            raise SystemExit(f"base de référence {ref.name} illisible\u00a0: {problem}")
        references[ref.name] = (rows, columns)
    facts = {check.call_id: _check(check, references) for check in request.checks}
    sys.stdout.write(encode_facts(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
