"""The speed benchmark runs and prints its ratios (timing itself is not asserted here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_sessions.py"


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
