"""Benchmark: each speed trick of the course's SQLite service against its plain equivalent.

Run ``python tests/bench/bench_speedups.py``. The tricks live in ``course/sessions/_speedups.py``
(and reading in place in ``_connection_thread.py``); each one's docstring quotes the ratio this
script prints. For each trick, the plain way and the trick are timed in alternating blocks of
calls (both meet the same machine load), their results are checked equal, and the median and
minimum wall-clock time per call are printed with their ratio (plain / trick). Exit status 1
if a trick is not at least ``--floor`` times faster by the median: a trick that stopped paying
should go. ``--quick`` runs a few iterations only, to check that the benchmark works.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_sessions import Result, alternate, course_event, fill_by_sql, in_scratch_folder

from course.sessions import Session, SqliteSessionService
from course.sessions import _speedups as speedups
from course.sessions import _sqlite_ops as ops
from course.sessions._connection_thread import NOT_HERE

APP = "tuteur"


def fields_of(count: int) -> list[dict[str, Any]]:
    """Field dicts of ``count`` listed sessions, as the service makes them."""
    return [
        {
            "id": f"s-{i:05}",
            "app_name": APP,
            "user_id": f"eleve-{i % 90}",
            "state": {"n": i, "user:niveau": i % 5},
            "events": [],
            "last_update_time": 1.0 + i,
        }
        for i in range(count)
    ]


def sync(call: Callable[[], Any]) -> Callable[[int], Any]:
    """``call`` as the service makes it: with the cyclic GC paused (``then`` of ``_run``)."""

    async def timed(_: int) -> Any:
        return speedups.gc_paused(call)

    return timed


async def compare(name: str, plain: Callable, trick: Callable, repeat: int, same=None) -> Result:
    """Time ``plain`` against ``trick`` (both ``async (i) -> result``), after checking that
    they return equal results (``same`` maps a result to what is compared)."""
    same = same or (lambda x: x)
    assert same(await plain(0)) == same(await trick(0)), name
    plain_t, trick_t = await alternate(plain, trick, repeat)
    return Result(name, plain_t, trick_t, target=0)


async def run(quick: bool, folder: Path) -> list[Result]:
    repeat = 5 if quick else 200
    results = []

    texts = [json.dumps({"n": i, "sujet": "python", "niveau": i % 5}) for i in range(200)]
    results.append(
        await compare(
            "parse_states: 200 states, one json.loads",
            sync(lambda: [ops.loads_state(t, "sessions") for t in texts]),
            sync(lambda: speedups.parse_states(texts)),
            repeat,
        )
    )

    some = fields_of(1_000)
    results.append(
        await compare(
            "stored_session vs Session.model_construct (x1000)",
            sync(lambda: [Session.model_construct(**f) for f in some]),
            sync(lambda: [speedups.stored_session(*f.values()) for f in some]),
            repeat,
        )
    )
    results.append(
        await compare(
            "stored_session vs validated Session(...) (x1000)",
            sync(lambda: [Session(**f) for f in some]),
            sync(lambda: [speedups.stored_session(*f.values()) for f in some]),
            repeat,
        )
    )

    many = fields_of(1_000 if quick else 10_000)
    results.append(
        await compare(
            f"stored_sessions vs a loop of stored_session ({len(many)})",
            sync(lambda: [speedups.stored_session(*f.values()) for f in many]),
            sync(lambda: speedups.stored_sessions([dict(f) for f in many])),
            repeat // 10 or 2,
        )
    )
    results.append(
        await compare(
            f"stored_sessions vs Session.model_construct ({len(many)})",
            sync(lambda: [Session.model_construct(**f) for f in many]),
            sync(lambda: speedups.stored_sessions([dict(f) for f in many])),
            repeat // 10 or 2,
        )
    )

    groups = {"eleve": (9 if quick else 90, 100), "nouveau": (10 if quick else 100, 10)}
    total = fill_by_sql(folder / "big.db", groups)
    async with SqliteSessionService(folder / "big.db") as service:
        gc_paused = speedups.gc_paused

        def listing(paused: bool):
            async def call(_: int):
                speedups.gc_paused = gc_paused if paused else lambda build: build()
                try:
                    return await service.list_sessions(app_name=APP)
                finally:
                    speedups.gc_paused = gc_paused

            return call

        results.append(
            await compare(
                f"gc_paused: list_sessions of all {total}",
                listing(False),
                listing(True),
                3 if quick else 21,
                same=lambda r: [s.model_dump() for s in r.sessions],
            )
        )

    async with SqliteSessionService(folder / "small.db") as service:
        session = await service.create_session(app_name=APP, user_id="bob", session_id="b")
        for i in range(20):
            await service.append_event(session=session, event=course_event(i))
        conn = await service._connection()

        def reading(in_place: bool):
            async def call(_: int):
                if not in_place:
                    conn.run_here = lambda job: NOT_HERE  # every read goes to the thread
                try:
                    return await service.get_session(app_name=APP, user_id="bob", session_id="b")
                finally:
                    conn.__dict__.pop("run_here", None)

            return call

        results.append(
            await compare(
                "read in place: get_session (20 events)",
                reading(False),
                reading(True),
                repeat,
                same=lambda s: s.model_dump(),
            )
        )
    return results


def report(results: list[Result], floor: float) -> list[str]:
    print(f"\n{'ms per call':<56} {'median wall':^26} {'min wall':^26}")
    sides = f"{'plain':>9} {'trick':>9} {'ratio':>6}"
    print(f"{'trick (calls per side)':<56} {sides} {sides}  floor (plain/trick)")
    missed = []
    for r in results:
        columns = [
            f"{stat(r.first.wall) * 1e3:9.3f} {stat(r.second.wall) * 1e3:9.3f} "
            f"{r.ratio('wall', stat):5.1f}x"
            for stat in (statistics.median, min)
        ]
        ok = r.ratio() >= floor
        missed += [] if ok else [r.name]
        label = f"{r.name} ({len(r.second.wall)})"
        print(f"{label:<56} {' '.join(columns)}  >= {floor}x {'ok' if ok else 'MISSED'}")
    print(
        "\nEach pair alternates in blocks of calls and returns equal results; the plain side is"
        " what the trick\nreplaces (see each docstring in course/sessions/_speedups.py)."
    )
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few iterations, floor unchecked")
    parser.add_argument("--floor", type=float, default=1.2, help="least ratio a trick must show")
    args = parser.parse_args()
    missed = report(in_scratch_folder(run, args.quick), args.floor)
    if args.quick:
        print("quick run: floor not checked")
        return 0
    print("every trick pays" if not missed else f"TRICK NOT PAYING: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
