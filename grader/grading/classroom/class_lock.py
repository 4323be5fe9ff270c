"""One command at a time writes a class. Two `make grade` at once (a second terminal, a colleague
in the same hub folder) would rewrite the same autograded/ folders, gradebook rows and log; a
`make feedback` or an erasure beside a grading run would read half of it. Each command that
writes the class holds an exclusive ``flock`` on one file of its grader/ folder, and a second is
refused at once, in French, naming the first. The kernel drops the lock when its process ends,
however it ends (Ctrl-C, ``kill -9``, a crash): there is never a stale lock to remove by hand."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..french.system_reason import GradingError
from .paths import grader_path, no_course

__all__ = ["LOCK_FILE", "class_lock"]

LOCK_FILE = ".commande-en-cours"  # in grader/: which command holds the class, for the next one
_READ_ONLY = {errno.EACCES, errno.EPERM, errno.EROFS}
_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC


@contextmanager
def class_lock(grader_dir: str | os.PathLike[str] | None, command: str) -> Iterator[None]:
    """Hold the class of `grader_dir` (as ``course_dirs`` finds it) for `command` (« make
    grade »), or raise a GradingError naming the command that holds it; released when the block
    ends. A folder that is not there: ``paths.no_course``, as every command says it."""
    path = grader_path(grader_dir) / LOCK_FILE
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
        if writable:
            os.ftruncate(fd, 0)
            started = time.strftime("%H:%M:%S")
            os.pwrite(fd, f"{command} (processus {os.getpid()}, lancée à {started})\n".encode(), 0)
        try:
            yield
        finally:
            if writable:
                os.ftruncate(fd, 0)  # while still held: nobody reads a finished command
    finally:
        os.close(fd)


def _open(path: Path) -> tuple[int, bool] | None:
    """The lock file, and whether this user may write their command in it. Made group-readable
    (the umask permitting): in a course a group shares (``groupshared``), a colleague's command
    takes the same lock through a read-only descriptor."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | _FLAGS, 0o640), True
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            raise no_course(path.parent) from None
        if exc.errno not in _READ_ONLY:
            raise
    try:
        return os.open(path, os.O_RDONLY | _FLAGS), False
    except OSError as exc:
        if exc.errno not in _READ_ONLY | {errno.ENOENT}:
            raise
        return None


def _refusal(fd: int) -> str:
    """The French refusal, naming the holder as it wrote itself (our own text, 200 bytes at
    most: the folder is the teacher's)."""
    holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "une commande"
    return (
        f"Une autre commande travaille sur cette classe\u00a0: {holder}. Rien n'a été fait\u00a0: "
        "attendez qu'elle se termine, puis relancez."
    )
