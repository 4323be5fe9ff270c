"""The two demonstration sessions give the lessons' result exactly, on every service."""

from __future__ import annotations

import ast
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import LESSON_PROGRESSION

from course.tuteur import APP_NAME, demo


def transcript(events: list[Any]) -> list[tuple]:
    """What was said and done, without ids and clocks (which differ on purpose)."""
    out = []
    for e in events:
        for p in e.content.parts:
            fc, fr = p.function_call, p.function_response
            said = (
                ("call", fc.id, fc.name, fc.args)
                if fc
                else ("response", fr.id, fr.name, fr.response)
                if fr
                else ("text", p.text)
            )
            out.append((e.author, e.content.role, said, json.dumps(e.actions.state_delta)))
    return out


async def _replay(service: Any) -> tuple[Any, Any]:
    first_id, second_id = await demo(service)
    first = await service.get_session(app_name=APP_NAME, user_id="alice", session_id=first_id)
    second = await service.get_session(app_name=APP_NAME, user_id="alice", session_id=second_id)
    return first, second


async def test_demo_gives_the_lessons_result_on_every_service(
    session_service: Any, service_factory: Any, tmp_path: Path
) -> None:
    first, second = await _replay(session_service)
    assert (len(first.events), len(second.events)) == (20, 2)
    kinds = [t[2][0] for t in transcript(first.events)]
    assert kinds.count("call") == 4 and kinds.count("response") == 4 and kinds.count("text") == 12
    assert await session_service.get_user_state(app_name=APP_NAME, user_id="alice") == (
        LESSON_PROGRESSION
    )
    greeting = second.events[1].content.parts[0].text
    assert greeting.startswith("Bon retour, Alice ! Tu es au niveau 4 (2 bonnes réponses sur 3)")
    listed = await session_service.list_sessions(app_name=APP_NAME, user_id="alice")
    assert [s.id for s in listed.sessions] == [first.id, second.id]
    # same words, calls and deltas as a fresh run on the course's in-memory service
    ref_first, ref_second = await _replay(service_factory("course-memory", None))
    assert transcript(first.events) == transcript(ref_first.events)
    assert transcript(second.events) == transcript(ref_second.events)


async def test_demo_refuses_a_learner_who_already_has_data(session_service: Any) -> None:
    await demo(session_service)
    with pytest.raises(ValueError, match="a déjà des données") as refused:
        await demo(session_service)
    # a lesson's cell run twice: one French line in the notebook, and what to do (stop 59)
    assert refused.value._render_traceback_() == [f"DemoRefusee\u00a0: {refused.value}"]
    assert "réexécutez-la depuis sa première cellule" in str(refused.value)
    listed = await session_service.list_sessions(app_name=APP_NAME, user_id="alice")
    assert len(listed.sessions) == 2  # nothing added, nothing removed


async def test_demo_file_has_one_user_states_row(
    sqlite_service_kind: str, service_factory: Any, sqlite_db_path: Path, read_db: Any
) -> None:
    service = service_factory(sqlite_service_kind, sqlite_db_path)
    first_id, second_id = await demo(service)
    if hasattr(service, "close"):
        await service.close()
    got = read_db(sqlite_db_path)
    assert len(got["user_states"]) == 1
    app, user, state = got["user_states"][0]
    assert (app, user, json.loads(state)) == ("tuteur", "alice", LESSON_PROGRESSION)
    assert got["counts"] == {first_id: 20, second_id: 2}


def test_cli_demo_then_inspecter_prints_the_lessons_result(
    python: str, cli_env: dict[str, str], sqlite_db_path: Path, tmp_path: Path
) -> None:
    def module(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [python, "-m", *args],
            capture_output=True,
            text=True,
            timeout=120,
            env=cli_env,
            cwd=tmp_path,
        )

    run = module("course.tuteur", "demo", "--db", str(sqlite_db_path))
    assert run.returncode == 0, run.stderr
    assert "20 puis 2 événements" in run.stdout
    shown = module("course.inspecter", str(sqlite_db_path))
    assert shown.returncode == 0, shown.stderr
    states_line, counts_line = shown.stdout.strip().splitlines()
    states, counts = ast.literal_eval(states_line), ast.literal_eval(counts_line)
    assert len(states) == 1 and states[0][:2] == ("tuteur", "alice")
    assert json.loads(states[0][2]) == LESSON_PROGRESSION
    assert sorted(c for c, _ in counts) == [2, 20] and len({s for _, s in counts}) == 2
    # a second demo on the same file is refused and changes nothing
    again = module("course.tuteur", "demo", "--db", str(sqlite_db_path))
    assert again.returncode == 1 and "a déjà des données" in again.stderr
    after = subprocess.run(
        [python, "-m", "course.inspecter", str(sqlite_db_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=cli_env,
        cwd=tmp_path,
    )
    assert after.stdout == shown.stdout


async def test_file_written_by_the_cli_is_read_by_adk(
    python: str, cli_env: dict[str, str], sqlite_db_path: Path, service_factory: Any
) -> None:
    env = dict(cli_env, TUTEUR_DB=str(sqlite_db_path))  # the default path comes from TUTEUR_DB
    run = subprocess.run(
        [python, "-m", "course.tuteur", "demo"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=sqlite_db_path.parent,
    )
    assert run.returncode == 0, run.stderr
    adk = service_factory("adk-sqlite", sqlite_db_path)
    listed = (await adk.list_sessions(app_name=APP_NAME, user_id="alice")).sessions
    second = await adk.get_session(app_name=APP_NAME, user_id="alice", session_id=listed[-1].id)
    assert len(second.events) == 2 and "niveau 4" in second.events[1].content.parts[0].text
    assert second.state["user:progression"] == LESSON_PROGRESSION["progression"]
