"""A command forked from the warm interpreter (tests/warm_python.py) is the command started for
real: same status, output (read to the end of its pipes), arguments, sys.path, sys.flags,
``__main__``, standard streams, folder, temporary folder, umask and limits, open files, and
the interpreter's own exit (threads joined, ``atexit`` run, files flushed, tracebacks); a
timeout or a test that stops waiting kills it; what a fork cannot be is started for real; each
environment has its own warm interpreter."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import warm_python
from grading_course import BIN, copy_course, tool_env

PROBE = """\
#!{python}
import atexit, json, os, sys, tempfile, threading, time
atexit.register(lambda: print("atexit"))
threading.Thread(target=lambda: time.sleep(0.2) or print("fil rejoint")).start()
print(json.dumps({{
    "argv": sys.argv, "path": sys.path, "cwd": os.getcwd(), "tmp": tempfile.gettempdir(),
    "name": __name__, "stdin": sys.stdin.read(), "env": os.environ.get("SONDE"),
    "fds": sorted(os.listdir("/proc/self/fd")), "encoding": sys.stdout.encoding,
    "parent": os.getppid(),
}}))
print("sur stderr", file=sys.stderr)
sys.stdout.flush()
if sys.argv[1:] == ["signal"]:
    os.kill(os.getpid(), 15)
if sys.argv[1:] == ["dort"]:
    open(sys.argv[0] + ".pid", "w").write(str(os.getpid()))
    time.sleep(3600)
sys.exit(int(sys.argv[1]) if sys.argv[1:] and sys.argv[1].isdigit() else "fin : texte")
"""


@pytest.fixture
def probe_script(tmp_path: Path) -> Path:
    """An executable script that prints what a started process sees, in a folder of its own."""
    folder = tmp_path / "sonde"
    folder.mkdir()
    script = folder / "sonde.py"
    script.write_text(PROBE.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    return script


@pytest.fixture
def course_root(tmp_path: Path) -> Path:
    """A folder holding a course's grader/ (the venv's .pth adds it to sys.path there)."""
    copy_course(tmp_path / "racine")
    return tmp_path / "racine"


def both(kind: str, target: str, args: list[str], cwd: Path, env: dict[str, str] | None = None):
    """The command forked from the warm interpreter, then started for real."""
    env = env or tool_env()
    warm = warm_python.run(kind, target, args, cwd, env, 120)
    os.environ[warm_python.COLD_ENV] = "1"
    try:
        cold = warm_python.run(kind, target, args, cwd, env, 120)
    finally:
        del os.environ[warm_python.COLD_ENV]
    return warm, cold


def outcome(proc: subprocess.CompletedProcess) -> tuple:
    return proc.returncode, proc.stdout, proc.stderr


def seen(proc: subprocess.CompletedProcess) -> dict:
    return json.loads(proc.stdout.splitlines()[0])


def same(warm, cold) -> None:
    """Status and output identical, but for the parent process (the fork's is not this one)."""
    assert seen(warm)["parent"] != os.getpid(), "la commande n'a pas été forkée"
    assert seen(cold)["parent"] == os.getpid()
    strip = [{**seen(p), "parent": None} for p in (warm, cold)]
    assert strip[0] == strip[1]
    assert (warm.returncode, warm.stdout.splitlines()[1:], warm.stderr) == (
        cold.returncode,
        cold.stdout.splitlines()[1:],
        cold.stderr,
    )


@pytest.mark.parametrize("status", ["0", "3", "texte", "signal"])
def test_a_script_sees_and_ends_as_if_started(probe_script, course_root, status):
    for cwd in (probe_script.parent, course_root, course_root / "grader"):
        warm, cold = both("script", str(probe_script), [status], cwd)
        same(warm, cold)
    expected = {"0": 0, "3": 3, "texte": 1, "signal": -signal.SIGTERM}[status]
    assert warm.returncode == expected
    if status != "signal":
        assert warm.stdout.splitlines()[1:] == ["fil rejoint", "atexit"]
    assert warm.stderr.startswith("sur stderr\n")


def test_a_module_sees_what_python_m_gives(probe_script, course_root):
    """``python -m`` in grader/ (its folder first in sys.path) and in the folder above it (found
    through the venv's .pth that adds the course's grader/)."""
    module = course_root / "grader" / "sonde_mod.py"
    module.write_text(probe_script.read_text(encoding="utf-8"), encoding="utf-8")
    for cwd in (course_root / "grader", course_root):
        warm, cold = both("module", "sonde_mod", ["4"], cwd)
        same(warm, cold)
        assert warm.returncode == 4
        assert seen(warm)["path"][0] == str(cwd)
        assert seen(warm)["argv"] == [str(module), "4"]


@pytest.mark.slow  # nbgrader started for real: not in make test-fast
def test_stock_nbgrader_answers_the_same(course_root):
    grader = course_root / "grader"
    nbgrader = str(BIN / "nbgrader")
    assert warm_python._started_by_this_python("script", nbgrader, grader), "jamais forké"
    for args in (["--version"], ["inconnue"], ["db", "student", "list"]):
        warm, cold = both("script", nbgrader, args, grader)
        assert outcome(warm) == outcome(cold), args
    assert (grader / "gradebook.db").is_file()


def test_each_environment_has_its_own_warm_interpreter(probe_script):
    """A command sees its own environment; a third one stops the oldest interpreter."""
    for value in ("un", "deux", "trois", "un"):
        env = {**tool_env(), "SONDE": value}
        proc = warm_python.run("script", str(probe_script), ["0"], probe_script.parent, env, 60)
        assert seen(proc)["env"] == value and seen(proc)["parent"] != os.getpid()
    assert len(warm_python._servers) <= warm_python.MAX_SERVERS


def gone(pid: int) -> bool:
    """True once process `pid` has ended and been reaped (waits up to 30 s)."""
    for _ in range(300):
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.1)
    return False


