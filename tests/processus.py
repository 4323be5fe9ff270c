"""Process and port helpers shared by the tests that start real servers (lab, hub, formgrader).

Every server a test starts is stopped by its id: these are the pieces that find, watch and stop
those ids, read from /proc so that no extra package is needed.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

__all__ = ["alive", "free_port", "port_open", "stop_pids"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def port_open(port: int) -> bool:
    """True while something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (whoever owns it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # the command name may hold spaces and parentheses: the state follows the last ')'
    return state[state.rfind(")") + 2] != "Z"


def stop_pids(pids: list[int], grace: float = 10.0) -> list[int]:
    """SIGTERM each pid, wait up to ``grace`` seconds, SIGKILL the rest; returns survivors."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    for pid in pids:
        if alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if alive(p)]
