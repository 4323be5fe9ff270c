"""Facts about google-adk 2.10 and SQLite that lessons 1 to 5 state (issues 21 and 34), measured:
where `GetSessionConfig` is imported from, what the `db` extra installs, and how each service
writes an accented state value (escaped by `json.dumps`, or plain UTF-8 after ADK's SQL merge).
"""

from __future__ import annotations

import importlib.metadata
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from helpers import REPO
from parcours import GLOSSARY

from course.sessions import SqliteSessionService as CourseService

adk_sqlite = pytest.importorskip("google.adk.sessions.sqlite_session_service")
TABLES = ("sessions", "user_states")
LESSONS = REPO / "solutions" / "lecons"


def lesson_text(name: str) -> str:
    nb = nbformat.read(LESSONS / name, as_version=4)
    return "\n".join(c.source for c in nb.cells).replace("\u00a0", " ")


def states(db: Path) -> dict[str, str]:
    c = sqlite3.connect(db)
    try:
        return {t: c.execute(f"SELECT state FROM {t}").fetchone()[0] for t in TABLES}
    finally:
        c.close()


def test_get_session_config_lives_in_base_session_service_as_lesson_2_says():
    with pytest.raises(ImportError):
        exec("from google.adk.sessions import GetSessionConfig")  # noqa: S102
    from google.adk.sessions.base_session_service import GetSessionConfig

    assert GetSessionConfig(num_recent_events=3).num_recent_events == 3
    text = lesson_text("02_brancher_sqlite.ipynb")
    assert "from google.adk.sessions.base_session_service import GetSessionConfig" in text


def test_the_db_extra_brings_sqlalchemy_and_sqlalchemy_spanner_as_lesson_1_says():
    extra = sorted(
        re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0]
        for r in importlib.metadata.requires("google-adk") or []
        if re.search(r"""extra\s*==\s*["']db["']""", r)
    )
    assert extra == ["sqlalchemy", "sqlalchemy-spanner"]
    text = lesson_text("01_choisir_un_service.ipynb")
    assert "`sqlalchemy` et `sqlalchemy-spanner`" in text
    assert "pilote asynchrone (l'extra" not in text


async def test_adk_escapes_on_create_and_writes_utf8_after_its_sql_merge(tmp_path: Path):
    """Lesson 3: ADK 2.10 writes `Chlo\\u00e9` on create_session, then `Chloé` once
    append_event has merged a state delta in SQL; lists keep their escapes. The course's
    service always writes json.dumps (escaped). Both forms must be searched."""
    from google.adk.events import Event, EventActions

    adk = adk_sqlite.SqliteSessionService(str(tmp_path / "adk.db"))
    initial = {"nom": "Chloé", "user:a_revoir": ["décorateurs"], "user:ville": "Orléans"}
    session = await adk.create_session(app_name="tuteur", user_id="chloe", state=initial)
    created = states(tmp_path / "adk.db")
    assert '"Chlo\\u00e9"' in created["sessions"] and "Chloé" not in created["sessions"]
    assert '"Orl\\u00e9ans"' in created["user_states"]
    delta = {"etape": "début", "user:niveau": 2}
    await adk.append_event(
        session, Event(author="system", invocation_id="i", actions=EventActions(state_delta=delta))
    )
    merged = states(tmp_path / "adk.db")
    assert '"nom":"Chloé"' in merged["sessions"] and "\\u00e9" not in merged["sessions"]
    assert '"ville":"Orléans"' in merged["user_states"]  # a text value: now plain UTF-8
    assert '["d\\u00e9corateurs"]' in merged["user_states"]  # a list keeps its escapes

    async with CourseService(tmp_path / "cours.db") as course:
        session = await course.create_session(app_name="tuteur", user_id="chloe", state=initial)
        await course.append_event(
            session,
            Event(author="system", invocation_id="i", actions=EventActions(state_delta=delta)),
        )
    ours = states(tmp_path / "cours.db")
    assert "Chloé" not in ours["sessions"] and "Chlo\\u00e9" in ours["sessions"]
    assert "Orl\\u00e9ans" in ours["user_states"]

    text = lesson_text("03_ce_que_contient_le_fichier.ipynb")
    assert "ADK 2.10 fait exactement pareil" not in text
    assert "json_group_object" in text and "append_event" in text


# ------------------------------------------------------------------ issue 34's fact slips


