"""tests/bench/suite_cpu.py: a test's child process is counted for that test's module, by its
kind; what a process spent before the command is not counted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import REPO

SPIN = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"
BURN = f"""
import subprocess, sys

def test_burns_in_a_child():
    subprocess.run([sys.executable, "-c", {SPIN.format(seconds=1.5)!r}], check=True)
"""


def test_a_childs_cpu_is_counted_for_the_module_that_started_it(tmp_path: Path) -> None:
    (tmp_path / "test_burn.py").write_text(BURN, encoding="utf-8")
    out = tmp_path / "cpu.json"
    # a process that spent its CPU before the command, then waits through it
    older = subprocess.Popen(
        [sys.executable, "-c", SPIN.format(seconds=1.5) + "time.sleep(60)\n"],
        env=os.environ | {"PYTEST_CURRENT_TEST": "avant.py::test_avant (call)"},
    )
    try:
        while (older_cpu := _cpu(older.pid))[0] != "S" or sum(older_cpu[1:]) < 1.4:
            pass  # its CPU spent: asleep in time.sleep
        run = subprocess.run(
            [sys.executable, str(REPO / "tests" / "bench" / "suite_cpu.py"), str(out), "--"]
            + [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_burn.py"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        older.kill()
        older.wait()
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    burned = report["by_module"]["test_burn.py"]
    assert burned["cpu_s"] >= 1 and burned["other: python"] >= 1, report
    assert "avant.py" not in report["by_module"], (older_cpu, report)
    assert "test_burn.py" in run.stdout


def _cpu(pid: int) -> tuple[str, float, float]:
    """The process's state, user and system CPU seconds (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return fields[0], int(fields[11]) / tick, int(fields[12]) / tick
