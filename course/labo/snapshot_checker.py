"""Judges the files a runner left: ``python -I -m course.labo.snapshot_checker < REQUEST``.

A fresh process that never ran student code (sandboxed too when grading, with the work folders
read-only): it reads each snapshot (the database and its ``-wal`` as they were right after a
call) with its own sqlite3 connection, compares every row with the reference base, and scans the
raw bytes of every file left beside the base (its ``-wal`` and ``-shm``; any other file is
counted by the runner) for the learner's personal data, as written or encoded (hex, base64):
free pages included, since the scan reads bytes, not rows. The references come on stdin from
the grading process's memory (each checked against its SHA-256), never from a file that a
submission could have rewritten. Prints one ``SnapshotFacts`` per call, as JSON.

It reads only real tables of the reference's schema: each of the four must be in
``sqlite_master`` as a table with the reference's exact ``CREATE`` statement (a view, a virtual
table or a changed definition makes the file unusable, so no view's query ever runs here), with
``trusted_schema`` off and a budget of SQLite steps per snapshot. Any other object (table, view,
trigger, index) the reference does not have is counted (``extra_objects``: criterion 7, a copy
can hide there). Whatever goes wrong with one snapshot (unreadable file, corrupt database, step
budget spent) becomes that snapshot's ``problem``, never an error of the checker.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

from course.app import APP_NAME
from course.dbfile import TABLES, readonly_uri

from .protocol import (
    MAX_SNAPSHOT_BYTES,
    CheckRequest,
    SnapshotCheck,
    SnapshotFacts,
    encode_facts,
)

__all__ = ["MAX_SNAPSHOT_BYTES", "TABLES", "encodings", "facts_for", "main", "read_tables"]

# SQLite virtual-machine steps allowed per snapshot (a few hundred thousand suffice for a base
# of a few hundred kilobytes; a hostile file stops here, not at a time limit).
MAX_STEPS = 50_000_000
_STEP = 10_000

Rows = dict[str, set[tuple]]
# Shorter base64 runs than this would match by chance in a few hundred kilobytes.
_MIN_ENCODED = 8


def encodings(text: str) -> tuple[bytes, ...]:
    """The byte strings that show `text` in a file: as written (UTF-8), in hex (both cases),
    and in base64 (standard and URL-safe), at each of its three alignments inside a longer
    encoded string (only the characters that depend on `text` alone)."""
    raw = text.encode("utf-8")
    found = [raw, raw.hex().encode(), raw.hex().upper().encode()]
    for shift, skip in ((0, 0), (1, 2), (2, 3)):
        total = shift + len(raw)
        encoded = base64.b64encode(b"\0" * shift + raw)[skip : 4 * (total // 3)]
        if len(encoded) >= _MIN_ENCODED:
            found += [encoded, encoded.translate(bytes.maketrans(b"+/", b"-_"))]
    return tuple(dict.fromkeys(found))


Schema = frozenset[tuple[str, str, str]]  # (type, name, sql) of every object


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_STEPS // _STEP

    def __call__(self) -> int:
        self.left -= 1
        return 1 if self.left < 0 else 0  # non-zero interrupts the statement


def _schema(conn: sqlite3.Connection) -> Schema:
    return frozenset(
        (str(t), str(n), str(q))
        for t, n, q in conn.execute("SELECT type, name, sql FROM sqlite_master")
    )


def read_tables(
    source: Path | bytes,
    columns: dict[str, list[str]] | None = None,
    reference: Schema | None = None,
) -> tuple[Rows | None, dict[str, list[str]], str | None, Schema]:
    """All rows of the four tables of a file (or of a database image), with each table's
    columns and the file's schema, or (None, {}, problem in French, schema).

    With `columns`, each table must have exactly those columns (the reference's); with
    `reference`, each must be a real table defined exactly as there. The one place that opens
    the course's SQLite files here.
    """
    try:
        if isinstance(source, bytes):
            image = bytearray(source)
            image[18:20] = b"\x01\x01"  # no WAL mode in memory: read it as a rollback journal
            conn = sqlite3.connect(":memory:")
            conn.deserialize(bytes(image))
        else:
            conn = sqlite3.connect(readonly_uri(source), uri=True)
    except (sqlite3.Error, OSError, ValueError) as exc:
        return None, {}, f"fichier illisible\u00a0: {exc}", frozenset()
    conn.set_progress_handler(_Budget(), _STEP)
    schema: Schema = frozenset()
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        schema = _schema(conn)
        tables = {name: sql for kind, name, sql in schema if kind == "table"}
        wanted = {name: sql for kind, name, sql in reference or () if kind == "table"}
        rows: Rows = {}
        found: dict[str, list[str]] = {}
        for table in TABLES:
            if table not in tables:
                return None, {}, f"la table {table} n'existe plus (ou n'est plus une table)", schema
            if reference is not None and tables[table] != wanted.get(table):
                return None, {}, f"la définition de la table {table} a changé", schema
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            if columns is not None and cols != columns[table]:
                return None, {}, f"les colonnes de la table {table} ont changé", schema
            names = ", ".join(f'"{c}"' for c in cols)
            rows[table] = set(conn.execute(f'SELECT {names} FROM main."{table}"'))
            found[table] = cols
        return rows, found, None, schema
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            return None, {}, "lecture trop longue (la base a été piégée)", schema
        return None, {}, f"lecture impossible\u00a0: {exc}", schema
    except (sqlite3.Error, MemoryError, OverflowError, ValueError) as exc:
        return None, {}, f"lecture impossible\u00a0: {exc}", schema
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
    schema: Schema | None = None,
) -> SnapshotFacts:
    """Facts about one snapshot for the learner `user_id`; any failure is its problem."""
    try:
        return _facts_for(snapshot, reference, columns, user_id, personal_data, schema)
    except (OSError, MemoryError, sqlite3.Error, ValueError) as exc:
        return SnapshotFacts(present=True, problem=f"fichier illisible ({type(exc).__name__})")


def _facts_for(
    snapshot: Path,
    reference: Rows,
    columns: dict[str, list[str]],
    user_id: str,
    personal_data: tuple[str, ...],
    schema: Schema | None,
) -> SnapshotFacts:
    if not snapshot.is_file():
        return SnapshotFacts(present=False)
    wal = Path(f"{snapshot}-wal")
    shm = Path(f"{snapshot}-shm")
    size = sum(p.stat().st_size for p in (snapshot, wal, shm) if p.is_file())
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
        rows, _cols, problem, found_schema = read_tables(copy, columns, schema)
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
        raw = b"\n".join(p.read_bytes() for p in (snapshot, wal, shm) if p.is_file())
        session_ids = sorted(r[2] for r in ref_mine["sessions"])
        found = sum(
            1
            for text in (*personal_data, *session_ids)
            if any(form in raw for form in encodings(text))
        )
    return SnapshotFacts(
        present=True,
        readable=True,
        sessions_left=len(mine["sessions"]),
        events_left=len(mine["events"]),
        user_state_left=bool(mine["user_states"]),
        others_intact=others == expected_others,
        personal_data_found=found,
        extra_objects=len(found_schema - schema) if schema is not None else 0,
        fingerprint=_fingerprint(rows),
    )


def _check(check: SnapshotCheck, references: dict) -> SnapshotFacts:
    reference, columns, schema = references[check.reference]
    return facts_for(
        Path(check.snapshot), reference, columns, check.user_id, check.personal_data, schema
    )


def main() -> int:
    stdin = sys.stdin.buffer
    request = CheckRequest.from_json(stdin.readline().decode("utf-8"))
    references: dict[str, tuple[Rows, dict[str, list[str]], Schema]] = {}
    for ref in request.references:
        image = stdin.read(ref.size)
        if len(image) != ref.size or hashlib.sha256(image).hexdigest() != ref.sha256:
            raise SystemExit(f"base de référence {ref.name} reçue altérée (SHA-256 différent)")
        rows, columns, problem, schema = read_tables(image)
        if rows is None:
            raise SystemExit(f"base de référence {ref.name} illisible\u00a0: {problem}")
        references[ref.name] = (rows, columns, schema)
    facts = {check.call_id: _check(check, references) for check in request.checks}
    sys.stdout.write(encode_facts(facts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
