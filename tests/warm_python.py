"""A warm interpreter for the tests' nbgrader and class-tool commands: one Python per xdist worker
that has imported nbgrader once, and forks a new process for each command.

Starting ``nbgrader`` costs about 1 s of CPU before it reads its first argument (importing
nbgrader, nbconvert, SQLAlchemy, jupyter_server); the tests start about 80 of them, on a
machine whose cores the suite already saturates. A command run here is still a process of its
own, started in its folder with its environment, the umask and limits the test process has,
new standard streams (/dev/null, two pipes), its arguments, ``sys.argv``, ``sys.orig_argv``
and ``sys.path`` as the command line gives them, and a ``__main__`` of its own; it runs
nbgrader's own ``main`` (or the class tool's module as ``python -m`` does), then leaves
through the interpreter's own exit (threads joined, ``atexit`` run, streams flushed, modules
freed, tracebacks and statuses as after a real start). Its output is read as
``subprocess.run`` reads it, to the end of its pipes, and a timeout or an exception in the
test kills it.

The warm interpreter is started with the command's environment (an interpreter reads some of
it as it starts: PYTHONPATH, the locale): a command whose environment differs anywhere but in
``PYTEST_CURRENT_TEST`` gets a warm interpreter of its own (two at most per test process, the
oldest stopped). What a fork cannot be is started for real: a script whose first line does not
start this Python, a command whose first sys.path folder holds a module named as one the warm
interpreter imported. ``COURSE_TESTS_COLD=1`` starts every command for real, to compare. The
entry points themselves are started for real in tests/grading/test_entry_points.py and by every
test that uses ``run_tool``; tests/test_warm_python.py compares both ways of starting.

What still differs, by design: the hash seed is the warm interpreter's, the same for all its
commands (a set of strings iterates in the same order from one command to the next, and from
one run to another only if the seed is fixed); what importing nbgrader did is done before the
command's first line (its loggers, warnings filters and ``atexit`` functions exist already,
even for a tool that never imports nbgrader; its objects are frozen out of the collector,
``gc.freeze``, so a reference cycle of them the command drops is never collected); the
process's command line (``ps``, /proc/PID/cmdline) is the warm interpreter's, and its parent
is not the test process but a fork of the warm interpreter, in its folder
(grader/hub/login_guard.py reads a parent's command line, for a hub no forked command starts;
the evasion samples read their parent's folder from a kernel, whose parent is the command, in
its own folder either way).

Run as a script (``python warm_python.py SOCKET``) it is the server: it imports nbgrader,
listens on SOCKET, and stops when the test process that started it closes its standard input
(or on SIGTERM).
"""

from __future__ import annotations

import contextlib
import io
import json
import locale
import os
import re
import resource
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Callable
from pathlib import Path

__all__ = ["COLD_ENV", "run"]

COLD_ENV = "COURSE_TESTS_COLD"  # "1": every command started for real
PRELOAD = ("nbgrader.apps.nbgraderapp",)
VOLATILE = ("PYTEST_CURRENT_TEST",)  # differs from one test to the next, read by no command
CHUNK = 1 << 16  # what one read takes from a socket or a pipe


# --------------------------------------------------------------------------- the server

_BASE_PATH: list[str] = []  # the server's sys.path as it started, without its own folder
_PRELOADED: set[str] = set()  # the top-level modules it has imported, but the built-in ones


def _run_command(request: dict) -> None:
    """In the command's own process: become the command and run it as the interpreter runs its
    main program, in a ``__main__`` of its own (the server's holds this file's names). What
    follows is the interpreter's own exit, as after a real start: threads joined, ``atexit``
    run, streams flushed, modules freed (a file left open is written), an uncaught exception
    shown by ``sys.excepthook`` then status 1, KeyboardInterrupt's SIGINT."""
    import builtins
    import runpy
    from importlib.machinery import BuiltinImporter

    _become(request)
    main = types.ModuleType("__main__")  # as the interpreter makes it
    main.__dict__.update(__annotations__={}, __builtins__=builtins, __loader__=BuiltinImporter)
    sys.modules["__main__"] = main
    script = main.__dict__ if request["kind"] == "script" else None
    try:
        if script is not None:
            sys.argv = [request["target"], *request["args"]]
            sys.orig_argv = [sys.executable, *sys.argv]  # its first line starts sys.executable
            _run_script(request["target"], script)
        else:
            sys.argv = ["-m", *request["args"]]
            sys.orig_argv = [sys.executable, "-m", request["target"], *request["args"]]
            runpy._run_module_as_main(request["target"])  # what `python -m` calls
    except SystemExit:
        raise
    except BaseException:
        sys.excepthook = _from_command(sys.excepthook, script)
        raise
    _forget_file(script)


