"""Runs a student's ``oublier``: ``python -I -m course.labo.submission_runner WORK JOURNAL_FD``
with a ``RunPlan``, the cell's text and the database images on stdin.

Three kinds of process, so that the verdict never comes from one that ran student code, and a
call's process never holds another call's input:

- the **supervisor** (this module's ``main``) runs no student code. In the sandbox it is the
  PID namespace's first process: the kernel delivers it no signal from the namespace that it
  has not asked for, and it makes itself non-dumpable, so no process of the submission can
  trace it, read or write its memory, or open its file descriptors through ``/proc``. It alone
  holds the journal (the pipe to the grading process) and writes every record on it;
- in the sandbox, a **clean parent** (``_clean_parent``), forked from the supervisor before the
  supervisor has read anything of its input (the plan, the cell, the bases, hidden ones
  included, are still in the stdin pipe, which it closes): it imports the session service once,
  then for each call receives two pipes (nothing else) and forks the call's process. It never
  reads a call's input, so nothing of a call is in the memory the next call's process inherits;
  it stays non-dumpable, like the supervisor;
- for each planned call, a **call process**: it closes every descriptor but its two pipes, reads
  its own call's input (the service, the database's name, the learner's id, the cell) and
  nothing else, loads the cell, awaits ``oublier(service, user_id)`` once, reports on its pipe,
  and exits without closing anything (the files stay as they are right after the call, service
  still open, as in a tutor that keeps running). Outside the sandbox (the student's own
  ``verifier``, which has no hidden input) it is forked from the supervisor itself.

After each call the supervisor stops every other process (in the sandbox: all of the namespace,
detached ones included, but the clean parent), then reads the database, its ``-wal`` and its
``-shm`` itself (no symlink, regular files only, bounded size) and sends their bytes on the
journal: nothing the student's code leaves on disk afterwards, and no file it can reach, is
what gets judged; every other file left in the work folder or ``/tmp`` (a ``-journal`` included)
is counted. The call process's report is untrusted input: at most one result and one stall
notice, each a bounded JSON line; anything else makes the call a crash. Nothing it says decides
a verdict for the better: an exception it reports only lowers the grade (and saying "none" is
what a ``try``/``except`` in ``oublier`` says too), its open transaction and its stall notice
only pick between two fixed wordings. Whether ``oublier`` is an ``async def`` is not in the
report at all: the grading process reads it from the cell's syntax tree.

While a call runs, the supervisor polls every process of the submission and stops them all when
their resident memory together, or their CPU time together, passes the plan's budget, or at the
deadline. The work folder is the sandbox's own size-limited tmpfs; between scenarios it is
emptied, so that the hidden learners never share a folder with a visible scenario.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import inspect
import json
import os
import re
import select
import signal
import socket
import sqlite3
import stat
import sys
import tempfile
import threading
import time
import urllib.parse
import warnings
import weakref
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from course.app import APP_NAME

from .left_behind import left_behind, never_awaited, watch_threads
from .protocol import (
    MAX_ERROR_MESSAGE,
    MAX_ERROR_TYPE,
    MAX_SNAPSHOT_BYTES,
    CallOutcome,
    Crashed,
    FileState,
    LimitExceeded,
    LoadFailure,
    PlannedCall,
    RaisedError,
    Ready,
    RunPlan,
    Stalled,
    encode_frame,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["PRELUDE", "main"]

# Names the TP's first cell imports: the student's cell finds them here too, and nothing more.
PRELUDE = ("APP_NAME", "SqliteSessionService", "sqlite3")
# The call's watchdog writes its notice this long before the deadline.
WATCHDOG_MARGIN = 0.5
POLL_SECONDS = 0.02
MAX_REPORT = 16 << 10
CELL = "cellule_oublier"  # the file name the cell is compiled with
# The files of a base that SQLite keeps beside it while a connection is open: read and judged
# with it. Any other file left (a rollback ``-journal`` included: a transaction's old pages) is
# a stray file.
_KEEP = ("", "-wal", "-shm")
_HIDING = ("unreadable", "too_big")
_PID = 8  # bytes of a pid sent by the clean parent


class _WatchedConnection(sqlite3.Connection):
    """sqlite3's connection, weak-referenceable so the call can find those left open, and that
    tells its watch when it is closed (or freed) holding a transaction never validated: what
    that transaction wrote is rolled back (stop 59: a forgotten commit() before close() was
    told as a DELETE never written)."""

    _watch: _Watch | None = None
    _closed_here = False
    _validated = 0  # total_changes at its last commit or rollback

    def commit(self) -> None:
        super().commit()
        self._validated = self.total_changes

    def rollback(self) -> None:
        super().rollback()
        self._validated = self.total_changes

    def __exit__(self, *exc: object) -> bool:
        """``with conn:`` commits (or rolls back) without calling commit() above."""
        result = super().__exit__(*exc)
        self._validated = self.total_changes
        return result

    def autocommit_off(self) -> bool:
        """autocommit=False (Python 3.12+: the attribute is absent before)."""
        return getattr(self, "autocommit", None) is False

    def unvalidated(self) -> bool:
        """A transaction holds changes never validated. autocommit=False begins the next
        transaction at each commit: one that changed nothing since loses nothing."""
        idle = self.autocommit_off() and self.total_changes == self._validated
        return self.in_transaction and not idle

    def _note_unvalidated(self) -> None:
        with contextlib.suppress(Exception):  # closed already, or a student's subclass
            if self._watch is not None:
                self._watch.autocommit_off |= self.autocommit_off()
                self._watch.rolled_back |= self.unvalidated()
                self._watch.changed |= self.total_changes > 0

    def close(self) -> None:
        self._note_unvalidated()
        self._closed_here = True
        super().close()

    def __del__(self) -> None:
        """Freed without close() (« with conn: » validates, it never closes): Python closes it
        now, and the learner is told to close it themselves."""
        self._note_unvalidated()
        with contextlib.suppress(Exception):
            if self._watch is not None and not self._closed_here:
                self._watch.unclosed = True


# what Python's own messages call it (« 'sqlite3.Connection' object has no attribute … »): the
# learner reads their mistake, not this module's class
_WatchedConnection.__name__ = "sqlite3.Connection"


class _Watch:
    """Connections the student's cell opened itself with ``sqlite3.connect`` (not the
    service's), in the call's process."""

    def __init__(self, connect, traced: Callable[[str], None] | None = None) -> None:
        self._connect = connect
        self._traced = traced  # what the student's connections' statements are shown to
        self._connections: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.rolled_back = False  # a connection of the student's closed or freed unvalidated
        self.unclosed = False  # a connection of the student's freed without close()
        self.autocommit_off = False  # a connection of the student's in autocommit=False
        # a connection of the student's closed or freed after changing a row (total_changes
        # counts rows a rollback took back too)
        self.changed = False

    def connect(self, *args, **kwargs):
        """sqlite3.connect, watched, with secure_delete OFF (upstream SQLite's default).

        Debian's build turns secure_delete ON, macOS's and conda-forge's do not: forcing OFF
        makes the "nothing readable in the file" check the same on every machine. A student may
        still turn it ON on their own connection.
        """
        if len(args) < 6 and "factory" not in kwargs:
            kwargs["factory"] = _WatchedConnection
        if len(args) < 5:
            kwargs.setdefault("check_same_thread", False)
        conn = self._connect(*args, **kwargs)
        try:
            conn.execute("PRAGMA secure_delete = OFF")
        except sqlite3.Error:
            pass
        caller = sys._getframe(1).f_code.co_filename
        if isinstance(conn, _WatchedConnection) and caller == CELL:  # the student's own
            if self._traced is not None:
                conn.set_trace_callback(self._traced)
            conn._watch = self
            with self._lock:
                self._connections.add(conn)
        return conn

    def _snapshot(self) -> list[_WatchedConnection]:
        """The student's connections not freed yet (another thread may open one meanwhile)."""
        with self._lock:
            return list(self._connections)

    def left_open(self) -> bool:
        """True if a connection of the student's was freed without close(), or is still open:
        never closed, and not freed yet (a sqlite3 connection is in a reference cycle with its
        statement cache: only the cyclic collector frees it, at a time of its own)."""
        for conn in self._snapshot():
            if getattr(conn, "_closed_here", False):
                continue
            try:
                conn.total_changes  # noqa: B018 - raises once the connection is closed
            except sqlite3.Error:
                continue
            return True
        return self.unclosed

    def changed_rows(self) -> bool:
        """True if a connection of the student's deleted or changed a row, kept or rolled
        back: still open, or closed or freed before."""
        for conn in self._snapshot():
            with contextlib.suppress(sqlite3.Error):
                if conn.total_changes > 0:
                    return True
        return self.changed

    def open_transaction(self) -> bool:
        """True if a connection still open holds an uncommitted transaction."""
        for conn in self._snapshot():
            try:
                self.autocommit_off |= conn.autocommit_off()
                if conn.unvalidated():
                    return True
            except sqlite3.Error:
                pass
        return False


# -- the call process (student code) ----------------------------------------------------------


def _describe(exc: BaseException) -> dict:
    try:
        kind = str(type(exc).__name__)[:MAX_ERROR_TYPE]
    except BaseException:  # noqa: B036 - a hostile class may break anything
        kind = "Exception"
    try:
        message = str(exc)[:MAX_ERROR_MESSAGE]
    except BaseException:  # noqa: B036
        message = ""
    return {"type": kind, "message": message}


def _adk_service(path: str):
    """google-adk 2.10's SqliteSessionService on `path`, with the path a learner keeps herself
    (ADK has no ``db_path``) under the name the TP's ``oublier`` reads (the ADK appendix)."""
    from google.adk.sessions.sqlite_session_service import SqliteSessionService as Adk

    service = Adk(path)
    service.db_path = path
    return service


@dataclass(frozen=True)
class _CallInput:
    """All a call's process receives: its own call, nothing of the plan or the other calls."""

    service: str
    deadline: float
    database: str
    user_id: str

    def encode(self, source: str) -> bytes:
        return (json.dumps(asdict(self)) + "\n" + source).encode("utf-8")

    @classmethod
    def decode(cls, data: bytes) -> tuple[_CallInput, str]:
        line, _sep, source = data.decode("utf-8").partition("\n")
        return cls(**json.loads(line)), source


async def _at_work(service, user_id: str) -> None:
    """What the tutor has done before it is asked to forget a learner: read their sessions. The
    course's service keeps its connection open from then on (ADK's opens one per call), so the
    learner's own connection is not the last to close: SQLite's last close would checkpoint the
    ``-wal`` into the file for them, which oublier must do itself. Nothing of the student's has
    run yet: an error here is the base's, left for oublier to meet."""
    with contextlib.suppress(Exception):
        await service.list_sessions(app_name=APP_NAME, user_id=user_id)


SHARED_TMP = "/tmp"
# where else a process can leave a file that outlives it (POSIX shared memory, a tmpfs): in the
# sandbox, /dev is its own and has no shm, so a copy there fails; outside, it is watched as /tmp
SHARED_SHM = "/dev/shm"
_CREATING = os.O_CREAT | os.O_WRONLY | os.O_RDWR


# the files a learner's SQL writes: VACUUM INTO 'file', ATTACH [DATABASE] 'file' (the trace
# callback gets the statement with its values written in)
_SQL_FILES = re.compile(
    r"\b(?:VACUUM(?:\s+\w+)?\s+INTO|ATTACH(?:\s+DATABASE)?)\s+'((?:[^']|'')*)'", re.I
)


class _TmpWatch:
    """Outside the sandbox (the learner's verifier), /tmp and /dev/shm are the machine's,
    shared and never emptied: the entries this process writes at their top (open to write,
    sqlite3.connect, a ``file:`` URI, mkdir, rename, link, and its connections' VACUUM INTO and
    ATTACH), outside
    the call's work folder, are recorded as they are written, other processes' never, and a
    file left by an earlier check counts again when written again. ``count()``: how many are
    still there, as grading counts them in its own, empty /tmp. A child process's writes
    (fork, a command) are not seen here: the sandbox sees them."""

    def __init__(self) -> None:
        self._shared = [os.path.realpath(p) for p in (SHARED_TMP, SHARED_SHM)]
        self._work = os.getcwd()
        self._made: set[str] = set()
        sys.addaudithook(self._hook)

    def note(self, path) -> None:
        try:
            path = os.fsdecode(path)
            if path.startswith("file:"):  # a URI: its path, without its query
                path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
            full = os.path.realpath(path)
        except (TypeError, ValueError):
            return
        if full == self._work or full.startswith(self._work + os.sep):
            return
        for shared in self._shared:
            inside = os.path.relpath(full, shared)
            if not (inside.startswith(os.pardir) or inside == os.curdir):
                self._made.add(os.path.join(shared, inside.split(os.sep)[0]))  # made, or written
                return

    def sql(self, statement: str) -> None:
        for found in _SQL_FILES.finditer(statement):
            self.note(found[1].replace("''", "'"))

    def count(self) -> int:
        return sum(os.path.lexists(entry) for entry in self._made)

    def _hook(self, event: str, args: tuple) -> None:
        if event == "open" and len(args) == 3:
            path, mode, flags = args
            if isinstance(path, int):
                return
            if (isinstance(flags, int) and flags & _CREATING) or (
                isinstance(mode, str) and any(c in mode for c in "wax+")
            ):
                self.note(path)
        elif event in ("sqlite3.connect", "os.mkdir") and args:
            self.note(args[0])
        elif event in ("os.rename", "os.replace", "os.symlink", "os.link") and len(args) > 1:
            self.note(args[1])


def _count(value) -> int:
    """A count the call's process reported: a small non-negative int, else none."""
    return value if type(value) is int and 0 <= value < 1 << 16 else 0


def _call(
    given: _CallInput,
    source: str,
    say: Callable[[dict], None],
    tmp: _TmpWatch | None = None,
) -> list:
    """Load the cell and await one call, reporting through `say`. Returns the service it was
    given, for the caller to keep until its process ends: dropped here, its connection would be
    closed, and SQLite's last close checkpoints the ``-wal`` into the file, as oublier was asked
    not to rely on (the files are judged service still open, as in a tutor that keeps
    running)."""
    services: list = []
    watch = _Watch(sqlite3.connect, tmp.sql if tmp is not None else None)
    sqlite3.connect = watch.connect
    from course.sessions import SqliteSessionService

    # a thread started from now on (by the cell as it loads, by the call) is the learner's,
    # but the watchdog (the service's connection thread and aiosqlite's are workers)
    since = watch_threads()
    namespace = {"__name__": "submission"}
    namespace.update(zip(PRELUDE, (APP_NAME, SqliteSessionService, sqlite3), strict=True))
    try:
        exec(compile(source, CELL, "exec"), namespace)  # noqa: S102
    except BaseException as exc:  # noqa: B036 - a student's sys.exit() is an outcome too
        say({"load": _describe(exc)})
        return services
    oublier = namespace.get("oublier")
    if not callable(oublier):
        say({"load": None})
        return services

    def watchdog() -> None:
        time.sleep(max(0.0, given.deadline - WATCHDOG_MARGIN - time.monotonic()))
        say({"stalled": watch.open_transaction()})

    watching = threading.Thread(target=watchdog, daemon=True)
    watching.start()

    async def run() -> dict:
        error, warned = None, []
        try:
            make = _adk_service if given.service == "adk" else SqliteSessionService
            services.append(make(given.database))
            await _at_work(services[0], given.user_id)
            # a service call without await (« service.delete_session(...) ») raises nothing:
            # its coroutine is dropped, and Python only warns, when it is freed
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always", RuntimeWarning)
                result = oublier(services[0], given.user_id)
                if inspect.isawaitable(result):
                    await result
        except BaseException as exc:  # noqa: B036
            error = _describe(exc)
        left = await left_behind(since, spared=(watching,))
        unawaited = left or any(never_awaited(w) for w in warned)
        closed = bool(services) and getattr(services[0], "_closed", False) is True
        made = tmp.count() if tmp is not None else 0
        return {
            "error": error,
            "open": watch.open_transaction(),
            "rolled_back": watch.rolled_back,
            "unclosed": watch.left_open(),
            "closed": closed,
            "tmp": made,
            "unawaited": unawaited,
            "autocommit_off": watch.autocommit_off,
            "nothing_deleted": not watch.changed_rows(),
        }

    say({"result": asyncio.run(run())})
    return services


def _only(keep: tuple[int, ...]) -> None:
    """Close every descriptor but `keep`; 0, 1 and 2 lead nowhere (never the host's disk)."""
    top = 1 << 16
    last = 2
    for fd in sorted(keep):
        os.closerange(last + 1, fd)
        last = fd
    os.closerange(last + 1, top)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if fd not in keep:
            os.dup2(null, fd)
    if null not in keep and null > 2:
        os.close(null)


def _call_process(given: _CallInput | int, source: str, report: int) -> None:
    """The call: never returns, never writes anything but its own report pipe, and exits
    without closing anything (the files stay as they are right after the call). `given` is the
    call's input, or the pipe to read it from (in the sandbox)."""
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        keep = (report,) if isinstance(given, _CallInput) else (given, report)
        _only(keep)
        tmp = None
        if isinstance(given, _CallInput):  # outside the sandbox: /tmp watched, as in grading
            os.environ["TMPDIR"] = SHARED_TMP
            tempfile.tempdir = None
            tmp = _TmpWatch()
        if not isinstance(given, _CallInput):
            _dumps(True)  # its own /proc/self readable, as in any process (the student's own)
            chunks = []
            while chunk := os.read(given, 1 << 16):
                chunks.append(chunk)
            os.close(given)
            given, source = _CallInput.decode(b"".join(chunks))
        lock = threading.Lock()

        def say(data: dict) -> None:
            line = (json.dumps(data) + "\n").encode()
            with lock:
                os.write(report, line)

        still_open = _call(given, source, say, tmp)  # noqa: F841 - open until the exit
    except BaseException:  # noqa: B036 - whatever happens, never return into the supervisor
        pass
    os._exit(0)


def _clean_parent(channel: socket.socket) -> None:
    """Forks each call's process from a memory that never held any call's input; never
    returns. Receives two descriptors (the call's input pipe and its report pipe) per call,
    sends back the call's pid; the call's process is handed to the supervisor (a double fork:
    the namespace's orphans are the supervisor's children)."""
    try:
        _only((channel.fileno(),))
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        import course.sessions  # noqa: F401 - loaded once, before any call's input exists

        while True:
            message, fds, _flags, _address = socket.recv_fds(channel, 1, 2)
            if not message or len(fds) != 2:
                break
            middle = os.fork()
            if middle == 0:
                call = os.fork()
                if call == 0:
                    channel.close()
                    _call_process(fds[0], "", fds[1])
                try:
                    channel.sendall(call.to_bytes(_PID, "big"))
                finally:
                    os._exit(0)
            for fd in fds:
                os.close(fd)
            os.waitpid(middle, 0)
    except BaseException:  # noqa: B036 - never return into the supervisor's code
        pass
    os._exit(0)


# -- the supervisor (no student code) ---------------------------------------------------------


def _dumps(on: bool) -> None:
    """PR_SET_DUMPABLE: off, the submission's processes (same uid) cannot ptrace this one, nor
    open its /proc/<pid>/mem or fd/ entries."""
    if not sys.platform.startswith("linux"):  # pragma: no cover - the student's own verifier
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, int(on), 0, 0, 0) != 0 and not on:  # PR_SET_DUMPABLE
        raise SystemExit("PR_SET_DUMPABLE refusé\u00a0: le superviseur resterait traçable")


