"""Benchmark: the course's SqliteSessionService against google-adk 2.10's, same workload.

Run ``python tests/bench/bench_sessions.py`` (``make bench``). It prints, for each workload,
the median time per call of ADK and of the course, and the ratio ADK / course, then compares
the course's append_event with a raw aiosqlite loop (same inserts and update, one commit per
event, one connection): the practical limit. It exits with status 1 if a target is missed.
``--quick`` runs a few iterations only, to check that the benchmark works (targets not checked).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiosqlite
from google.adk.events import Event as AdkEvent
from google.adk.sessions.sqlite_session_service import SqliteSessionService as AdkService
from google.genai import types

from course.events import Content, Event, EventActions, Part
from course.sessions import SqliteSessionService
from course.sessions._schema import CREATE_SCHEMA_SQL

APP = "tuteur"


def course_event(i: int) -> Event:
    return Event(
        author="user" if i % 2 == 0 else "tuteur",
        invocation_id=f"inv-{i // 2}",
        content=Content(role="user", parts=[Part(text=f"Réponse numéro {i} de l'élève")]),
        actions=EventActions(state_delta={"user:compteur": i} if i % 4 == 0 else {}),
    )


def adk_event(i: int) -> AdkEvent:
    return AdkEvent(
        author="user" if i % 2 == 0 else "tuteur",
        invocation_id=f"inv-{i // 2}",
        content=types.Content(
            role="user", parts=[types.Part(text=f"Réponse numéro {i} de l'élève")]
        ),
        actions={"state_delta": {"user:compteur": i} if i % 4 == 0 else {}},
    )


async def interleaved(
    adk_call, course_call, repeat: int, block: int = 10
) -> tuple[list[float], list[float]]:
    """Seconds per call for ADK and the course, in alternating blocks of ``block`` calls:
    both meet the same machine load, and neither pays for the other's last disk flush."""
    adk_times: list[float] = []
    course_times: list[float] = []
    for first in range(0, repeat, block):
        for call, times in ((adk_call, adk_times), (course_call, course_times)):
            for i in range(first, min(first + block, repeat)):
                start = time.perf_counter()
                await call(i)
                times.append(time.perf_counter() - start)
    return adk_times, course_times


async def bench_append(adk, course, n: int):
    sessions = {}
    events = {}
    for name, service, make in (("adk", adk, adk_event), ("course", course, course_event)):
        sessions[name] = await service.create_session(app_name=APP, user_id="alice")
        events[name] = [make(i) for i in range(n)]

    async def adk_call(i):
        await adk.append_event(session=sessions["adk"], event=events["adk"][i])

    async def course_call(i):
        await course.append_event(session=sessions["course"], event=events["course"][i])

    return await interleaved(adk_call, course_call, n)


async def bench_raw_loop(path: Path, n: int) -> list[float]:
    """The practical limit: the same INSERT and UPDATE per event, one commit each."""
    events = [course_event(i) for i in range(n)]
    rows = [
        (e.id, e.invocation_id, e.timestamp, e.model_dump_json(exclude_none=True)) for e in events
    ]
    times = []
    async with aiosqlite.connect(path) as db:
        await db.execute("PRAGMA foreign_keys = ON")
        await db.execute("PRAGMA journal_mode = WAL")
        await db.execute("PRAGMA synchronous = NORMAL")
        await db.executescript(CREATE_SCHEMA_SQL)
        now = time.time()
        await db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, '{}', ?, ?)", (APP, "alice", "s", now, now)
        )
        await db.commit()
        for event_id, invocation_id, timestamp, data in rows:
            start = time.perf_counter()
            await db.execute(
                "INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp,"
                " event_data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (event_id, APP, "alice", "s", invocation_id, timestamp, data),
            )
            await db.execute(
                "UPDATE sessions SET update_time=? WHERE app_name=? AND user_id=? AND id=?",
                (timestamp, APP, "alice", "s"),
            )
            await db.commit()
            times.append(time.perf_counter() - start)
    return times


async def bench_course_append_alone(course, n: int) -> list[float]:
    session = await course.create_session(app_name=APP, user_id="dave")
    events = [course_event(i) for i in range(n)]
    times = []
    for event in events:
        start = time.perf_counter()
        await course.append_event(session=session, event=event)
        times.append(time.perf_counter() - start)
    return times


async def bench_get_session(adk, course, repeat: int):
    ids = {}
    for name, service, make in (("adk", adk, adk_event), ("course", course, course_event)):
        session = await service.create_session(app_name=APP, user_id="bob")
        for i in range(20):
            await service.append_event(session=session, event=make(i))
        ids[name] = session.id

    def call_for(name, service):
        async def call(_):
            got = await service.get_session(app_name=APP, user_id="bob", session_id=ids[name])
            assert len(got.events) == 20

        return call

    return await interleaved(call_for("adk", adk), call_for("course", course), repeat)


