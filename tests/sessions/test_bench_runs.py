"""The speed benchmark runs and prints its ratios (timing itself is not asserted here)."""

from __future__ import annotations

import re
import subprocess
import sys

from helpers import REPO

BENCH = REPO / "tests" / "bench" / "bench_sessions.py"


def test_bench_quick_mode_prints_every_ratio():
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    for workload in (
        "append_event",
        "get_session (20 events)",
        "list_sessions (user with 200 sessions)",
        "list_sessions, user with 100,",
        "list_sessions, user with 10,",
        "list_sessions, all users",
        "append_event vs raw aiosqlite loop",
    ):
        line = next(line for line in done.stdout.splitlines() if line.startswith(workload))
        # median, min and CPU columns: each side's ms per call and their ratio
        assert len(re.findall(r"\d+\.\d+ +\d+\.\d+ +\d+\.\dx", line)) == 3, line
    assert "quick run: targets not checked" in done.stdout


def test_speedups_bench_quick_mode_prints_every_trick():
    done = subprocess.run(
        [sys.executable, str(BENCH.with_name("bench_speedups.py")), "--quick"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    for trick in (
        "parse_states",
        "stored_session vs Session.model_construct",
        "stored_session vs validated Session(...)",
        "stored_sessions vs a loop of stored_session",
        "stored_sessions vs Session.model_construct",
        "gc_paused: list_sessions of all",
        "read in place: get_session",
    ):
        line = next(line for line in done.stdout.splitlines() if line.startswith(trick))
        # median and min columns: each side's ms per call and their ratio
        assert len(re.findall(r"\d+\.\d+ +\d+\.\d+ +\d+\.\dx", line)) == 2, line
    assert "quick run: floor not checked" in done.stdout
