"""LocalProcessSpawner that checks the port it routes to is held by the user's own server.

Why: on one machine every student can open a TCP port on 127.0.0.1. A student who binds a
classmate's server port first (each user has a fixed port, see jupyterhub_config.py) would
receive that classmate's requests through the hub's proxy, their cookies and tokens included:
JupyterHub only checks that *something* answers HTTP there. This spawner reads the kernel's
table of listening sockets (/proc/net/tcp, tcp6: the owner uid of each socket) once the server
is started, and again at each poll: a listener of another uid on the port stops the spawn (or
marks the server dead, so the hub drops its route) with a message naming the port and the uid.
"""

from __future__ import annotations

import asyncio
import pwd
import time
from pathlib import Path

from capped_spawner import CgroupCapsMixin
from jupyterhub.spawner import LocalProcessSpawner

__all__ = ["VerifiedLocalProcessSpawner", "listener_uids"]

_LISTEN = "0A"


def listener_uids(port: int, *, any6: bool = True) -> set[int]:
    """Owner uids of the TCP sockets listening on `port` (any local address, IPv4 or IPv6).

    `any6=False` leaves out IPv6 wildcard sockets: once the server holds 127.0.0.1, such a
    socket can only be IPv6-only and never receives the proxy's IPv4 connections.
    """
    uids: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) <= 7 or fields[3] != _LISTEN:
                continue
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) != port or (not any6 and address == "0" * 32):
                continue
            uids.add(int(fields[7]))
    return uids


class VerifiedLocalProcessSpawner(CgroupCapsMixin, LocalProcessSpawner):
    """Each server runs as its Unix user, in its capped cgroup; routed only to a port it holds."""

    def _uid(self) -> int:
        return pwd.getpwnam(self.user.name).pw_uid

    def _intruders(self) -> set[int]:
        return listener_uids(self.port, any6=False) - {self._uid()}

    async def start(self):
        ip, port = await super().start()
        deadline = time.monotonic() + self.http_timeout
        while time.monotonic() < deadline:
            intruders = listener_uids(port) - {self._uid()}
            if intruders:
                await self.stop(now=True)
                raise RuntimeError(
                    f"le port {port} de {self.user.name} est déjà pris par l'uid "
                    f"{', '.join(map(str, sorted(intruders)))}\u00a0: serveur non démarré "
                    "(un autre utilisateur écoute à sa place)"
                )
            if self._uid() in listener_uids(port) or await super().poll() is not None:
                break  # listening as the user, or dead (the hub reports that itself)
            await asyncio.sleep(0.2)
        return ip, port

    async def poll(self):
        status = await super().poll()
        if status is None and self.port and self._intruders():
            self.log.error("port %s of %s held by another uid: dropped", self.port, self.user.name)
            return 1
        return status
