"""The one place a class tool starts nbgrader: its log read line by line (:func:`run_logged`) or
kept whole in ``rapport/`` (:func:`run_quiet`); none of it reaches the terminal (nbgrader issue
1961's checksum warnings stay in the file), the tools print their own French summary."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from ..classroom.class_lock import class_lock, held_fds
from ..classroom.ids import quoted, shown
from ..classroom.paths import CourseDirs
from ..french.french_args import FrenchParser
from ..french.system_reason import GradingError, french_message
from ..nbgrader_ext.sandbox_setting import NO_SANDBOX_ENV
from .nbgrader_log import DONE, FAILED, LOG_RECORD, SKIPPED, LogWatcher

__all__ = [
    "ProgressBar",
    "assignment_command",
    "ensure_assignment",
    "finish",
    "nbgrader_env",
    "pump",
    "run_logged",
    "run_quiet",
    "start",
    "stop",
    "student_pattern",
    "warnings_to_log",
    "with_force",
]

FORCE = "--force"
_STUDENT = ("--student", "--CourseDirectory.student_id")
# NbGrader.fail's last record, after the one that says why (nbgrader 0.9.6's apps)
_CLOSING = re.compile(r"nbgrader \S+ failed")

BIN = Path(sys.executable).parent


def nbgrader_env(sandboxed: bool = True, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment, the sandbox switch when turned off, and `extra` (a choice read by
    ``nbgrader_config.py``, which puts ``grading`` on ``sys.path`` and stamps a new gradebook in
    the process itself)."""
    # the switch: the default of StartOutOfKernelGrading.sandboxed (nbgrader_ext.hooks)
    return dict(os.environ) | ({} if sandboxed else {NO_SANDBOX_ENV: "1"}) | dict(extra or {})