def test_a_timeout_kills_the_forked_command(probe_script):
    """Killed, and the output read so far given as subprocess.run gives it (bytes)."""
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        warm_python.run("script", str(probe_script), ["dort"], probe_script.parent, tool_env(), 10)
    assert gone(int(Path(f"{probe_script}.pid").read_text())), "la commande a survécu à son délai"
    assert json.loads(raised.value.stdout.splitlines()[0])["argv"][1:] == ["dort"]
    assert raised.value.stderr == b"sur stderr\n"


class Stopped(Exception):
    """What pytest-timeout raises in a test that outlives its time (from a signal handler)."""


def test_a_test_that_stops_waiting_kills_its_command(probe_script, monkeypatch):
    """As subprocess.run does when an exception interrupts it, whichever way it started."""
    pidfile = Path(f"{probe_script}.pid")

    def stop_once_started() -> None:
        for _ in range(600):
            if pidfile.exists():
                break
            time.sleep(0.1)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGUSR1)

    def stop(signum, frame):
        raise Stopped

    env = tool_env()
    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        for cold in ("", "1"):
            monkeypatch.setenv(warm_python.COLD_ENV, cold)
            pidfile.unlink(missing_ok=True)
            threading.Thread(target=stop_once_started).start()
            with pytest.raises(Stopped):
                warm_python.run("script", str(probe_script), ["dort"], probe_script.parent, env, 60)
            assert gone(int(pidfile.read_text())), f"la commande a survécu ({cold=})"
    finally:
        signal.signal(signal.SIGUSR1, previous)


LATE = """\
#!{python}
import os, stat, sys, time
print("tubes", all(stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (1, 2)), flush=True)
if os.fork() == 0:
    time.sleep(float(sys.argv[1]))
    print("écrit après la fin de la commande", flush=True)
    os._exit(0)
"""