def _become(request: dict) -> None:
    """The process made what a real start of the command is before its first line runs: its
    folder, environment, inherited settings, standard streams, temporary folder, sys.path."""
    os.chdir(request["cwd"])
    for key in VOLATILE:
        os.environ.pop(key, None)
        if key in request["volatile"]:
            os.environ[key] = request["volatile"][key]
    _reorder_environ(request["order"])
    _inherit(request["inherited"])
    _std_streams()
    tempfile.tempdir = None  # TMPDIR read again, as a new process does
    time.tzset()
    # sys.path as `python SCRIPT` or `python -m MODULE` builds it (no first folder with
    # PYTHONSAFEPATH), then the venv's .pth that adds the course's grader/ folder when started
    # from the repository's root
    first = _first_folder(request)
    sys.path[:] = [first, *_BASE_PATH] if first else _BASE_PATH  # a repeated entry is kept
    grader = os.path.join(os.getcwd(), "grader")
    if (
        os.path.isfile(os.path.join(grader, "nbgrader_config.py"))
        and os.path.isfile(os.path.join(grader, "grading", "__init__.py"))
        and grader not in sys.path
    ):
        sys.path.append(grader)


def _first_folder(request: dict) -> str | None:
    """The folder `python SCRIPT` (the script's) or `python -m` (the current one) puts first in
    sys.path, none with PYTHONSAFEPATH."""
    if sys.flags.safe_path:
        return None
    if request["kind"] == "script":
        return os.path.dirname(os.path.realpath(os.path.join(request["cwd"], request["target"])))
    return os.path.realpath(request["cwd"])


def _shadowed(request: dict) -> bool:
    """Whether the command's first sys.path folder holds a module named as one the server has
    imported: a real start would import that file, the fork has its own already."""
    from importlib.machinery import all_suffixes

    folder = _first_folder(request)
    try:
        names = os.listdir(folder) if folder else []
    except OSError:
        return False
    for name in names:
        stem = next((name.removesuffix(s) for s in all_suffixes() if name.endswith(s)), name)
        if stem in _PRELOADED and (
            stem != name  # a module file, else a package folder
            or any(
                os.path.isfile(os.path.join(folder, name, f"__init__{s}")) for s in all_suffixes()
            )
        ):
            return True
    return False


def _reorder_environ(order: list[str]) -> None:
    """os.environ (and the C environment children inherit) in the command's order: a volatile
    variable set again went last. What the interpreter added as it started (LC_CTYPE when it
    coerces the C locale) stays last, as in a real start."""
    keys = [key for key in order if key in os.environ]
    if list(os.environ)[: len(keys)] != keys:
        saved = dict(os.environ)
        os.environ.clear()
        for key in keys:
            os.environ[key] = saved.pop(key)
        os.environ.update(saved)


def _inherit(inherited: dict) -> None:
    """The umask and resource limits of the test process as it is now (a new process inherits
    them; the server has those of the test process when it started the server)."""
    os.umask(inherited["umask"])
    for name, limits in inherited["limits"].items():
        if resource.getrlimit(getattr(resource, name)) != tuple(limits):
            resource.setrlimit(getattr(resource, name), tuple(limits))