def list_call(service, user_id: str | None, expected: int):
    async def call(_):
        listed = await service.list_sessions(app_name=APP, user_id=user_id)
        assert len(listed.sessions) == expected

    return call


async def bench_list_user(adk, course, repeat: int):
    for service in (adk, course):
        for i in range(200):
            await service.create_session(app_name=APP, user_id="carol", state={"n": i})
    return await interleaved(list_call(adk, "carol", 200), list_call(course, "carol", 200), repeat)


def fill_by_sql(path: Path, sessions: int, users: int) -> None:
    """A file with ``sessions`` sessions spread over ``users`` users, written by plain SQL."""
    with sqlite3.connect(path) as conn:
        conn.executescript(CREATE_SCHEMA_SQL)
        now = time.time()
        conn.executemany(
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
            (
                (
                    APP,
                    f"eleve-{i % users}",
                    str(uuid.uuid4()),
                    json.dumps({"n": i}),
                    now + i,
                    now + i,
                )
                for i in range(sessions)
            ),
        )
        conn.executemany(
            "INSERT INTO user_states VALUES (?, ?, ?, ?)",
            ((APP, f"eleve-{u}", json.dumps({"niveau": u % 5}), now) for u in range(users)),
        )
    conn.close()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:9.3f} ms"


async def run(quick: bool, folder: Path) -> bool:
    n_append = 40 if quick else 400
    repeat = 5 if quick else 100
    big_repeat = 2 if quick else 9
    big_sessions = 1_000 if quick else 10_000
    big_users = 100
    results: list[tuple[str, float, float, float]] = []

    adk = AdkService(str(folder / "adk.db"))
    async with SqliteSessionService(folder / "course.db") as course:
        for name, (adk_times, course_times), target in [
            ("append_event", await bench_append(adk, course, n_append), 10),
            ("get_session (20 events)", await bench_get_session(adk, course, repeat), 5),
            (
                "list_sessions (user with 200 sessions)",
                await bench_list_user(adk, course, repeat),
                5,
            ),
        ]:
            results.append(
                (name, statistics.median(adk_times), statistics.median(course_times), target)
            )
        course_append = statistics.median(await bench_course_append_alone(course, n_append))

    for who in ("adk", "course"):
        fill_by_sql(folder / f"big-{who}.db", big_sessions, big_users)
    adk_big = AdkService(str(folder / "big-adk.db"))
    async with SqliteSessionService(folder / "big-course.db") as course_big:
        for label, user_id, expected in [
            (f"list_sessions, all users, file of {big_sessions} sessions", None, big_sessions),
            (
                f"list_sessions, one user, file of {big_sessions} sessions",
                "eleve-7",
                big_sessions // big_users,
            ),
        ]:
            adk_call = list_call(adk_big, user_id, expected)
            course_call = list_call(course_big, user_id, expected)
            await adk_call(0)  # first calls open connections and check the schema
            await course_call(0)
            adk_times, course_times = await interleaved(adk_call, course_call, big_repeat, block=1)
            results.append(
                (label, statistics.median(adk_times), statistics.median(course_times), 10)
            )

    raw = statistics.median(await bench_raw_loop(folder / "raw.db", n_append))

    print(f"{'workload':<52} {'ADK 2.10':>12} {'course':>12} {'ADK/course':>11}  target")
    ok = True
    for name, a, c, goal in results:
        met = a / c >= goal
        ok &= met
        print(f"{name:<52} {ms(a)} {ms(c)} {a / c:10.1f}x  >= {goal}x {'ok' if met else 'MISSED'}")
    limit_ratio = course_append / raw
    met = limit_ratio <= 2
    ok &= met
    print(f"\n{'':<52} {'raw loop':>12} {'course':>12} {'course/raw':>11}")
    print(
        f"{'append_event vs raw aiosqlite loop':<52} {ms(raw)} {ms(course_append)} "
        f"{limit_ratio:10.2f}x  <= 2x {'ok' if met else 'MISSED'}"
    )
    print(
        "Medians of wall-clock time per call; ADK and course calls alternate in blocks.\n"
        "Raw loop: the same INSERT + UPDATE per event, one commit each, one aiosqlite"
        " connection, WAL."
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations, targets unchecked")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
    try:
        ok = asyncio.run(run(args.quick, folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if args.quick:
        print("quick run: targets not checked")
        return 0
    print("all targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