class _Processes:
    """The submission's processes: in the sandbox every process of the PID namespace but the
    supervisor; without it (the student's ``verifier``), the call's process group."""

    def __init__(self, sandboxed: bool) -> None:
        self.sandboxed = sandboxed and os.getpid() == 1
        self.spared: set[int] = set()  # the clean parent: the grader's, not the submission's
        self.tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        self.page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def pids(self, group: int) -> list[int]:
        me = os.getpid()
        try:
            names = os.listdir("/proc")
        except OSError:
            return []
        found = []
        for name in names:
            if not name.isdigit() or int(name) == me or int(name) in self.spared:
                continue
            if self.sandboxed:
                found.append(int(name))
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                if int(fields[2]) == group:  # process group
                    found.append(int(name))
            except (OSError, IndexError, ValueError):
                pass
        return found

    def usage(self, group: int) -> tuple[int, float]:
        """Resident bytes and CPU seconds of the submission's processes together (the CPU of
        those already reaped included)."""
        rss, cpu = 0, 0.0
        for pid in self.pids(group):
            try:
                with open(f"/proc/{pid}/statm", "rb") as f:
                    rss += int(f.read().split()[1]) * self.page
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                cpu += (int(fields[11]) + int(fields[12])) / self.tick
            except (OSError, IndexError, ValueError):
                pass
        times = os.times()
        return rss, cpu + times.children_user + times.children_system

    def stop_all(self, group: int) -> None:
        """SIGKILL every process of the submission and reap them (the namespace's orphans are
        this process's children)."""
        for _round in range(500):
            pids = self.pids(group) if self.sandboxed else []
            if not self.sandboxed:
                try:
                    os.killpg(group, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            _reap()
            if not self.pids(group):
                return
            time.sleep(0.01)


def _reap() -> list[tuple[int, int]]:
    done = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def _read_file(path: Path) -> tuple[FileState, bytes]:
    """A file of the work folder as it is now: a regular file, not followed if a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return FileState("missing"), b""
    except OSError:
        return FileState("unreadable"), b""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return FileState("unreadable"), b""
        if info.st_size > MAX_SNAPSHOT_BYTES:
            return FileState("too_big", info.st_size), b""
        chunks, total = [], 0
        while total <= MAX_SNAPSHOT_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        data = b"".join(chunks)
        if len(data) > MAX_SNAPSHOT_BYTES:
            return FileState("too_big", len(data)), b""
        return FileState("ok", len(data)), data
    except OSError:
        return FileState("unreadable"), b""
    finally:
        os.close(fd)


def _entries(folder: Path, device: int) -> list[tuple[str, bool]]:
    """Everything under `folder` on its own file system, children before their folder (a
    mount point inside it, such as a read-only bind that bubblewrap placed under /tmp, is
    left out with all it holds)."""
    found: list[tuple[str, bool]] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if info.st_dev != device:
            continue
        if stat.S_ISDIR(info.st_mode):
            try:
                os.chmod(path, 0o700)  # a student may have taken the rights away
            except OSError:
                pass
            found += _entries(Path(path), device)
            found.append((path, True))
        else:
            found.append((path, False))
    return found


def _device(folder: Path) -> int | None:
    try:
        return os.stat(folder).st_dev
    except OSError:
        return None


def _empty(folder: Path) -> None:
    """Remove everything in `folder` that is on its own file system."""
    device = _device(folder)
    if device is None:
        return
    for path, is_dir in _entries(folder, device):
        try:
            os.rmdir(path) if is_dir else os.unlink(path)
        except OSError:
            pass  # a mount point's parent: bubblewrap's, not the student's


def _stray_files(folders: list[Path], kept: set[str]) -> int:
    """Files left in the work folder and /tmp (on their own tmpfs) that are not a database of
    the scenario."""
    count = 0
    for folder in folders:
        device = _device(folder)
        if device is None:
            continue
        for path, is_dir in _entries(folder, device):
            if is_dir or (os.path.dirname(path) == str(folder) and os.path.basename(path) in kept):
                continue
            count += 1
    return count


class _Report:
    """What the call's process said on its pipe, checked: at most one result, one notice."""

    def __init__(self) -> None:
        self.buffer = b""
        self.result: dict | None = None
        self.load: dict | None = None
        self.loaded_missing = False
        self.stalled: bool | None = None
        self.bad = False

    def feed(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > MAX_REPORT:
            self.bad = True
            self.buffer = b""
        while b"\n" in self.buffer and not self.bad:
            line, self.buffer = self.buffer.split(b"\n", 1)
            self._line(line)

    def _line(self, line: bytes) -> None:
        try:
            data = json.loads(line)
            ((key, value),) = data.items()
        except (ValueError, AttributeError):
            self.bad = True
            return
        done = self.result is not None or self.load is not None or self.loaded_missing
        if key == "stalled" and self.stalled is None and type(value) is bool:
            self.stalled = value
        elif key == "result" and not done and isinstance(value, dict):
            self.result = value
        elif key == "load" and not done and (value is None or isinstance(value, dict)):
            if value is None:
                self.loaded_missing = True
            else:
                self.load = value
        else:
            self.bad = True


def _error(data) -> RaisedError | None:
    if data is None:
        return None
    kind, message = data.get("type"), data.get("message")
    if not isinstance(kind, str) or not isinstance(message, str):
        return RaisedError("Exception", "")
    return RaisedError(kind[:MAX_ERROR_TYPE], message[:MAX_ERROR_MESSAGE])


class _Supervisor:
    def __init__(
        self, plan: RunPlan, work: Path, journal: int, parent: tuple[socket.socket, int] | None
    ) -> None:
        self.plan = plan
        self.work = work
        self.journal = journal
        self.procs = _Processes(plan.sandboxed)
        self.still_open: list = []  # without fork (Windows): the last call's service
        self.parent = parent if self.procs.sandboxed else None
        if self.parent is not None:
            self.procs.spared.add(self.parent[1])

    def _start_call(self, given: _CallInput, source: str) -> tuple[int, int] | None:
        """The call's process and the read end of its report pipe; None if it could not be
        started (in the sandbox, the clean parent is gone: a call's process stopped it)."""
        read_end, write_end = os.pipe()
        if self.parent is None:
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child never returns
                os.close(read_end)
                _call_process(given, source, write_end)
            os.close(write_end)
            return pid, read_end
        channel, _pid = self.parent
        input_r, input_w = os.pipe()
        try:
            channel.settimeout(max(0.1, self.plan.deadline - time.monotonic()))
            socket.send_fds(channel, [b"c"], [input_r, write_end])
            answer = b""
            while len(answer) < _PID:
                chunk = channel.recv(_PID - len(answer))
                if not chunk:
                    raise ConnectionError("clean parent gone")
                answer += chunk
        except OSError:
            for fd in (read_end, input_w):
                os.close(fd)
            return None
        finally:
            os.close(input_r)
            os.close(write_end)
        data = given.encode(source)
        try:
            while data:  # the call reads all of it before running any student code
                data = data[os.write(input_w, data) :]
        except OSError:
            pass
        finally:
            os.close(input_w)
        return int.from_bytes(answer, "big"), read_end

    def send(self, record, payload: bytes = b"") -> None:
        data = encode_frame(record, payload)
        while data:
            written = os.write(self.journal, data)
            data = data[written:]

    def run_call(self, source: str, call: PlannedCall):
        """Start the call's process, watch it, stop everything; the report and why it was
        stopped (``"timeout"``, ``"memory"``, ``"cpu"``, or None)."""
        given = _CallInput(self.plan.service, self.plan.deadline, call.database, call.user_id)
        if not hasattr(os, "fork"):  # pragma: no cover - Windows: the student's own verifier
            report = _Report()
            self.still_open = _call(  # replaced by the next call's, once its files are read
                given, source, lambda d: report.feed((json.dumps(d) + "\n").encode())
            )
            return report, None
        started = self._start_call(given, source)
        if started is None:
            return _Report(), None
        pid, read_end = started
        os.set_blocking(read_end, False)
        report = _Report()
        ended, stop = False, None
        try:
            while not ended:
                ready, _w, _x = select.select([read_end], [], [], POLL_SECONDS)
                if ready:
                    try:
                        chunk = os.read(read_end, 65536)
                    except BlockingIOError:
                        chunk = None
                    if chunk:
                        report.feed(chunk)
                for done, _status in _reap():
                    ended = ended or done == pid
                if ended:
                    break
                if time.monotonic() >= self.plan.deadline:
                    stop = "timeout"
                    break
                rss, cpu = self.procs.usage(pid)
                if rss > self.plan.memory_bytes:
                    stop = "memory"
                    break
                if cpu > self.plan.cpu_seconds:
                    stop = "cpu"
                    break
        finally:
            self.procs.stop_all(pid)
        while True:  # what it wrote before dying
            try:
                chunk = os.read(read_end, 65536)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            report.feed(chunk)
        os.close(read_end)
        return report, stop

    def run_scenario(self, source: str, index: int, images: dict[str, bytes]) -> bool:
        """Every call of one scenario; False if the whole run must stop."""
        scenario = self.plan.scenarios[index]
        folders = [self.work] + ([Path("/tmp")] if self.procs.sandboxed else [])
        for folder in folders:
            _empty(folder)
        for image in scenario.images:
            (self.work / image.name).write_bytes(images[image.name])
        kept = {f"{image.name}{suffix}" for image in scenario.images for suffix in _KEEP}
        for call in scenario.calls:
            report, stop = self.run_call(source, call)
            if stop == "timeout":
                self.send(Stalled(call.call_id, bool(report.stalled)))
                return False
            if stop in ("memory", "cpu"):
                self.send(LimitExceeded(call.call_id, stop))
                return False
            if report.bad:
                self.send(Crashed(call.call_id, "bad_report"))
                return True
            if report.load is not None or report.loaded_missing:
                if report.loaded_missing:
                    self.send(LoadFailure("missing"))
                else:
                    self.send(LoadFailure("exception", _error(report.load)))
                return True
            result = report.result
            if result is None:
                self.send(Crashed(call.call_id))
                return True
            database, db_bytes = _read_file(self.work / call.database)
            wal, wal_bytes = _read_file(self.work / f"{call.database}-wal")
            shm, shm_bytes = _read_file(self.work / f"{call.database}-shm")
            error = result.get("error")
            self.send(
                CallOutcome(
                    call.call_id,
                    error=_error(error) if isinstance(error, dict) else None,
                    open_transaction=result.get("open") is True,
                    rolled_back=result.get("rolled_back") is True,
                    unclosed=result.get("unclosed") is True,
                    unawaited=result.get("unawaited") is True,
                    autocommit_off=result.get("autocommit_off") is True,
                    nothing_deleted=result.get("nothing_deleted") is True,
                    service_closed=result.get("closed") is True or self._wal_gone(database, wal),
                    # a -shm it cannot read (a folder, a link, too big) may hold anything
                    stray_files=_stray_files(folders, kept)
                    + (shm.state in _HIDING)
                    + _count(result.get("tmp")),
                    database=database,
                    wal=wal,
                    shm=shm,
                ),
                db_bytes + wal_bytes + shm_bytes,
            )
        return True

    def _wal_gone(self, database: FileState, wal: FileState) -> bool:
        """The course's service keeps its connection open and the base in WAL mode, and the
        call's process ends without closing anything: its ``-wal`` is still there, however
        emptied. Gone means the last connection was closed (the service's, whatever the means,
        even after oublier returned) or the file deleted under it: the ``-wal`` was not emptied
        by oublier. ADK's service keeps no connection and no ``-wal``."""
        return self.plan.service == "course" and database.state == "ok" and wal.state == "missing"

    def run(self, source: str, images: dict[str, bytes]) -> None:
        self.send(Ready())
        os.chdir(self.work)
        for index in range(len(self.plan.scenarios)):
            if not self.run_scenario(source, index, images):
                return


def _read_exact(stream, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise SystemExit("entrée du superviseur incomplète")
    return data


def _start_clean_parent() -> tuple[socket.socket, int] | None:
    """In the sandbox (this process is the namespace's PID 1), fork the clean parent now,
    before anything of the input is read; None elsewhere."""
    if os.getpid() != 1 or not hasattr(socket, "send_fds"):
        return None
    mine, its = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - never returns
        mine.close()
        _clean_parent(its)
    its.close()
    return mine, pid


def _stopped(_signum: int, _frame: object) -> None:
    """SIGTERM outside the sandbox (the learner's Stop button, through the check): leave by
    the running call's ``finally``, which kills its session (setsid: the runner's own process
    group is not the call's)."""
    raise SystemExit(1)


def main(workdir: str, journal_fd: int) -> int:
    _dumps(False)
    # As the namespace's PID 1, a signal from the submission reaches it only if it has a
    # handler: take Python's SIGINT handler away.
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    parent = _start_clean_parent()
    stdin = sys.stdin.buffer
    plan = RunPlan.from_json(stdin.readline().decode("utf-8"))
    source = _read_exact(stdin, plan.source_size).decode("utf-8")
    images = {
        image.name: _read_exact(stdin, image.size)
        for scenario in plan.scenarios
        for image in scenario.images
    }
    if not plan.sandboxed:  # a check stopped by the learner: its call's session goes too
        signal.signal(signal.SIGTERM, _stopped)
    if parent is None or not plan.sandboxed:
        import course.sessions  # noqa: F401 - loaded once here, shared by every forked call

    _Supervisor(plan, Path(workdir), journal_fd, parent).run(source, images)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
