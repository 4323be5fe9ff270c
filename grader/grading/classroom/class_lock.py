"""One command at a time writes a class. Two `make grade` at once (a second terminal, a colleague
in the same hub folder) would rewrite the same autograded/ folders, gradebook rows and log; a
`make feedback` or an erasure beside a grading run would read half of it. Each command that
writes the class holds an exclusive ``flock`` on one file of its grader/ folder, and a second is
refused at once, in French, naming the first. The nbgrader a command starts holds the lock too
(``held_fds``): killing the command alone does not let a second one in beside its nbgrader. The
kernel drops the lock when they end, however they end (Ctrl-C, ``kill -9``, a crash): there is
never a stale lock to remove by hand.

A restore stopped half-way (files written, the erased learners not yet erased again) leaves
``RESTORING``: every command but the restore itself is refused until it is run again."""

from __future__ import annotations

import errno
import fcntl
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ..french.french_format import french_datetime
from ..french.system_reason import GradingError
from .paths import grader_path, no_course

__all__ = [
    "ERASING",
    "INTERRUPTED_AT_START",
    "LOCK_FILE",
    "RESTORE",
    "RESTORING",
    "class_lock",
    "held_fds",
    "unfinished_restore",
]

LOCK_FILE = ".commande-en-cours"  # in grader/: which command holds the class, for the next one
RESTORING = ".restauration-en-cours"  # in grader/: the archive of a restore not finished yet
# in grader/: the next versions of files an erasure (make oublier-eleve) writes, until they
# replace them; those a stopped one left, the erasure run again removes
ERASING = ".effacement-en-cours"
RESTORE = "make restauration"
# Ctrl-C while the command still starts (Python importing, before its main and this lock): said
# by grading/__init__.py's hook, status 130; Ctrl-C later, inside the lock: class_lock says it
INTERRUPTED_AT_START = "Commande interrompue (Ctrl-C) avant de commencer\u00a0: rien n'a été fait."
_READ_ONLY = {errno.EACCES, errno.EPERM, errno.EROFS}
_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC
_held: list[int] = []  # the descriptor of the lock this process holds, for its nbgrader


def held_fds() -> tuple[int, ...]:
    """What a child process must keep open (``pass_fds``) to hold this process's class lock."""
    return tuple(_held)


def unfinished_restore(grader_dir: Path) -> str | None:
    """The refusal, in French, while a restore of this class is not finished; else None."""
    marker = Path(grader_dir) / RESTORING
    if not marker.is_file():
        return None
    archive = marker.read_text(encoding="utf-8", errors="replace").strip()[:500]
    return (
        f"la restauration de {archive} n'est pas finie, en cours ou interrompue (les élèves "
        "effacés depuis cette sauvegarde ne sont peut-être pas encore effacés de nouveau)\u00a0: "
        "attendez sa fin ou, si elle a été interrompue, relancez-la à l'identique (make "
        f"restauration SAUVEGARDE={archive})."
    )


@contextmanager
def class_lock(grader_dir: str | os.PathLike[str] | None, command: str) -> Iterator[None]:
    """Hold the class of `grader_dir` (as ``course_dirs`` finds it) for `command` (« make
    grade »), or raise a GradingError naming the command that holds it (or the restore to finish
    first); released when the block ends. A folder that is not there: ``paths.no_course``, as
    every command says it. Ctrl-C inside: a GradingError that says so, in French."""
    grader = grader_path(grader_dir)
    path = grader / LOCK_FILE
    opened = _open(path)
    if opened is None:  # a class this user can only read: a dry run reads, any write says why
        yield
        return
    fd, writable = opened
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise GradingError(_refusal(fd)) from None
        if command != RESTORE and (why := unfinished_restore(grader)):
            raise GradingError(f"Rien n'a été fait\u00a0: {why}")
        if writable:
            os.ftruncate(fd, 0)
            started = french_datetime(datetime.now(UTC))  # the course's time, not the server's
            os.pwrite(fd, f"{command} (processus {os.getpid()}, lancée le {started})\n".encode(), 0)
        _held.append(fd)
        try:
            yield
        except KeyboardInterrupt:
            raise GradingError(
                f"{command} interrompue (Ctrl-C)\u00a0: ce qui était fini est gardé, le reste "
                "n'a pas été fait. Relancez-la pour le finir."
            ) from None
        finally:
            _held.remove(fd)
            if writable:
                os.ftruncate(fd, 0)  # while still held: nobody reads a finished command
    finally:
        os.close(fd)


def _open(path: Path) -> tuple[int, bool] | None:
    """The lock file, and whether this user may write their command in it; None in a class this
    user cannot write. Group-readable: in a course a group shares (``groupshared``), a
    colleague's command takes the same lock through a read-only descriptor."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _FLAGS, 0o640)
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise no_course(path.parent) from None
        if exc.errno not in _READ_ONLY:
            raise
    else:
        if os.fstat(fd).st_uid == os.geteuid():
            os.fchmod(fd, 0o640)  # whatever the umask of the shell that made it
        return fd, True
    try:
        return os.open(path, os.O_RDONLY | _FLAGS), False
    except OSError as exc:
        if exc.errno not in _READ_ONLY | {errno.ENOENT}:
            raise
    if os.access(path.parent, os.W_OK):  # a class this user writes, a lock they cannot read
        raise GradingError(
            f"Rien n'a été fait\u00a0: le verrou de la classe, {path}, ne vous est pas lisible "
            "(fait avant que la classe soit partagée)\u00a0: son propriétaire peut le rendre "
            f"lisible au groupe (chmod 640 {path})."
        )
    return None


def _refusal(fd: int) -> str:
    """The French refusal, naming the holder as it wrote itself (our own text, 200 bytes at
    most: the folder is the teacher's)."""
    holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "une commande"
    wait = "attendez qu'elle se termine, puis relancez."
    if _suspended(holder):  # Ctrl-Z: it would wait forever, and so would the teacher
        wait = (
            "elle est suspendue (Ctrl-Z) et garde la classe\u00a0: reprenez-la dans son terminal "
            "(fg), laissez-la finir ou arrêtez-la par Ctrl-C, puis relancez."
        )
    return (
        f"Une autre commande travaille sur cette classe\u00a0: {holder}. Rien n'a été "
        f"fait\u00a0: {wait}"
    )


def _suspended(holder: str) -> bool:
    """Whether the process the holder's text names is stopped (Ctrl-Z, SIGSTOP), as Linux's
    /proc says; False wherever that cannot be known."""
    pid = re.search(r"processus (\d+)", holder)
    try:
        stat = Path(f"/proc/{pid[1]}/stat").read_text(encoding="ascii") if pid else ""
    except (OSError, UnicodeDecodeError):
        return False
    return stat.rpartition(")")[2].split()[:1] in (["T"], ["t"])
