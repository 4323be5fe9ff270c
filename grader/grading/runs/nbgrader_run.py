"""The one place a class tool starts an nbgrader command, its log read line by line
(:func:`run_logged`, a ``LogWatcher`` moving the progress bar) or kept whole (:func:`run_quiet`).
Nothing of nbgrader's log reaches the terminal (its warnings, such as the checksum one of nbgrader
issue 1961, stay in the file): the tools print their own French summary."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from ..nbgrader_ext.sandbox_setting import NO_SANDBOX_ENV
from .nbgrader_log import DONE, FAILED, LOG_RECORD, SKIPPED, LogWatcher

__all__ = [
    "ProgressBar",
    "nbgrader_env",
    "pump",
    "run_logged",
    "run_quiet",
    "start",
    "stop",
    "tools_on_path",
    "warnings_to_log",
]

BIN = Path(sys.executable).parent


def nbgrader_env(sandboxed: bool = True) -> dict[str, str]:
    """This Python's bin/ first (its gradebook runs ``alembic``), the sandbox switch when turned
    off; ``nbgrader_config.py`` puts ``grading`` on ``sys.path`` itself."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if not sandboxed:  # the default of StartOutOfKernelGrading.sandboxed (nbgrader_ext.hooks)
        env[NO_SANDBOX_ENV] = "1"
    return env


def tools_on_path() -> None:
    """This Python's bin/ first on PATH here too: nbgrader's gradebook API runs ``alembic``."""
    path = os.environ.get("PATH", "")
    if not path.startswith(f"{BIN}{os.pathsep}"):
        os.environ["PATH"] = f"{BIN}{os.pathsep}{path}"


def start(args: Sequence[str], cwd: Path, sandboxed: bool = True) -> subprocess.Popen:
    """Start this Python's ``nbgrader <args>`` in `cwd`, stdout and stderr on one pipe."""
    return subprocess.Popen(
        [str(BIN / "nbgrader"), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=nbgrader_env(sandboxed),
    )


def pump(proc: subprocess.Popen, watcher: LogWatcher | None, log, lock: threading.Lock) -> None:
    """Copy the command's log into `log` (and through `watcher`) until it ends."""
    for line in proc.stdout:
        with lock:
            log.write(line)
            if watcher:
                watcher.feed(line)


def run_logged(
    args: Sequence[str], cwd: Path, watcher: LogWatcher | None, log, sandboxed: bool = True
) -> int:
    """Run ``nbgrader <args>`` to its end, its log read by `watcher`; its exit status."""
    proc = start(args, cwd, sandboxed)
    try:
        pump(proc, watcher, log, threading.Lock())
        return proc.wait()
    finally:
        stop(proc)


def stop(proc: subprocess.Popen) -> None:
    """Kill the command if it still runs, and reap it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@dataclass
class QuietRun:
    """How a quiet nbgrader command ended, and where its log is."""

    status: int
    log_path: Path
    log: str

    @property
    def last_error(self) -> str:
        """nbgrader's last ERROR or CRITICAL line, else the log's last line ("" if empty)."""
        records = filter(None, map(LOG_RECORD.match, self.log.splitlines()))
        errors = [m["text"] for m in records if m["level"] in ("ERROR", "CRITICAL")]
        lines = [line for line in self.log.splitlines() if line.strip()]
        return (errors or lines or [""])[-1]

    def failure(self, what: str) -> str:
        """One French sentence for a failed run: what failed, nbgrader's reason, the log."""
        reason = self.last_error
        reason = f"\u00a0: {reason.rstrip('.')}" if reason else ""
        return (
            f"✘ {what}\u00a0: nbgrader s'est arrêté en erreur (code {self.status}){reason}. "
            f"Journal complet\u00a0: {self.log_path}"
        )


def run_quiet(cwd: Path, args: Sequence[str], log_path: Path) -> QuietRun:
    """Run ``nbgrader <args>`` in `cwd` to its end, its whole log written to `log_path`."""
    with open(log_path, "w", encoding="utf-8") as log:
        status = run_logged(args, cwd, None, log)
    return QuietRun(status, log_path, log_path.read_text(encoding="utf-8"))


@contextmanager
def warnings_to_log(log_path: Path) -> Iterator[None]:
    """Python warnings of this process (SQLAlchemy's ``SAWarning`` when the gradebook API merges
    parallel results) go to the end of the log, not to the teacher's terminal."""
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
        self.bar.set_postfix({self.labels[k]: n for k, n in self.counts.items()}, refresh=False)
        self.bar.update(1)
        if kind == FAILED:
            tqdm.write(f"✘ {student}\u00a0: échec (détails à la fin)")

    def close(self) -> None:
        self.bar.close()
