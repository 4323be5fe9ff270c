"""The watchdog that owns one private PostgreSQL cluster (run as ``python -m``).

Why a process of its own: ``pg_ctl`` detaches the server, so a kernel killed with ``kill -9``
would leave it running. Here the server is this process's child, and this process reads its
stdin, whose other end only the kernel holds: when the kernel dies (or closes it), stdin ends
and the server is stopped (fast shutdown, then SIGQUIT, then SIGKILL); when the server dies,
this process ends, so the kernel sees it stopped. An exclusive ``flock`` on the cluster folder,
held for the server's whole life, refuses a second kernel clearly.

Protocol: argv[1] is a JSON object (bin, folder, socket, socket_temporary, data, user, durable);
one line on stdout: ``ready``, ``busy <pid>`` or ``error <message>``.
"""

from __future__ import annotations

import fcntl
import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["main"]

LOCK_NAME = ".verrou"
_FAST = ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
SOCKET_NAME = ".s.PGSQL.5432"


def _say(line: str) -> None:
    sys.stdout.write(line.replace("\n", " ") + "\n")
    sys.stdout.flush()


def _drop(user: str | None) -> dict:
    """subprocess arguments that run a child as ``user`` (PostgreSQL refuses root)."""
    if user is None:
        return {}
    return {"user": user, "group": pwd.getpwnam(user).pw_gid, "extra_groups": []}


def _own(path: Path, user: str | None) -> None:
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _pdeathsig() -> Callable[[], None] | None:
    """For the server's child, before exec: SIGQUIT (immediate shutdown) if this watchdog dies,
    even by SIGKILL (Linux's PR_SET_PDEATHSIG; none elsewhere). Resolved before the fork."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return lambda: prctl(1, int(signal.SIGQUIT), 0, 0, 0)


def _major(binaries: Path) -> str:
    """PostgreSQL's major version of these binaries (``postgres --version``), "" if unread."""
    done = subprocess.run([str(binaries / "postgres"), "--version"], capture_output=True, text=True)
    version = done.stdout.strip().rsplit(" ", 1)[-1]
    return version.split(".", 1)[0] if done.returncode == 0 and version[:1].isdigit() else ""


def _stop(server: subprocess.Popen) -> None:
    for signum, wait in ((signal.SIGINT, 30.0), (signal.SIGQUIT, 5.0), (signal.SIGKILL, 5.0)):
        if server.poll() is not None:
            return
        server.send_signal(signum)
        try:
            server.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _exit(*_: object) -> None:
    raise SystemExit(0)


def main() -> int:
    config = json.loads(sys.argv[1])
    try:
        return _serve(config)
    finally:
        # a socket folder made for this server alone (its cluster's path was too long): removed
        # however this process ends, but by SIGKILL (then at a later start, its lock being free)
        if config.get("socket_temporary"):
            shutil.rmtree(config["socket"], ignore_errors=True)


def _serve(config: dict) -> int:
    binaries, folder, data = Path(config["bin"]), Path(config["folder"]), Path(config["data"])
    user = config.get("user")
    socket_dir = Path(config.get("socket") or folder)
    lock = open(folder / LOCK_NAME, "a+")  # noqa: SIM115 - held until this process ends
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.seek(0)
        _say(f"busy {lock.read().strip() or '?'}")
        return 1
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getppid()))
    lock.flush()
    _own(folder, user)
    _own(socket_dir, user)
    # trust authentication is safe only if nobody else reaches the socket: the folder is private
    folder.chmod(0o700)
    socket_dir.chmod(0o700)
    log = folder / "journal-postgres.log"
    if not (data / "PG_VERSION").exists():
        data.mkdir(mode=0o700, exist_ok=True)
        _own(data, user)
        done = subprocess.run(
            [str(binaries / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
            # --no-sync: an empty new cluster; the server itself syncs as usual
            + ["--encoding=UTF8", "--locale=C", "--no-sync"],
            capture_output=True,
            text=True,
            **_drop(user),
        )
        if done.returncode != 0:
            _say(f"error initdb > {(done.stderr or done.stdout).strip()[-400:]}")
            return 1
    made_by, runs = (data / "PG_VERSION").read_text().strip(), _major(binaries)
    if runs and made_by.isdigit() and made_by != runs:
        # a cluster made by another PostgreSQL (pgserver's 16, before the lock took 18)
        _say(
            f"error le cluster a été créé par PostgreSQL {made_by} et ce PostgreSQL est le "
            f"{runs}\u00a0: supprimez le dossier {folder} (ou donnez les binaires de PostgreSQL "
            f"{made_by} dans COURS_PG_BIN)"
        )
        return 1
    with open(log, "ab") as out:
        _own(log, user)
        server = subprocess.Popen(
            [str(binaries / "postgres"), "-D", str(data), "-k", str(socket_dir)]
            + ["-c", "listen_addresses=", "-c", "unix_socket_permissions=0700"]
            # PostgreSQL's durability defaults unless asked (a test suite's throwaway cluster)
            + ([] if config.get("durable", True) else _FAST),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            preexec_fn=_pdeathsig(),
            **_drop(user),
        )
    deadline = time.monotonic() + 60
    ready = False
    while time.monotonic() < deadline and server.poll() is None:
        probe = subprocess.run(
            [str(binaries / "pg_isready"), "-q", "-h", str(socket_dir), "-U", "postgres"],
            capture_output=True,
        )
        if probe.returncode == 0:
            ready = True
            break
        time.sleep(0.05)
    if not ready:
        _stop(server)
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        _say(f"error postgres > {' | '.join(tail)}")
        return 1
    # before « ready »: a SIGTERM the kernel sends as soon as it reads it must find them
    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _say("ready")
    closed = threading.Event()

    def _watch_kernel() -> None:
        # until the kernel closes the pipe or dies; os.read, not sys.stdin's buffered reader,
        # whose lock this thread would hold when SIGTERM ends the process (Python then aborts)
        while os.read(0, 4096):
            pass
        closed.set()

    threading.Thread(target=_watch_kernel, daemon=True).start()
    try:
        # until the kernel goes, or the server dies (then this process ends too, so the
        # kernel sees it stopped)
        while not closed.wait(0.2) and server.poll() is None:
            pass
    finally:
        _stop(server)
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except Exception as err:  # noqa: BLE001 - the kernel reads one line, whatever went wrong
        _say(f"error {type(err).__name__} > {err}")
        raise SystemExit(1) from err