def test_output_is_read_to_the_end_of_its_pipes(tmp_path, monkeypatch):
    """What a process the command leaves behind writes is part of its output, and one that
    keeps its pipes open past the timeout makes it time out, as subprocess.run reads them."""
    script = tmp_path / "tard.py"
    script.write_text(LATE.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    warm, cold = both("script", str(script), ["1"], tmp_path)
    assert outcome(warm) == outcome(cold)
    assert warm.stdout == "tubes True\nécrit après la fin de la commande\n"
    env = tool_env()
    for cold in ("", "1"):
        monkeypatch.setenv(warm_python.COLD_ENV, cold)
        with pytest.raises(subprocess.TimeoutExpired) as raised:  # its first line long written
            warm_python.run("script", str(script), ["60"], tmp_path, env, 8)
        assert raised.value.stdout == b"tubes True\n", cold


def test_a_long_request_is_read_whole(probe_script):
    """A request longer than a socket hands over at once (here its 200 kB of arguments)."""
    args = ["0", *["x" * 1000] * 200]
    warm, cold = both("script", str(probe_script), args, probe_script.parent)
    same(warm, cold)
    assert seen(warm)["argv"][1:] == args


def test_a_request_the_server_does_not_take_is_started_for_real(probe_script, monkeypatch):
    """A server gone before it started the command (another thread stopped it as it was
    chosen): the command is started for real, once."""
    folder = Path(tempfile.mkdtemp(prefix="cours-tiede-", dir="/tmp"))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(folder / "s"))
    listener.listen(1)
    threading.Thread(target=lambda: listener.accept()[0].close(), daemon=True).start()
    monkeypatch.setattr(warm_python, "_started", lambda env: {"socket": str(folder / "s")})
    script = str(probe_script)
    try:
        proc = warm_python.run("script", script, ["3"], probe_script.parent, tool_env(), 60)
    finally:
        listener.close()
        (folder / "s").unlink()
        folder.rmdir()
    assert proc.returncode == 3 and seen(proc)["parent"] == os.getpid()


ENDING = """\
#!{python}
import atexit, sys
atexit.register(lambda: print("atexit :", getattr(sys.modules["__main__"], "__file__", None)))
print(sorted(globals()), type(__builtins__).__name__, type(__loader__).__name__, repr(__package__))
print("json" in globals(), "annotations" in globals())
kept = open(sys.argv[1], "w", encoding="utf-8")  # never closed
kept.write("écrit à la sortie")


def keeps_globals_alive(x: int):  # a cycle: only the interpreter's exit frees the file above
    pass


print(keeps_globals_alive.__annotations__)  # no __future__ import of warm_python's


if sys.argv[2] == "erreur":
    raise ValueError("raté")
if sys.argv[2] == "interruption":
    raise KeyboardInterrupt
if sys.argv[2] == "crochet":
    sys.excepthook = lambda kind, value, tb: print("crochet :", kind.__name__, file=sys.stderr)
    raise ValueError("raté")
"""


@pytest.mark.parametrize("how", ["normal", "erreur", "interruption", "crochet"])
def test_a_command_runs_and_ends_as_the_interpreters_main_program(tmp_path, monkeypatch, how):
    """In a ``__main__`` of its own (none of the warm interpreter's names), then through the
    interpreter's own exit: a file left open written, a traceback from the command's first
    frame, the command's excepthook, SIGINT after KeyboardInterrupt."""
    (tmp_path / "fin.py").write_text(ENDING.format(python=sys.executable), encoding="utf-8")
    (tmp_path / "fin.py").chmod(0o755)
    kept = tmp_path / "gardé.txt"
    env = tool_env()
    for kind, target in (("script", str(tmp_path / "fin.py")), ("module", "fin")):
        outcomes = []
        for cold in ("", "1"):
            monkeypatch.setenv(warm_python.COLD_ENV, cold)
            proc = warm_python.run(kind, target, [str(kept), how], tmp_path, env, 60)
            outcomes.append(outcome(proc))
            assert kept.read_text(encoding="utf-8") == "écrit à la sortie", (kind, cold)
            kept.unlink()
        assert outcomes[0] == outcomes[1], kind
        status, out, err = outcomes[0]
        assert status == {"normal": 0, "erreur": 1, "interruption": -signal.SIGINT}.get(how, 1)
        assert out.splitlines()[1] == "False False"
        first = str(tmp_path / "fin.py") if kind == "script" else "<frozen runpy>"
        if how in ("erreur", "interruption"):
            assert err.startswith(f'Traceback (most recent call last):\n  File "{first}"'), err


STATE = """\
#!{python}
import json, os, resource, sys
streams = (sys.stdin, sys.stdout, sys.stderr)
print(json.dumps({{
    "flags": repr(sys.flags), "orig_argv": sys.orig_argv, "path": sys.path[0],
    "streams": [
        (s.name, s.mode, s.seekable(), s.line_buffering, s.write_through, s.encoding, s.errors)
        for s in streams
    ],
    "initial": [s is i for s, i in zip(streams, (sys.__stdin__, sys.__stdout__, sys.__stderr__))],
    "umask": os.umask(0), "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
}}))
"""


