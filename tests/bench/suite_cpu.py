"""Where the suite's CPU goes: by test module (the module's own processes and every process it
started) and by kind of command, sampled while a `make test` runs.

Run ``python tests/bench/suite_cpu.py OUT.json -- make test`` (any command after ``--``). Every
process is sampled four times a second; a process is counted for the test that was running in the
worker that started it (``PYTEST_CURRENT_TEST``, which pytest sets in the worker's environment
and every child inherits), else as "outside tests". A process shorter than the sampling period is
missed, so the totals are a lower bound; the command's own ``time`` says the whole. The suite's
goal (12 minutes on 2 cores) is a CPU budget: this says which modules spend it.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import psutil

# the first that matches a process's command line names its kind
KINDS = (
    ("chromium", r"chrom"),
    ("playwright", r"playwright|/node "),
    ("ipykernel", r"ipykernel"),
    ("nbgrader", r"bin/nbgrader|nbgrader\.apps|-m nbgrader"),
    ("jupyterhub", r"bin/jupyterhub |-m jupyterhub\b"),
    ("jupyter server", r"singleuser|jupyter-lab|jupyter_server|jupyterlab|jupyter lab"),
    ("python -m grading", r"-m grading\."),
    ("python -m course", r"-m course\."),
    ("bwrap", r"bwrap"),
    ("postgres", r"postgres"),
    ("pip/uv", r"\bpip\b|/uv |uv pip"),
    ("pytest worker", r"execnet|xdist|pytest"),
)
OUTSIDE = "outside tests"


def _kind(command: str) -> str:
    for kind, pattern in KINDS:
        if re.search(pattern, command):
            return kind
    return "other: " + (command.split()[0].rsplit("/", 1)[-1] if command else "?")


def _module(env: dict[str, str]) -> str:
    current = env.get("PYTEST_CURRENT_TEST", "")
    return current.split("::", 1)[0] if current else OUTSIDE


def _cpu(times: Any) -> float:
    return 0.0 if times is None else times.user + times.system


def before() -> dict[tuple[int, float], float]:
    """The CPU every process already spent before the command: not the command's."""
    return {
        (p.info["pid"], p.info["create_time"]): _cpu(p.info["cpu_times"])
        for p in psutil.process_iter(["pid", "create_time", "cpu_times"])
    }


def sample(
    done: threading.Event, already: dict[tuple[int, float], float], period: float = 0.25
) -> dict[tuple[int, float], list]:
    """(pid, start time) -> [module, kind, CPU seconds spent since `already`], until `done`."""
    seen: dict[tuple[int, float], list] = {}
    me = psutil.Process().pid
    while not done.is_set():
        for proc in psutil.process_iter(["pid", "create_time", "cpu_times"]):
            info = proc.info
            if info["pid"] == me or info["cpu_times"] is None:
                continue
            key = (info["pid"], info["create_time"])
            cpu = _cpu(info["cpu_times"]) - already.get(key, 0.0)
            if key in seen:
                seen[key][2] = cpu
                continue
            try:
                command = " ".join(proc.cmdline())[:300] or proc.name()
                env = proc.environ()
            except (psutil.Error, OSError):
                command, env = "?", {}
            seen[key] = [_module(env), _kind(command), cpu]
        done.wait(period)
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the JSON report")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command to run")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run after --")
    done = threading.Event()
    result: dict = {}
    already = before()
    sampler = threading.Thread(target=lambda: result.update(seen=sample(done, already)))
    sampler.start()
    started = time.monotonic()
    try:
        status = subprocess.call(command)
    finally:
        done.set()
        sampler.join()
    by_kind: Counter[str] = Counter()
    kinds_of: dict[str, Counter[str]] = defaultdict(Counter)  # module -> its CPU by kind
    for module, kind, cpu in result["seen"].values():
        if cpu < 0.05:
            continue
        by_kind[kind] += cpu
        kinds_of[module][kind] += cpu
    modules = sorted(kinds_of, key=lambda m: -kinds_of[m].total())
    report = {
        "command": command,
        "status": status,
        "wall_s": round(time.monotonic() - started),
        "sampled_cpu_s": round(by_kind.total()),
        "by_kind": {k: round(v) for k, v in by_kind.most_common()},
        "by_module": {
            module: {"cpu_s": round(kinds_of[module].total())}
            | {k: round(v) for k, v in kinds_of[module].most_common()}
            for module in modules[:60]
        },
    }
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"sampled CPU: {report['sampled_cpu_s']} s in {report['wall_s']} s")
    for module, row in list(report["by_module"].items())[:25]:
        print(f"{row['cpu_s']:6d} s  {module}")
    return status


if __name__ == "__main__":
    sys.exit(main())