@pytest.mark.slow  # two Pythons that import SQLAlchemy's asyncio (about 3 s)
def test_greenlet_is_outside_the_db_extra_and_the_async_engine_needs_it_as_lesson_1_says():
    """SQLAlchemy 2.1 lists greenlet only under its `asyncio` extra, ADK's `db` extra asks for
    neither, and without greenlet the async engine (DatabaseSessionService) cannot load."""
    adk_db = [
        r
        for r in importlib.metadata.requires("google-adk") or []
        if re.search(r"""extra\s*==\s*["']db["']""", r)
    ]
    assert not any("greenlet" in r or "[asyncio]" in r for r in adk_db), adk_db
    greenlet = [
        r for r in importlib.metadata.requires("sqlalchemy") or [] if r.startswith("greenlet")
    ]
    assert greenlet and all(re.search(r"""extra\s*==\s*["']asyncio["']""", r) for r in greenlet)
    # measured: the same import, with greenlet hidden, fails (and works with it, the control)
    program = (
        "import sys\n{hide}"
        "from sqlalchemy.ext.asyncio import create_async_engine\n"
        "create_async_engine('sqlite+aiosqlite:///:memory:')\nprint('chargé')\n"
    )
    without = subprocess.run(
        [sys.executable, "-c", program.format(hide="sys.modules['greenlet'] = None\n")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert without.returncode != 0 and "'greenlet' library is installed" in without.stderr
    control = subprocess.run(
        [sys.executable, "-c", program.format(hide="")], capture_output=True, text=True, timeout=60
    )
    assert control.stdout.strip() == "chargé", control.stderr
    text = " ".join(lesson_text("01_choisir_un_service.ipynb").split())
    assert "plus `greenlet`, que SQLAlchemy 2.1 n'installe plus" in text
    assert "(`sqlalchemy[asyncio]` l'apporte)" in text


async def test_a_second_create_session_with_user_or_app_keys_merges_in_sql_too(tmp_path: Path):
    """Lesson 3: not only append_event; a second create_session that brings a `user:` key to a
    known learner (or an `app:` key to the app) merges in SQL, so its text values turn UTF-8.
    The session row it creates is new: json.dumps, escaped (the control)."""
    adk = adk_sqlite.SqliteSessionService(str(tmp_path / "adk.db"))
    first = {"user:ville": "Orléans", "app:saison": "Été", "nom": "Chloé"}
    await adk.create_session(app_name="tuteur", user_id="chloe", state=first)
    c = sqlite3.connect(tmp_path / "adk.db")
    try:
        assert c.execute("SELECT state FROM user_states").fetchone()[0] == (
            '{"ville": "Orl\\u00e9ans"}'
        )
        await adk.create_session(app_name="tuteur", user_id="chloe", state={"user:niveau": 2})
        assert c.execute("SELECT state FROM user_states").fetchone()[0] == (
            '{"niveau":2,"ville":"Orléans"}'
        )
        await adk.create_session(app_name="tuteur", user_id="bob", state={"app:version": 1})
        assert c.execute("SELECT state FROM app_states").fetchone()[0] == (
            '{"version":1,"saison":"Été"}'
        )
        sessions = [s for (s,) in c.execute("SELECT state FROM sessions WHERE user_id = 'chloe'")]
        assert '{"nom": "Chlo\\u00e9"}' in sessions
    finally:
        c.close()
    text = " ".join(lesson_text("03_ce_que_contient_le_fichier.ipynb").split())
    assert "une seconde `create_session` qui apporte une clé `user:` à un élève déjà connu" in text
    assert "seconde `create_session` avec une clé `user:` ou `app:`" in text  # À retenir


def test_a_read_only_last_connection_leaves_the_wal_as_lessons_3_and_5_say(tmp_path: Path):
    """Only a last connection that can write checkpoints and removes -wal and -shm on close; a
    read-only one (mode=ro, lesson 3's `lecture`) leaves them, with the data in the -wal."""
    db = tmp_path / "t.db"

    def around() -> list[str]:
        return sorted(p.name for p in tmp_path.glob("t.db*"))

    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("CREATE TABLE t (x TEXT)")
    with writer:
        writer.execute("INSERT INTO t VALUES ('Lemercier')")
    reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    reader.execute("SELECT count(*) FROM t").fetchone()
    writer.close()
    reader.close()  # the last connection, read-only
    assert around() == ["t.db", "t.db-shm", "t.db-wal"]
    assert b"Lemercier" in (tmp_path / "t.db-wal").read_bytes()
    assert b"Lemercier" not in db.read_bytes()
    last = sqlite3.connect(db)  # control: a last connection that can write
    last.execute("SELECT count(*) FROM t").fetchone()
    last.close()
    assert around() == ["t.db"] and b"Lemercier" in db.read_bytes()
    for name, cell in (("05_reprendre_apres_redemarrage.ipynb", "l5-c05"), (GLOSSARY, "gl-c05")):
        nb = nbformat.read(LESSONS / name, as_version=4)
        source = " ".join(next(c for c in nb.cells if c.id == cell).source.split())
        assert "en lecture seule (`mode=ro`)" in source.replace("\u00a0", " "), name
    summary = lesson_text("05_reprendre_apres_redemarrage.ipynb")
    assert "une dernière connexion en lecture seule\n  (`mode=ro`) les laisse" in summary