def _std_streams() -> None:
    """sys.stdin, stdout and stderr made anew on the command's descriptors, as the interpreter
    makes them as it starts (the server's were made for its pipes: its stdin could not seek,
    /dev/null can)."""
    buffered = not sys.__stdout__.write_through  # False with -u or PYTHONUNBUFFERED
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        old, write = getattr(sys, name), fd > 0
        binary = open(
            fd,
            "wb" if write else "rb",
            buffering=0 if write and not buffered else -1,
            closefd=False,
        )
        raw = getattr(binary, "raw", binary)
        raw.name = f"<{name}>"
        line_buffering = buffered and (fd == 2 or raw.isatty())
        stream = io.TextIOWrapper(
            binary, old.encoding, old.errors, "\n", line_buffering, not buffered
        )
        stream.mode = "w" if write else "r"
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_script(path: str, main: dict) -> None:
    """What `python SCRIPT` does with its file: compiled with none of this file's ``__future__``
    imports, run in `main` with ``__file__`` and a SourceFileLoader."""
    from importlib.machinery import SourceFileLoader

    main.update(__file__=path, __cached__=None, __loader__=SourceFileLoader("__main__", path))
    with open(path, "rb") as file:
        code = compile(file.read(), path, "exec", dont_inherit=True)
    exec(code, main)


def _forget_file(main: dict | None) -> None:
    """The interpreter takes ``__file__`` back from a script's ``__main__`` once it has run."""
    if main is not None:
        main.pop("__file__", None)
        main.pop("__cached__", None)


def _from_command(hook: Callable, main: dict | None) -> Callable:
    """`hook`, given the traceback from the command's own first frame (a real start has none of
    this file's frames), then ``__file__`` forgotten as after a script that raised."""

    def excepthook(kind: type, value: BaseException, tb: types.TracebackType | None) -> None:
        while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
            tb = tb.tb_next
        hook(kind, value.with_traceback(tb), tb)
        _forget_file(main)

    return excepthook


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    """A request: its length and a newline, sent with the two output descriptors, then its JSON
    (a stream socket hands a long message over in several pieces)."""
    data, fds, _, _ = socket.recv_fds(conn, CHUNK, 2)
    if len(fds) != 2:
        raise ValueError(f"warm_python : {len(fds)} descripteurs reçus au lieu de 2")
    head, _, first = data.partition(b"\n")
    size = int(head)
    pieces, got = [first], len(first)
    while got < size:
        piece = conn.recv(min(CHUNK, size - got))
        if not piece:
            raise ValueError("warm_python : requête tronquée")
        pieces.append(piece)
        got += len(piece)
    return json.loads(b"".join(pieces)), fds


def _serve_one(conn: socket.socket) -> dict:
    """In a first fork: read one request, fork the command, report its pid then its status;
    returns only in the command's own process, with its request. The command is killed, as
    ``subprocess.run`` kills it, when the test process stops waiting (its timeout shuts its end
    of the connection, an exception closes it): killed by its parent, which has not reaped it
    yet, so its pid cannot be another process's."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the command's, as a new process has it
    try:
        request, fds = _receive(conn)
        if _shadowed(request):
            conn.sendall(b"cold\n")
            os._exit(0)
        pid = os.fork()
    except BaseException:  # no command started: the test process starts it for real
        os._exit(0)
    if pid == 0:
        try:
            conn.close()
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        except BaseException:
            os._exit(255)
        return request
    try:
        _report(conn, pid, fds)
    finally:
        os._exit(0)


def _report(conn: socket.socket, pid: int, fds: list[int]) -> None:
    """The command's pid, then its status once it has ended (killed if the test stops waiting).
    A Ctrl-C reaches the whole process group: this fork outlives it, and kills the command if
    the test process stops waiting (the command keeps its own SIGINT handler)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(f"pid {pid}\n".encode())
    except OSError:  # the test process is gone
        os.kill(pid, signal.SIGKILL)
    else:
        with contextlib.suppress(OSError):  # no pidfd (Linux < 5.3): it is only waited for
            ended = os.pidfd_open(pid)
            if ended not in select.select([ended, conn], [], [])[0]:
                os.kill(pid, signal.SIGKILL)
    _, wait_status = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        conn.sendall(f"status {os.waitstatus_to_exitcode(wait_status)}\n".encode())


def _stop(signum: int, frame: object) -> None:
    """SIGTERM (a run stopped, a process group killed) stops the server as the end of its
    standard input does: its socket and folder removed, not left in /tmp."""
    raise SystemExit(128 + signum)


