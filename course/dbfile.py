"""The course's SQLite file: how to recognise it, where it may live, how to read it untouched.

One home for what the session service, the inspector, the diagrams, the tutor's command line
and the lab's checker know about the file: SQLite's 16-byte header, google-adk 2.10's four
tables and their columns, the checks on a path before anything is written, and one read-only
opening that leaves the folder exactly as it was. Standard library only, so that a fresh
process (the lab's checker) imports it at no cost. Messages are in French: learners read them.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "COLUMNS",
    "PAGE_SIDES",
    "SIDES",
    "SQLITE_HEADER",
    "TABLES",
    "DbFileError",
    "UnreadableFileError",
    "check_location",
    "connect_readonly",
    "has_sqlite_header",
    "is_read_only",
    "missing_tables",
    "readonly_uri",
    "reading",
]

# what SQLite keeps beside a database file: its pages as they were or will be (-wal, -journal:
# a deleted row's bytes may be there), and the WAL's index (-shm, no row)
PAGE_SIDES = ("-wal", "-journal")
SIDES = (*PAGE_SIDES, "-shm")

SQLITE_HEADER = b"SQLite format 3\x00"

# google-adk 2.10's four tables and the columns every reader of the file relies on.
COLUMNS: dict[str, tuple[str, ...]] = {
    "app_states": ("app_name", "state", "update_time"),
    "user_states": ("app_name", "user_id", "state", "update_time"),
    "sessions": ("app_name", "user_id", "id", "state", "create_time", "update_time"),
    "events": (
        "id",
        "app_name",
        "user_id",
        "session_id",
        "invocation_id",
        "timestamp",
        "event_data",
    ),
}
TABLES: tuple[str, ...] = tuple(COLUMNS)


class DbFileError(ValueError):
    """Ce chemin ne peut pas être (ou ne contient pas) une base de sessions ; le message dit
    pourquoi. Rien n'a été écrit."""


class UnreadableFileError(DbFileError):
    """Le fichier existe mais ses droits d'accès interdisent de le lire."""


def has_sqlite_header(path: str | os.PathLike[str]) -> bool:
    """True if the file starts with SQLite's header, or is empty (SQLite's new database)."""
    with open(path, "rb") as file:
        header = file.read(len(SQLITE_HEADER))
    return header in (b"", SQLITE_HEADER)


def _sqlite_or_empty(path: Path) -> bool:
    """``has_sqlite_header``, with a French error for a file its permissions hide."""
    try:
        return has_sqlite_header(path)
    except PermissionError:
        raise UnreadableFileError(
            f"Le fichier « {path} » n'est pas lisible (droits d'accès)."
        ) from None


def check_location(path: str | os.PathLike[str]) -> Path:
    """The path, if it can hold a session database: its folder exists, it is not a folder,
    and an existing file is SQLite (or empty). Otherwise a DbFileError, before anything is
    written."""
    path = Path(path)
    folder = path.parent
    if not folder.is_dir():
        raise DbFileError(
            f"Le dossier « {folder} » n'existe pas : impossible d'y créer ou d'y lire la base "
            f"« {path.name} ». Créez d'abord le dossier ou choisissez un autre chemin."
        )
    if path.is_dir():
        raise DbFileError(f"« {path} » est un dossier, pas un fichier de base SQLite.")
    if path.exists() and not _sqlite_or_empty(path):
        raise DbFileError(
            f"Le fichier « {path} » n'est pas une base SQLite (en-tête inattendu). "
            "Il n'a pas été modifié ; choisissez un autre chemin."
        )
    return path


def is_read_only(path: str | os.PathLike[str]) -> bool:
    """True if the file may not be written: no write permission bit, or no write access to
    the file or to its folder (where SQLite's journal goes). False for a file not yet made.

    root ignores permission bits (``os.access`` says yes), so the bits are read too: a file
    chmod 0444 is treated as read-only for everyone, as its owner meant.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return True
    return not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)


def readonly_uri(path: str | os.PathLike[str]) -> str:
    """The URI that reads an existing file without creating or changing any file beside it.

    With no pending journal the file is complete by itself and is read as ``immutable``: a
    plain read-only open of a WAL database would create ``-wal`` and ``-shm`` files and could
    not remove them (nor create them, for a user who cannot write the folder). With a
    non-empty ``-wal`` or ``-journal`` (a writer is open, or crashed), SQLite must read it
    too: plain ``mode=ro``, so the recent pages are seen.
    """
    path = Path(path).resolve()
    for suffix in PAGE_SIDES:
        pending = path.with_name(path.name + suffix)
        if pending.exists() and pending.stat().st_size > 0:
            return f"{path.as_uri()}?mode=ro"
    return f"{path.as_uri()}?mode=ro&immutable=1"


def missing_tables(conn: sqlite3.Connection) -> list[str]:
    """The four tables (in ``TABLES`` order) that the connection's database lacks."""
    found = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return [table for table in TABLES if table not in found]


def connect_readonly(path: str | os.PathLike[str], *, tables: bool = True) -> sqlite3.Connection:
    """A read-only connection to an existing SQLite file (see ``readonly_uri``); with
    ``tables``, the file must hold the four tables. A DbFileError (French) otherwise."""
    path = Path(path)
    if not path.is_file():
        raise DbFileError(f"Base introuvable : aucun fichier « {path} ».")
    if not _sqlite_or_empty(path):
        raise DbFileError(f"« {path} » n'est pas une base SQLite (en-tête inattendu).")
    conn = sqlite3.connect(readonly_uri(path), uri=True)
    try:
        missing = missing_tables(conn)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise DbFileError(f"« {path} » est illisible comme base SQLite : {exc}.") from None
    if tables and missing:
        conn.close()
        raise DbFileError(
            f"« {path} » n'a pas le format d'une base de sessions : table(s) absente(s) : "
            f"{', '.join(missing)}."
        )
    return conn


@contextmanager
def reading(path: str | os.PathLike[str], *, tables: bool = True) -> Iterator[sqlite3.Connection]:
    """``with reading(path) as conn:`` a ``connect_readonly`` connection, closed at the end."""
    conn = connect_readonly(path, tables=tables)
    try:
        yield conn
    finally:
        conn.close()
