"""The one place a class tool starts an nbgrader command: :func:`run_logged` (and :func:`start`
for workers side by side) reads its log line by line through a ``nbgrader_log.LogWatcher``
that moves the progress bar; :func:`run_quiet` writes its whole log to ``rapport/``. Nothing of
nbgrader's log reaches the terminal (its warnings, such as the checksum one of nbgrader issue
1961, stay in the file): the tools print their own French summary.
"""

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
    """The environment of an nbgrader command: this Python's bin/ first (its gradebook runs
    ``alembic``), and the sandbox switch when the instructor turned it off. ``grading`` needs
    nothing here: the course's ``nbgrader_config.py``, which nbgrader reads first, puts its own
    folder on ``sys.path``."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    if not sandboxed:  # the default of StartOutOfKernelGrading.sandboxed (nbgrader_ext.hooks)
        env[NO_SANDBOX_ENV] = "1"
    return env


def tools_on_path() -> None:
    """Put this Python's bin/ first on PATH in this process too: nbgrader's gradebook, opened
    here through its API, runs ``alembic`` when it creates a database."""
    path = os.environ.get("PATH", "")
    if not path.startswith(f"{BIN}{os.pathsep}"):
        os.environ["PATH"] = f"{BIN}{os.pathsep}{path}"


def start(args: Sequence[str], cwd: Path, sandboxed: bool = True) -> subprocess.Popen:
    """Start ``nbgrader <args>`` (this Python's) in `cwd`, its log (stdout and stderr) on one
    pipe, in :func:`nbgrader_env`."""
    return subprocess.Popen(
        [str(BIN / "nbgrader"), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=nbgrader_env(sandboxed),
    )


def pump(proc: subprocess.Popen, watcher: LogWatcher, log, lock: threading.Lock) -> None:
    """Copy the command's log into `log` and through `watcher` until it ends."""
    for line in proc.stdout:
        with lock:
            log.write(line)
            watcher.feed(line)


def run_logged(
    args: Sequence[str], cwd: Path, watcher: LogWatcher, log, sandboxed: bool = True
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
        errors = [
            m["text"]
            for m in map(LOG_RECORD.match, self.log.splitlines())
            if m and m["level"] in ("ERROR", "CRITICAL")
        ]
        lines = [line for line in self.log.splitlines() if line.strip()]
        return errors[-1] if errors else (lines[-1] if lines else "")

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
    proc = start(args, cwd)
    try:
        log = proc.stdout.read()
        status = proc.wait()
    finally:
        stop(proc)
    log_path.write_text(log, encoding="utf-8")
    return QuietRun(status, log_path, log)


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