def start(
    args: Sequence[str], cwd: Path, sandboxed: bool = True, env: Mapping[str, str] | None = None
) -> subprocess.Popen:
    """Start this Python's ``nbgrader <args>`` in `cwd`, stdout and stderr on one pipe."""
    return subprocess.Popen(
        [str(BIN / "nbgrader"), *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        # the kernel writes to this pipe too, and a student's cell can write any bytes there
        encoding="utf-8",
        errors="replace",
        env=nbgrader_env(sandboxed, env),
        pass_fds=held_fds(),  # the class lock: held while nbgrader runs, its caller killed or not
    )


def pump(proc: subprocess.Popen, watcher: LogWatcher | None, log, lock: threading.Lock) -> None:
    """Copy the command's log into `log` (and through `watcher`) until it ends."""
    for line in proc.stdout:
        with lock:
            log.write(line)
            if watcher:
                watcher.feed(line)


def run_logged(
    args: Sequence[str],
    cwd: Path,
    watcher: LogWatcher | None,
    log,
    sandboxed: bool = True,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``nbgrader <args>`` to its end, its log read by `watcher`; its exit status."""
    proc = start(args, cwd, sandboxed, env)
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
        """nbgrader's last ERROR or CRITICAL line, else the log's last line ("" if empty), shown
        inert: a kernel (a student's cell) writes to the same log."""
        records = filter(None, map(LOG_RECORD.match, self.log.splitlines()))
        errors = [m["text"] for m in records if m["level"] in ("ERROR", "CRITICAL")]
        # nbgrader's closing « nbgrader collect failed » says nothing the line before it does not
        errors = [e for e in errors if not _CLOSING.fullmatch(e)] or errors
        lines = [line for line in self.log.splitlines() if line.strip()]
        return shown((errors or lines or [""])[-1])

    def failure(self, what: str) -> str:
        """One French sentence for a failed run: what failed, nbgrader's reason, the log."""
        reason = f"\u00a0: {reason.rstrip('.')}" if (reason := self.last_error) else ""
        return (
            f"✘ {what}\u00a0: nbgrader s'est arrêté en erreur (code {self.status}){reason}. "
            f"Journal complet\u00a0: {self.log_path}"
        )


def run_quiet(
    cwd: Path, args: Sequence[str], log_path: Path, env: Mapping[str, str] | None = None
) -> QuietRun:
    """Run ``nbgrader <args>`` in `cwd` to its end, its whole log written to `log_path`."""
    with open(log_path, "w", encoding="utf-8") as log:
        status = run_logged(args, cwd, None, log, env=env)
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

    def again(self, student: str, kind: str, why: str) -> None:
        """`student`, counted as `kind`, is graded once more (`why`, in French)."""
        self.counts[kind] -= 1
        self.bar.update(-1)
        tqdm.write(f"↻ {student}\u00a0: noté à nouveau ({why})")

    def close(self) -> None:
        self.bar.close()


def student_pattern(args: Sequence[str]) -> str | None:
    """The instructor's nbgrader ``--student`` glob, if any. Given twice, refused: nbgrader keeps
    the last one only, and the first student would be reported as graded by nobody."""
    patterns = []
    for k, arg in enumerate(args):
        if arg.startswith(tuple(f"{flag}=" for flag in _STUDENT)):
            patterns.append(arg.split("=", 1)[1])
        elif arg in _STUDENT and k + 1 < len(args):
            patterns.append(args[k + 1])
    if len(set(patterns)) > 1:
        given = ", puis ".join(quoted(shown(p)) for p in patterns)
        raise GradingError(
            f"--student donné plusieurs fois ({given})\u00a0: nbgrader ne garderait que le "
            "dernier. Pour plusieurs élèves, un motif (--student='ana*') ou une commande par élève."
        )
    return patterns[-1] if patterns else None


def with_force(args: tuple[str, ...], force: bool) -> tuple[bool, tuple[str, ...]]:
    """(whether the run regrades everything, nbgrader's arguments saying so)."""
    force = force or FORCE in args or "-f" in args
    if force and FORCE not in args:
        args += (FORCE,)
    return force, args


def finish(
    parser: FrenchParser,
    run: Callable[[], tuple[int, list[str]]],
    command: str,
    grader_dir: Path | None,
) -> int:
    """Run the class command `command` (« make export ») alone on its class (``class_lock``),
    print its French summary (on stderr if it failed); its status."""
    try:
        with class_lock(grader_dir, command):
            status, lines = run()
    except FileNotFoundError as exc:  # no course there: one French sentence, no traceback
        parser.fail(french_message(exc))
    except GradingError as exc:  # another command at work on the class: nothing done
        print(f"✘ {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines), file=sys.stderr if status else sys.stdout)
    return status


def assignment_command(
    argv: list[str] | None,
    prog: str,
    description: str,
    command: Callable[[str, list[str], Path | None], tuple[int, list[str]]],
    make_target: str,
) -> int:
    """A class command on one assignment (`make_target`, « make collect »): options it does not
    know go to nbgrader."""
    parser = FrenchParser(prog=prog, description=description)
    parser.add_argument("assignment", metavar="DEVOIR", help="le devoir, par exemple oublier")
    parser.add_grader_dir()
    args, extra = parser.parse_known_args(argv)
    return finish(
        parser,
        lambda: command(args.assignment, extra, args.grader_dir),
        make_target,
        args.grader_dir,
    )


def ensure_assignment(dirs: CourseDirs, assignment: str) -> str | None:
    """Make sure the gradebook knows `assignment`'s notebooks (autograde needs them), from its
    sources into a throw-away release (``notebooks/`` untouched, a due date kept); a note if so."""
    # nbgrader.api loads jupyter_server (0.85 s): feedback and rapport import this module without
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(dirs.db_url) as gb, suppress(MissingEntry):
        if gb.find_assignment(assignment).notebooks:
            return None
    source = dirs.source / assignment
    command = f"cd {dirs.grader_dir} && nbgrader generate_assignment {assignment}"
    if not source.is_dir():
        raise GradingError(
            f"Le devoir « {assignment} » n'est pas dans le carnet de notes et ses sources "
            f"({source}) manquent\u00a0: lancez « {command} » là où ses sources se trouvent."
        )
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        release = f"--CourseDirectory.release_directory={tmp}"
        args = ["generate_assignment", assignment, release, "--log-level=WARN"]
        run = run_quiet(dirs.grader_dir, args, dirs.log_file("generate_assignment"))
    if run.status != 0:
        raise GradingError(
            f"Le devoir « {assignment} » n'est pas dans le carnet de notes et nbgrader n'a pas "
            f"pu l'y ajouter ({run.last_error})\u00a0: lancez « {command} » pour voir l'erreur."
        )
    return (
        f"« {assignment} » manquait au carnet de notes\u00a0: ajouté depuis {source} "
        "(nbgrader generate_assignment, notebooks/ inchangé)."
    )
