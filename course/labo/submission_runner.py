"""Runs a student's ``oublier``: ``python -I -m course.labo.submission_runner WORK JOURNAL_FD``
with a ``RunPlan``, the cell's text and the database images on stdin.

Two kinds of process, so that the verdict never comes from one that ran student code:

- the **supervisor** (this module's ``main``) runs no student code. In the sandbox it is the
  PID namespace's first process: the kernel delivers it no signal from the namespace that it
  has not asked for, and it makes itself non-dumpable, so no process of the submission can
  trace it, read or write its memory, or open its file descriptors through ``/proc``. It alone
  holds the journal (the pipe to the grading process) and writes every record on it;
- for each planned call, a **call process** forked from it: it closes every descriptor but its
  own report pipe, loads the cell, awaits ``oublier(service, user_id)`` once, reports on that
  pipe, and exits without closing anything (the files stay as they are right after the call,
  service still open, as in a tutor that keeps running).

After each call the supervisor stops every other process (in the sandbox: all of the namespace,
detached ones included), then reads the database and its ``-wal`` itself (no symlink, regular
files only, bounded size) and sends their bytes on the journal: nothing the student's code
leaves on disk afterwards, and no file it can reach, is what gets judged. The call process's
report is untrusted input: at most one result and one stall notice, each a bounded JSON line;
anything else makes the call a crash. What it can claim only lowers the grade (an exception, a
result that cannot be awaited) or picks between two fixed wordings (its open transaction);
whether ``oublier`` is an ``async def`` is also read from the cell's syntax tree by the grading
process.

While a call runs, the supervisor polls every process of the submission and stops them all when
their resident memory together, or their CPU time together, passes the plan's budget, or at the
deadline. The work folder is the sandbox's own size-limited tmpfs; between scenarios it is
emptied, so that the hidden learners never share a folder with a visible scenario.
"""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import json
import os
import select
import signal
import sqlite3
import stat
import sys
import threading
import time
import weakref
from pathlib import Path

from course.app import APP_NAME

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

__all__ = ["PRELUDE", "main"]

# Names the TP's first cell imports: the student's cell finds them here too, and nothing more.
PRELUDE = ("APP_NAME", "SqliteSessionService", "sqlite3")
# The call's watchdog writes its notice this long before the deadline.
WATCHDOG_MARGIN = 0.5
POLL_SECONDS = 0.02
MAX_REPORT = 16 << 10
CELL = "cellule_oublier"  # the file name the cell is compiled with
_KEEP = ("", "-wal", "-shm", "-journal")


class _WatchedConnection(sqlite3.Connection):
    """sqlite3's connection, weak-referenceable so the call can find those left open."""


class _Watch:
    """Connections the student's cell opened itself with ``sqlite3.connect`` (not the
    service's), in the call's process."""

    def __init__(self, connect) -> None:
        self._connect = connect
        self._connections: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()
        self._lock = threading.Lock()

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
            with self._lock:
                self._connections.add(conn)
        return conn

    def open_transaction(self) -> bool:
        """True if a connection still open holds an uncommitted transaction."""
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                if conn.in_transaction:
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


def _call(plan: RunPlan, source: str, call: PlannedCall, say) -> None:
    """Load the cell and await one call, reporting through `say`."""
    watch = _Watch(sqlite3.connect)
    sqlite3.connect = watch.connect
    from course.sessions import SqliteSessionService

    namespace = {"__name__": "submission"}
    namespace.update(zip(PRELUDE, (APP_NAME, SqliteSessionService, sqlite3), strict=True))
    try:
        exec(compile(source, CELL, "exec"), namespace)  # noqa: S102
    except BaseException as exc:  # noqa: B036 - a student's sys.exit() is an outcome too
        say({"load": _describe(exc)})
        return
    oublier = namespace.get("oublier")
    if not callable(oublier):
        say({"load": None})
        return

    def watchdog() -> None:
        time.sleep(max(0.0, plan.deadline - WATCHDOG_MARGIN - time.monotonic()))
        say({"stalled": watch.open_transaction()})

    threading.Thread(target=watchdog, daemon=True).start()

    async def run() -> dict:
        error, awaitable = None, True
        try:
            make = _adk_service if plan.service == "adk" else SqliteSessionService
            result = oublier(make(call.database), call.user_id)
            if inspect.isawaitable(result):
                await result
            else:
                awaitable = False
        except BaseException as exc:  # noqa: B036
            error = _describe(exc)
        return {"error": error, "awaitable": awaitable, "open": watch.open_transaction()}

    say({"result": asyncio.run(run())})