def serve(path: str) -> dict | None:
    """Import nbgrader, then fork a process per connection until standard input closes; returns
    a request in that command's own process only."""
    import gc
    import importlib

    if not sys.flags.safe_path:  # this file's folder (tests/), which a command does not see
        del sys.path[0]
    _BASE_PATH[:] = sys.path
    for name in PRELOAD:
        importlib.import_module(name)
    _PRELOADED.update(name.partition(".")[0] for name in sys.modules)
    _PRELOADED.difference_update(sys.builtin_module_names)  # found before sys.path
    # out of every collection in a command: one would write to every page they are on, and so
    # copy them all (measured: 0.3-0.45 s of CPU per `nbgrader --version`, 0.07-0.1 s frozen)
    gc.freeze()
    if threading.active_count() != 1:  # a fork is only safe from a single thread
        raise SystemExit("warm_python : un fil d'exécution démarré à l'import")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the first forks are reaped by the kernel
    signal.signal(signal.SIGTERM, _stop)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    pid = os.getpid()
    try:
        while True:
            readable, _, _ = select.select([server, sys.stdin], [], [])
            if sys.stdin in readable:  # the test process is gone
                return None
            conn, _ = server.accept()
            if os.fork() == 0:
                server.close()
                return _serve_one(conn)  # returns in the command's process only
            conn.close()
    finally:
        if os.getpid() == pid:  # the server itself, not a command
            server.close()
            os.unlink(path)
            os.rmdir(os.path.dirname(path))  # its private folder (mkdtemp: mode 0700)


# --------------------------------------------------------------------------- the client

_lock = threading.Lock()
_servers: dict[frozenset, dict] = {}  # this process's warm interpreters, by environment
MAX_SERVERS = 2  # a test that changes the environment gets its own, the oldest one stops


def _comparable(env: dict[str, str]) -> frozenset:
    return frozenset((k, v) for k, v in env.items() if k not in VOLATILE)


