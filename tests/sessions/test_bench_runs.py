"""The speed benchmarks run and print their ratios (timing itself is not asserted here)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import REPO

pytestmark = pytest.mark.slow  # nbgrader, kernels or the sandbox: not in make test-fast

BENCH = REPO / "tests" / "bench"
SESSIONS_WORKLOADS = (
    "append_event",
    "get_session (20 events)",
    "list_sessions (user with 200 sessions)",
    "list_sessions, user with 100,",
    "list_sessions, user with 10,",
    "list_sessions, all users",
    "append_event vs raw aiosqlite loop",
)
SPEEDUPS_TRICKS = (
    "parse_states",
    "stored_session vs Session.model_construct",
    "stored_session vs validated Session(...)",
    "stored_sessions vs a loop of stored_session",
    "stored_sessions vs Session.model_construct",
    "gc_paused: list_sessions of all",
    "read in place: get_session",
)


@pytest.mark.parametrize(
    ("script", "rows", "columns", "unchecked"),
    [
        ("bench_sessions.py", SESSIONS_WORKLOADS, 3, "quick run: targets not checked"),
        ("bench_speedups.py", SPEEDUPS_TRICKS, 2, "quick run: floor not checked"),
    ],
    ids=["sessions", "speedups"],
)
def test_bench_quick_mode_prints_every_ratio(script, rows, columns, unchecked):
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--quick"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr
    for row in rows:
        line = next(line for line in done.stdout.splitlines() if line.startswith(row))
        # each statistic's column: both sides' ms per call and their ratio
        assert len(re.findall(r"\d+\.\d+ +\d+\.\d+ +\d+\.\dx", line)) == columns, line
    assert unchecked in done.stdout