def test_the_interpreter_and_process_state_a_start_gives(tmp_path):
    """sys.flags (the server runs without -P), sys.orig_argv, standard streams made for the
    command's descriptors (its /dev/null can seek), and the umask and limits the test process
    has now (changed here after its warm interpreter started)."""
    script = tmp_path / "etat.py"
    script.write_text(STATE.format(python=sys.executable), encoding="utf-8")
    script.chmod(0o755)
    warm_python.run("script", str(script), [], tmp_path, tool_env(), 60)
    umask = os.umask(0o027)
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits[0] - 1, limits[1]))
    try:
        for kind, target in (("script", str(script)), ("module", "etat")):
            warm, cold = both(kind, target, ["a"], tmp_path)
            assert outcome(warm) == outcome(cold), kind
            assert seen(warm)["umask"] == 0o027
    finally:
        os.umask(umask)
        resource.setrlimit(resource.RLIMIT_NOFILE, limits)


def test_what_a_fork_cannot_be_is_started_for_real(tmp_path):
    """A module of the command's first sys.path folder named as one the warm interpreter has
    imported (a real start imports that file), a script whose first line starts another
    program."""
    (tmp_path / "traitlets.py").write_text("print('traitlets du dossier')\n", encoding="utf-8")
    (tmp_path / "ombre.py").write_text("import traitlets\nprint(traitlets.__file__)\n")
    warm, cold = both("module", "ombre", [], tmp_path)
    assert outcome(warm) == outcome(cold)
    assert warm.stdout == f"traitlets du dossier\n{tmp_path.resolve() / 'traitlets.py'}\n"
    shell = tmp_path / "coquille"
    shell.write_text('#!/bin/sh\necho "$0" "$@"\n', encoding="utf-8")
    shell.chmod(0o755)
    warm, cold = both("script", str(shell), ["a"], tmp_path)
    assert outcome(warm) == outcome(cold) == (0, f"{shell} a\n", "")


def test_a_warm_interpreter_stopped_by_sigterm_leaves_nothing_in_tmp(probe_script):
    """SIGTERM (a run stopped, its process group killed) removes its socket and folder; the
    next command gets another warm interpreter."""
    env = {**tool_env(), "SONDE": "sigterm"}
    warm_python.run("script", str(probe_script), ["0"], probe_script.parent, env, 60)
    server = warm_python._servers[warm_python._comparable(env)]
    server["proc"].terminate()
    server["proc"].wait(60)
    assert not Path(server["socket"]).parent.exists()
    proc = warm_python.run("script", str(probe_script), ["0"], probe_script.parent, env, 60)
    assert seen(proc)["env"] == "sigterm" and seen(proc)["parent"] != os.getpid()


def test_a_ctrl_c_leaves_the_command_to_its_waiting_parent(probe_script):
    """Ctrl-C reaches the whole process group, the fork that waits for the command too: it
    outlives it, so the command still ends with its test (here killed by its timeout)."""
    pidfile = Path(f"{probe_script}.pid")
    parents: list[int] = []

    def interrupt_its_parent() -> None:
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text():
                break
            time.sleep(0.1)
        stat = Path(f"/proc/{pidfile.read_text()}/stat").read_text()
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        parents.append(parent)
        if parent != os.getpid():  # started for real, its parent would be this test process
            os.kill(parent, signal.SIGINT)

    interrupter = threading.Thread(target=interrupt_its_parent)
    interrupter.start()
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run("script", str(probe_script), ["dort"], probe_script.parent, tool_env(), 8)
    interrupter.join()
    assert parents and parents[0] != os.getpid(), "la commande n'a pas été forkée"
    assert gone(int(pidfile.read_text())), "la commande a survécu à son délai"


def test_the_environment_keeps_the_order_it_is_given(tmp_path):
    """PYTEST_CURRENT_TEST, set again in the fork, is where the command's environment has it."""
    env = tool_env()
    env = {"PYTEST_CURRENT_TEST": env.pop("PYTEST_CURRENT_TEST", "t (call)"), **env}
    (tmp_path / "ordre.py").write_text("import os\nprint(list(os.environ))\n", encoding="utf-8")
    warm, cold = both("module", "ordre", [], tmp_path, env)
    assert outcome(warm) == outcome(cold)
    assert warm.stdout.startswith("['PYTEST_CURRENT_TEST', ")
