"""Running an nbgrader command for the class tools: its environment, its log, a progress bar.

The command's output (nbgrader's log) goes to a file, line by line, and to a
``grading.nbgrader_log.LogWatcher`` that tells when nbgrader is done with a student; the bar
advances then. Nothing of nbgrader's log reaches the terminal (its warnings, such as the
checksum one of nbgrader issue 1961, stay in the file): the tools print their own summary.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tqdm import tqdm

from .nbgrader_log import DONE, FAILED, SKIPPED, LogWatcher
from .sandbox_setting import NO_SANDBOX_ENV

__all__ = [
    "BIN",
    "ProgressBar",
    "nbgrader_env",
    "pump",
    "run_logged",
    "start",
    "tools_on_path",
    "warnings_to_log",
]

BIN = Path(sys.executable).parent


# The folder holding this `grading` package: nbgrader must import it (the export plugin, the late
# penalty, the feedback filters) even when it runs in another course folder, such as the demo's.
PACKAGE_PARENT = Path(__file__).resolve().parent.parent


def nbgrader_env(sandboxed: bool = True) -> dict[str, str]:
    """The environment of an nbgrader command: this Python's bin/ first (its gradebook runs
    ``alembic``), this ``grading`` package importable, and the sandbox switch when the
    instructor turned it off."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    path = [str(PACKAGE_PARENT), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    if not sandboxed:  # the default of StartOutOfKernelGrading.sandboxed (grading.hooks)
        env[NO_SANDBOX_ENV] = "1"
    return env


def tools_on_path() -> None:
    """Put this Python's bin/ first on PATH in this process too: nbgrader's gradebook, opened
    here through its API, runs ``alembic`` when it creates a database."""
    path = os.environ.get("PATH", "")
    if not path.startswith(f"{BIN}{os.pathsep}"):
        os.environ["PATH"] = f"{BIN}{os.pathsep}{path}"


def start(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    """Start an nbgrader command in `cwd`, its log (stdout and stderr) on one pipe."""
    return subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )


def pump(proc: subprocess.Popen, watcher: LogWatcher, log, lock: threading.Lock) -> None:
    """Copy the command's log into `log` and through `watcher` until it ends."""
    for line in proc.stdout:
        with lock:
            log.write(line)
            watcher.feed(line)


def run_logged(cmd: list[str], cwd: Path, env: dict[str, str], watcher: LogWatcher, log) -> int:
    """Run one nbgrader command to its end, its log read by `watcher`; its exit status."""
    proc = start(cmd, cwd, env)
    try:
        pump(proc, watcher, log, threading.Lock())
        return proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@contextmanager
def warnings_to_log(log_path: Path) -> Iterator[None]:
    """Python warnings raised in this process (SQLAlchemy's ``SAWarning`` when nbgrader's
    gradebook API merges parallel results, for one) go to the end of the log, not to the
    teacher's terminal, whose only text is the tools' French summary."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        yield
    if caught:
        with open(log_path, "a", encoding="utf-8") as log:
            for w in caught:
                log.write(
                    f"[grading | WARNING] {w.category.__name__} in {w.filename} line "
                    f"{w.lineno} - {w.message}\n"
                )


class ProgressBar:
    """tqdm bar over the submissions; advances when nbgrader is done with one."""

    def __init__(self, total: int, desc: str, done_label: str = "notés") -> None:
        self.bar = tqdm(total=total, desc=desc, unit="rendu")
        self.labels = {DONE: done_label, SKIPPED: "sautés", FAILED: "échecs"}
        self.counts = {DONE: 0, SKIPPED: 0, FAILED: 0}

    def __call__(self, student: str, kind: str) -> None:
        self.counts[kind] += 1
        postfix = {self.labels[k]: n for k, n in self.counts.items()}
        self.bar.set_postfix(postfix, refresh=False)
        self.bar.update(1)
        if kind == FAILED:
            tqdm.write(f"✘ {student}\u00a0: échec (détails à la fin)")

    def close(self) -> None:
        self.bar.close()