def _started(env: dict[str, str]) -> dict | None:
    """The warm interpreter started with `env` (started now if there is none), or None."""
    key = _comparable(env)
    with _lock:
        server = _servers.get(key)
        if server is not None and server["proc"].poll() is None:
            return server
        if len(_servers) >= MAX_SERVERS:
            oldest = _servers.pop(next(iter(_servers)))
            oldest["proc"].stdin.close()  # it stops when its standard input closes
            oldest["proc"].wait()
        # in /tmp: a socket's path must stay short, and a test's TMPDIR goes away with it
        folder = Path(tempfile.mkdtemp(prefix="cours-tiede-", dir="/tmp"))
        path = str(folder / "s")
        proc = subprocess.Popen(
            [sys.executable, __file__, path],  # no -P: sys.flags as a real start's
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        if proc.stdout is None or proc.stdout.readline() != "ready\n":
            proc.kill()
            proc.wait()
            shutil.rmtree(folder, ignore_errors=True)
            return None
        _servers[key] = {"proc": proc, "socket": path}
        return _servers[key]


def _cold(argv: list[str], cwd: Path, env: dict[str, str], timeout: float):
    """The command started for real."""
    return subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def run(
    kind: str, target: str, args: list[str], cwd: Path, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    """``[target, *args]`` (kind "script") or ``python -m target args`` (kind "module"), in
    `cwd` with `env`, standard input /dev/null, output captured as text: forked from the warm
    interpreter started with that environment, or started for real with COURSE_TESTS_COLD=1."""
    argv = [target, *args] if kind == "script" else [sys.executable, "-m", target, *args]
    warm = os.environ.get(COLD_ENV) != "1" and _started_by_this_python(kind, target, cwd)
    server = _started(env) if warm else None
    if server is None:
        return _cold(argv, cwd, env, timeout)
    # the server has the environment already: only what differs from one test to the next
    volatile = {key: env[key] for key in VOLATILE if key in env}
    request = {"kind": kind, "target": target, "args": list(args), "cwd": str(cwd)}
    extra = {"volatile": volatile, "order": list(env), "inherited": _inherited()}
    payload = json.dumps({**request, **extra}).encode()
    proc = _forked(server["socket"], payload, argv, timeout)
    # None: the server is gone (the next call starts another) or did not take the request
    return _cold(argv, cwd, env, timeout) if proc is None else proc


def _started_by_this_python(kind: str, target: str, cwd: Path) -> bool:
    """`python -m`, or a script given by its path whose first line starts this Python with no
    option (not a shell script, not another interpreter): what a fork of this Python can be."""
    if kind == "module":
        return True
    if "/" not in target:  # a real start looks it up in PATH
        return False
    try:
        with open(os.path.join(cwd, target), "rb") as file:
            line = file.readline()
    except OSError:
        return False
    return line.rstrip() == b"#!" + os.fsencode(sys.executable)


def _inherited() -> dict:
    """What a process started now would inherit from this one besides its environment and
    folder, and a test may have changed since its warm interpreter started."""
    umask = re.search(r"^Umask:\s*([0-7]+)$", Path("/proc/self/status").read_text(), re.M)
    return {
        "umask": int(umask.group(1), 8) if umask else os.umask(os.umask(0)),  # Linux < 4.7
        "limits": {name: resource.getrlimit(getattr(resource, name)) for name in _LIMITS},
    }


_LIMITS = tuple(name for name in dir(resource) if name.startswith("RLIMIT_"))


def _forked(
    path: str, payload: bytes, argv: list[str], timeout: float
) -> subprocess.CompletedProcess | None:
    """The command forked by the server listening on `path`, or None if it started none. Its
    output comes through pipes, read to their end as ``subprocess.run`` reads them: what a
    process it leaves behind writes is there, and a process that keeps them open makes it
    time out."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            try:
                conn.connect(path)
                socket.send_fds(conn, [b"%d\n" % len(payload)], [out_w, err_w])
                conn.sendall(payload)
            except OSError:
                return None
            finally:
                os.close(out_w)
                os.close(err_w)
            return _collect(conn, out_r, err_r, argv, timeout)
    finally:
        os.close(out_r)
        os.close(err_r)


def _collect(
    conn: socket.socket, out_r: int, err_r: int, argv: list[str], timeout: float
) -> subprocess.CompletedProcess | None:
    """Both pipes and the server's replies read to their end (``pid N``, then ``status S``);
    past `timeout`, the command killed and TimeoutExpired raised with the output read so far
    (bytes, or None if there is none, as ``subprocess.run`` gives them)."""
    deadline = time.monotonic() + timeout
    read: dict[object, list[bytes]] = {out_r: [], err_r: [], conn: []}
    reading: list = [out_r, err_r, conn]
    while reading:
        left = deadline - time.monotonic()
        ready = select.select(reading, [], [], left)[0] if left > 0 else []
        if not ready:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_WR)  # the server kills the command if it still runs
                while conn.recv(CHUNK):  # its status once it is gone
                    pass
            out, err = (b"".join(read[fd]) if read[fd] else None for fd in (out_r, err_r))
            raise subprocess.TimeoutExpired(argv, timeout, out, err)
        for source in ready:
            data = _recv(conn) if source is conn else os.read(source, CHUNK)
            if data:
                read[source].append(data)
            else:
                reading.remove(source)
    replies = b"".join(read[conn]).decode().splitlines()
    if not replies or not replies[0].startswith("pid "):
        return None
    if not replies[-1].startswith("status "):
        raise RuntimeError(f"warm_python : pas de statut pour {argv} ({replies!r})")
    status = int(replies[-1].split()[1])
    return subprocess.CompletedProcess(argv, status, _text(read[out_r]), _text(read[err_r]))


def _recv(conn: socket.socket) -> bytes:
    """What the server says next; a connection it reset says no more (a server that stops with
    connections not yet accepted, or that closed one without reading the request, resets it)."""
    try:
        return conn.recv(CHUNK)
    except ConnectionResetError:
        return b""


def _text(pieces: list[bytes]) -> str:
    """What ``text=True`` gives: the locale's encoding, universal newlines."""
    data = b"".join(pieces).decode(locale.getpreferredencoding(False))
    return data.replace("\r\n", "\n").replace("\r", "\n")


if __name__ == "__main__":
    _request = serve(sys.argv[1])
    if _request is not None:  # in a command's own process
        _run_command(_request)
