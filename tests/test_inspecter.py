"""course.inspecter: the two lines lesson 3 reads, DataFrames for the lessons, and never a write."""

from __future__ import annotations

import ast
import hashlib
import json
import sqlite3
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from course.inspecter import InspectionError, inspecter, tables
from course.tuteur import demo


def _snapshot(folder: Path) -> dict[str, tuple[str, int]]:
    """Every file of the folder with its hash and modification time (ns)."""
    return {
        p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(folder.iterdir())
    }


@dataclass
class DemoFile:
    """A closed tutor file and the ids of its two demonstration sessions (20, then 2 events)."""

    path: Path
    first: str
    second: str


@pytest.fixture
async def demo_file(service_factory: Any, sqlite_db_path: Path) -> DemoFile:
    """The two demonstration sessions, written by the course's service, which is closed."""
    service = service_factory("course-sqlite", sqlite_db_path)
    first, second = await demo(service)
    await service.close()
    return DemoFile(sqlite_db_path, first, second)


def test_inspecter_prints_the_two_lines_and_writes_nothing(demo_file: DemoFile) -> None:
    before = _snapshot(demo_file.path.parent)
    states_line, counts_line = inspecter(demo_file.path).splitlines()
    frames = tables(demo_file.path)
    assert _snapshot(demo_file.path.parent) == before  # same files, same bytes, same times
    (row,) = ast.literal_eval(states_line)
    assert (
        row[:2] == ("tuteur", "alice")
        and json.loads(row[2])["progression"]["python"]["niveau"] == 4
    )
    by_session_id = sorted([(20, demo_file.first), (2, demo_file.second)], key=lambda c: c[1])
    assert ast.literal_eval(counts_line) == by_session_id
    assert set(frames) == {"app_states", "user_states", "sessions", "events"}


def test_tables_expand_json_into_columns(demo_file: DemoFile) -> None:
    frames = tables(demo_file.path)
    users = frames["user_states"]
    assert list(users.columns[:4]) == ["app_name", "user_id", "state", "update_time"]
    assert users.loc[0, "state.progression.python.niveau"] == 4
    assert users.loc[0, "state.progression.python.a_revoir"] == ["décorateurs de fonction"]
    events = frames["events"]
    assert len(events) == 22 and len(frames["sessions"]) == 2
    assert {"event_data.author", "event_data.content.parts", "event_data.content.role"} <= set(
        events.columns
    )
    calls = [
        p[0]["function_call"]["name"]
        for p in events["event_data.content.parts"]
        if "function_call" in p[0]
    ]
    assert sorted(calls) == ["enregistrer_reponse"] * 3 + ["fixer_niveau"]
    assert events.groupby("session_id").size().sort_values().tolist() == [2, 20]


async def test_inspecter_sees_a_writer_still_open(
    service_factory: Any, sqlite_db_path: Path
) -> None:
    service = service_factory("course-sqlite", sqlite_db_path)
    await demo(service)  # the service is still open: recent pages may live in -wal
    counts = ast.literal_eval(inspecter(sqlite_db_path).splitlines()[1])
    assert sorted(c for c, _ in counts) == [2, 20]


def test_bad_files_get_french_errors_and_stay_untouched(tmp_path: Path) -> None:
    with pytest.raises(InspectionError, match="Base introuvable"):
        inspecter(tmp_path / "absent.db")
    assert not (tmp_path / "absent.db").exists()
    text = tmp_path / "notes.txt"
    text.write_text("pas une base\n")
    with pytest.raises(InspectionError, match="n'est pas une base SQLite"):
        tables(text)
    assert text.read_text() == "pas une base\n"
    other = tmp_path / "autre.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE sessions (id TEXT)")
    con.commit()
    con.close()
    with pytest.raises(InspectionError, match="table\\(s\\) absente\\(s\\)\u00a0: app_states"):
        inspecter(other)


def test_cli_errors_exit_non_zero(python: str, cli_env: dict[str, str], tmp_path: Path) -> None:
    missing = subprocess.run(
        [python, "-m", "course.inspecter", str(tmp_path / "absent.db")],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env,
    )
    assert missing.returncode == 1 and "Erreur : Base introuvable" in missing.stderr
    default = subprocess.run(
        [python, "-m", "course.inspecter"],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env,
        cwd=tmp_path,
    )
    assert default.returncode == 1 and "tuteur.db" in default.stderr  # default path
    usage = subprocess.run(
        [python, "-m", "course.inspecter", "a", "b"],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env,
    )
    assert usage.returncode == 2 and "Usage" in usage.stderr
