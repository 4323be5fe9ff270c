"""course.dbfile: one home for the SQLite file, used by the service, the inspector, the
diagrams and the tutor's command line; a read leaves the folder exactly as it was."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from course import dbfile, diagrammes, inspecter
from course.sessions import InvalidDatabaseError, SqliteSessionService
from course.sessions._schema import CREATE_SCHEMA_SQL

NBSP = "\u00a0"


def folder_state(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of the folder with its hash and modification time (ns)."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
    }


@pytest.fixture
def closed_wal_db(tmp_path: Path) -> Path:
    """A session database in WAL mode (as the service leaves it), closed: no -wal beside it."""
    path = tmp_path / "tuteur.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(CREATE_SCHEMA_SQL)
    conn.execute("INSERT INTO sessions VALUES ('tuteur', 'alice', 's1', '{}', 1.0, 1.0)")
    conn.commit()
    conn.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tuteur.db"]
    return path


def test_a_plain_read_only_open_leaves_files_behind_the_shared_one_does_not(closed_wal_db):
    """The positive control first: SQLite's own `mode=ro` creates -wal and -shm; then every
    reader of the course goes through dbfile and leaves the folder as it was."""
    folder = closed_wal_db.parent
    before = folder_state(folder)
    with dbfile.reading(closed_wal_db) as conn:
        assert conn.execute("SELECT id FROM sessions").fetchall() == [("s1",)]
    inspecter.inspecter(closed_wal_db)
    inspecter.tables(closed_wal_db)
    diagrammes.schema(closed_wal_db)
    diagrammes.sequence(closed_wal_db, "s1")
    assert folder_state(folder) == before
    plain = sqlite3.connect(f"{closed_wal_db.as_uri()}?mode=ro", uri=True)
    plain.execute("SELECT count(*) FROM sessions").fetchone()
    plain.close()
    assert sorted(p.name for p in folder.iterdir()) == [
        "tuteur.db",
        "tuteur.db-shm",
        "tuteur.db-wal",
    ]


async def test_a_writer_still_open_is_read_through_its_wal(tmp_path: Path):
    path = tmp_path / "tuteur.db"
    async with SqliteSessionService(path) as service:
        await service.create_session(app_name="tuteur", user_id="alice", session_id="s1")
        assert Path(f"{path}-wal").stat().st_size > 0  # the session is in -wal only
        assert dbfile.readonly_uri(path).endswith("?mode=ro")
        with dbfile.reading(path) as conn:
            assert conn.execute("SELECT id FROM sessions").fetchall() == [("s1",)]
    assert dbfile.readonly_uri(path).endswith("?mode=ro&immutable=1")


def test_reading_closes_its_connection(closed_wal_db: Path):
    with dbfile.reading(closed_wal_db) as conn:
        pass
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        conn.execute("SELECT 1")


def test_check_location_refuses_in_french_and_writes_nothing(tmp_path: Path):
    with pytest.raises(dbfile.DbFileError, match=f"n'existe pas{NBSP}:"):
        dbfile.check_location(tmp_path / "absent" / "tuteur.db")
    with pytest.raises(dbfile.DbFileError, match="est un dossier"):
        dbfile.check_location(tmp_path)
    notes = tmp_path / "notes.db"
    notes.write_text("mes notes\n")
    with pytest.raises(dbfile.DbFileError, match="n'est pas une base SQLite"):
        dbfile.check_location(notes)
    assert notes.read_text() == "mes notes\n"
    empty = tmp_path / "vide.db"
    empty.touch()
    assert dbfile.check_location(empty) == empty  # SQLite's new database: an empty file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db", "vide.db"]


def test_connect_readonly_names_the_missing_tables(tmp_path: Path):
    other = tmp_path / "autre.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE sessions (id TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(dbfile.DbFileError) as caught:
        dbfile.connect_readonly(other)
    assert str(caught.value) == (
        f"«{NBSP}{other}{NBSP}» n'a pas le format d'une base de sessions{NBSP}: "
        f"table(s) absente(s){NBSP}: app_states, user_states, events."
    )
    with dbfile.reading(other, tables=False) as conn:
        assert dbfile.missing_tables(conn) == ["app_states", "user_states", "events"]
    with pytest.raises(dbfile.DbFileError, match=f"Base introuvable{NBSP}:"):
        dbfile.connect_readonly(tmp_path / "absent.db")
    assert not (tmp_path / "absent.db").exists()


def test_the_service_and_the_readers_share_one_check(tmp_path: Path):
    """The same bad file gets the same sentence from the service and from the inspector."""
    notes = tmp_path / "notes.db"
    notes.write_bytes(b"pas une base\n" * 10)
    with pytest.raises(InvalidDatabaseError) as from_service:
        SqliteSessionService(notes)
    with pytest.raises(dbfile.DbFileError) as from_dbfile:
        dbfile.check_location(notes)
    assert str(from_service.value) == str(from_dbfile.value)
    assert dbfile.TABLES == ("app_states", "user_states", "sessions", "events")