def _call_process(plan: RunPlan, source: str, call: PlannedCall, report: int) -> None:
    """The forked call: never returns, never writes anything but its own report pipe, and
    exits without closing anything (the files stay as they are right after the call)."""
    try:
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        os.closerange(3, report)
        os.closerange(report + 1, 1 << 16)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # its output is never shown, nor written to the host's disk
            os.dup2(null, fd)
        os.close(null)
        lock = threading.Lock()

        def say(data: dict) -> None:
            line = (json.dumps(data) + "\n").encode()
            with lock:
                os.write(report, line)

        _call(plan, source, call, say)
    except BaseException:  # noqa: B036 - whatever happens, never return into the supervisor
        pass
    os._exit(0)


# -- the supervisor (no student code) ---------------------------------------------------------


def _no_dumps() -> None:
    """PR_SET_DUMPABLE 0: the submission's processes (same uid) cannot ptrace this one, nor
    open its /proc/<pid>/mem or fd/ entries."""
    if not sys.platform.startswith("linux"):  # pragma: no cover - the student's own verifier
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        raise SystemExit("PR_SET_DUMPABLE refusé\u00a0: le superviseur resterait traçable")


class _Processes:
    """The submission's processes: in the sandbox every process of the PID namespace but the
    supervisor; without it (the student's ``verifier``), the call's process group."""

    def __init__(self, sandboxed: bool) -> None:
        self.sandboxed = sandboxed and os.getpid() == 1
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
            if not name.isdigit() or int(name) == me:
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
    def __init__(self, plan: RunPlan, work: Path, journal: int) -> None:
        self.plan = plan
        self.work = work
        self.journal = journal
        self.procs = _Processes(plan.sandboxed)

    def send(self, record, payload: bytes = b"") -> None:
        data = encode_frame(record, payload)
        while data:
            written = os.write(self.journal, data)
            data = data[written:]

    def run_call(self, source: str, call: PlannedCall):
        """Fork the call's process, watch it, stop everything; the report and why it was
        stopped (``"timeout"``, ``"memory"``, ``"cpu"``, or None)."""
        if not hasattr(os, "fork"):  # pragma: no cover - Windows: the student's own verifier
            report = _Report()
            _call(self.plan, source, call, lambda d: report.feed((json.dumps(d) + "\n").encode()))
            return report, None
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            os.close(read_end)
            _call_process(self.plan, source, call, write_end)
        os.close(write_end)
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
            error = result.get("error")
            self.send(
                CallOutcome(
                    call.call_id,
                    error=_error(error) if isinstance(error, dict) else None,
                    not_async=result.get("awaitable") is not True,
                    open_transaction=result.get("open") is True,
                    stray_files=_stray_files(folders, kept),
                    database=database,
                    wal=wal,
                ),
                db_bytes + wal_bytes,
            )
        return True

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


def main(workdir: str, journal_fd: int) -> int:
    _no_dumps()
    # As the namespace's PID 1, a signal from the submission reaches it only if it has a
    # handler: take Python's SIGINT handler away.
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    stdin = sys.stdin.buffer
    plan = RunPlan.from_json(stdin.readline().decode("utf-8"))
    source = _read_exact(stdin, plan.source_size).decode("utf-8")
    images = {
        image.name: _read_exact(stdin, image.size)
        for scenario in plan.scenarios
        for image in scenario.images
    }
    import course.sessions  # noqa: F401 - loaded once here, shared by every forked call

    _Supervisor(plan, Path(workdir), journal_fd).run(source, images)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
