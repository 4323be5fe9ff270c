"""Facts about google-adk 2.10 that lessons 1 to 3 state (issue 21), measured on ADK itself:
where `GetSessionConfig` is imported from, what the `db` extra installs, and how each service
writes an accented state value (escaped by `json.dumps`, or plain UTF-8 after ADK's SQL merge).
"""

from __future__ import annotations

import importlib.metadata
import re
import sqlite3
from pathlib import Path

import nbformat
import pytest
from helpers import REPO

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
