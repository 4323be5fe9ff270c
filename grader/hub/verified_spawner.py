"""Spawners that check the port they route to is held by the user's own server.

Why: on one machine every student can open a TCP port on 127.0.0.1. A student who binds a
classmate's server port first (each user has a fixed port, see jupyterhub_config.py; on TLJH,
SystemdSpawner's random port is free between its pick and the server's start) would receive
that classmate's requests through the hub's proxy, their cookies and tokens included: JupyterHub
only checks that *something* answers HTTP there. `PortOwnerCheckMixin` reads the kernel's table
of listening sockets (/proc/net/tcp, tcp6: the owner uid of each socket) once the server is
started, and again at each poll: a listener of another uid on the port stops the spawn (or marks
the server dead, so the hub drops its route) with a message naming the port and the uid. It
wraps any spawner that runs servers as Unix users: LocalProcessSpawner (one machine) and TLJH's
SystemdSpawner (`install`, used by jupyterhub_config.py when it keeps another spawner).
The hub's one fixed port, the shared formgrader's (a managed service, 127.0.0.1:9999), has the
same check on the proxy's side (`guard_service_port`): its route exists only while the grading
account alone listens there, with any proxy (CHP on one machine, Traefik on TLJH).
"""

from __future__ import annotations

import asyncio
import pwd
import time
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

from capped_spawner import CgroupCapsMixin
from jupyterhub.spawner import LocalProcessSpawner, Spawner
from roster import unix_name
from traitlets import Unicode
from traitlets.config import LoggingConfigurable
from traitlets.utils.importstring import import_item

__all__ = [
    "PortOwnerCheckMixin",
    "VerifiedLocalProcessSpawner",
    "guard_service_port",
    "install",
    "listener_uids",
    "with_port_check",
]

_LISTEN = "0A"
# A reading of the socket tables costs the kernel a walk of its whole TCP hash table (measured:
# 8 ms of system time per reading with 140 sockets, on a 24 GiB machine). Each starting server
# used to read them twice every 0.2 s: 30 students starting at once kept the hub's one thread
# busy reading them. Now the class's starting servers share one reading, at most this old.
SHARED_READING_AGE = 0.5
_reading: list[tuple[float, list[tuple[int, str, int]]]] = []  # [(when, listeners)]


def _listeners(max_age: float) -> list[tuple[int, str, int]]:
    """(port, local address, owner uid) of every listening TCP socket, IPv4 and IPv6: a reading
    of the kernel's tables at most `max_age` seconds old (0: a new reading)."""
    now = time.monotonic()
    if _reading and now - _reading[0][0] <= max_age:
        return _reading[0][1]
    found = []
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
            found.append((int(hex_port, 16), address, int(fields[7])))
    _reading[:] = [(now, found)]
    return found


def listener_uids(port: int, *, any6: bool = True, max_age: float = 0.0) -> set[int]:
    """Owner uids of the TCP sockets listening on `port` (any local address, IPv4 or IPv6).

    `any6=False` leaves out IPv6 wildcard sockets: once the server holds 127.0.0.1, such a
    socket can only be IPv6-only and never receives the proxy's IPv4 connections. `max_age`:
    a reading of the tables that old will do (0: read them now).
    """
    return {
        uid
        for held, address, uid in _listeners(max_age)
        if held == port and (any6 or address != "0" * 32)
    }


class PortOwnerCheckMixin(LoggingConfigurable):
    """Put before the spawner in the bases: route only to a port the user's own uid holds."""

    unix_prefix = Unicode(
        "",
        config=True,
        help="Unix account = prefix + hub name (TLJH: 'jupyter-'), unless the spawner has a "
        "SystemdSpawner username_template, which wins.",
    )

    def _unix_name(self) -> str:
        template = getattr(self, "username_template", "")  # SystemdSpawner; TLJH sets it at start
        if template:
            return template.replace("{USERNAME}", self.user.name).replace(
                "{USERID}", str(self.user.id)
            )
        return unix_name(self.user.name, self.unix_prefix)

    def _uid(self) -> int:
        return pwd.getpwnam(self._unix_name()).pw_uid

    def _intruders(self) -> set[int]:
        return listener_uids(self.port, any6=False, max_age=SHARED_READING_AGE) - {self._uid()}

    async def start(self):
        ip, port = await super().start()
        self.port = port
        uid = self._uid()
        deadline = time.monotonic() + self.http_timeout
        while time.monotonic() < deadline:
            # waiting: a reading shared with the class's other starting servers
            waiting = listener_uids(port, max_age=SHARED_READING_AGE)
            if waiting or await super().poll() is not None:
                # something listens, or the server died: decided on a reading of now
                holders = listener_uids(port)
                intruders = holders - {uid}
                if intruders:
                    await self.stop(now=True)
                    raise RuntimeError(
                        f"le port {port} de {self.user.name} est déjà pris par l'uid "
                        f"{', '.join(map(str, sorted(intruders)))}\u00a0: serveur non démarré "
                        "(un autre utilisateur écoute à sa place)"
                    )
                if uid in holders or await super().poll() is not None:
                    break  # listening as the user, or dead (the hub reports that itself)
            await asyncio.sleep(0.2)
        return ip, port

    async def poll(self):
        status = await super().poll()
        if status is None and self.port and self._intruders():
            self.log.error("port %s of %s held by another uid: dropped", self.port, self.user.name)
            return 1
        return status


class VerifiedLocalProcessSpawner(PortOwnerCheckMixin, CgroupCapsMixin, LocalProcessSpawner):
    """Each server runs as its Unix user, in its capped cgroup; routed only to a port it holds."""


def _spawner_class(chosen: type | str) -> type:
    if not isinstance(chosen, str):
        return chosen
    named = entry_points(group="jupyterhub.spawners", name=chosen)
    return next(iter(named)).load() if named else import_item(chosen)


def with_port_check(chosen: type | str) -> type:
    """The spawner class `chosen` (a class, an import string or an entry point name), checked."""
    base = _spawner_class(chosen)
    if not (isinstance(base, type) and issubclass(base, Spawner)):
        raise TypeError(f"{chosen!r} n'est pas une classe de spawner JupyterHub")
    if issubclass(base, PortOwnerCheckMixin):
        return base
    return type(f"Verified{base.__name__}", (PortOwnerCheckMixin, base), {})


def install(app) -> None:
    """Give `app` (the JupyterHub) its configured spawner class, checked, before users load."""
    load_users = app.init_users

    async def init_users_with_port_check() -> None:
        app.spawner_class = with_port_check(app.spawner_class)
        await load_users()

    app.init_users = init_users_with_port_check


# how often the hub looks at the formgrader's port (a reading shared with the spawners' checks)
SERVICE_CHECK_EVERY = 1.0


def guard_service_port(app, name: str, port: int, account: str) -> None:
    """Route the hub's service `name` only while `account`'s uid alone listens on `port`.

    Why: JupyterHub routes a service's prefix to its URL from the start, listening or not, and
    the proxy keeps the route across hub restarts; a student who binds the port while the
    service is down (restarting, or not started yet) would receive the instructors' requests,
    their cookies included. Here the proxy's `add_service` adds the route only when the port is
    the account's (JupyterHub's own route checks go through it too), and every
    SERVICE_CHECK_EVERY seconds the route is removed as soon as another uid listens there, or
    nobody does (the port can then be taken), and put back when the account holds it again.
    """
    from tornado.ioloop import PeriodicCallback

    uid = pwd.getpwnam(account).pw_uid
    init_proxy = app.init_proxy
    said: list[str] = []
    routed: list[bool] = []  # [] unknown (a proxy kept from the last run may hold a route)

    def verdict() -> str:
        """'' when only the account listens on the port, else why not (French, for the log)."""
        holders = listener_uids(port, any6=False, max_age=SHARED_READING_AGE)
        others = holders - {uid}
        if others:
            return (
                f"formgrader partagé\u00a0: le port {port} est tenu par l'uid "
                f"{', '.join(map(str, sorted(others)))}, pas par {account} (uid {uid})\u00a0: "
                "route retirée, aucune requête ne lui est envoyée"
            )
        if uid not in holders:
            return f"formgrader partagé\u00a0: personne n'écoute encore sur le port {port}"
        return ""

    def say(reason: str) -> None:
        """Log `reason` once per change: an error when another uid holds the port."""
        if said[-1:] != [reason]:
            squatted = reason.startswith(f"formgrader partagé\u00a0: le port {port} est tenu")
            (app.log.error if squatted else app.log.info)(reason)
            said[:] = [reason]

    def guarded(add_service: Callable) -> Callable:
        async def add_service_if_owned(service) -> None:
            if service.name != name:
                return await add_service(service)
            reason = verdict()
            routed[:] = []  # until the proxy has answered
            if reason:
                say(reason)
                await app.proxy.delete_service(service)  # a 404 is only a warning
                routed[:] = [False]
                return None
            say(f"formgrader partagé\u00a0: port {port} à {account}, route posée")
            await add_service(service)
            routed[:] = [True]
            return None

        return add_service_if_owned

    async def check() -> None:
        service = app._service_map.get(name)
        if service is None or service.server is None or not hasattr(app, "proxy"):
            return
        reason = verdict()
        if reason:
            say(reason)  # once per change: who holds the port now
        if routed != [not reason]:  # changed since the last look
            try:
                await app.proxy.add_service(service)  # guarded: adds or removes, says why
            except Exception as error:  # the proxy is restarting: next round
                routed[:] = []
                app.log.warning("formgrader partagé\u00a0: proxy injoignable (%s)", error)

    def init_proxy_guarded() -> None:
        init_proxy()
        app.proxy.add_service = guarded(app.proxy.add_service)
        PeriodicCallback(check, SERVICE_CHECK_EVERY * 1000).start()

    app.init_proxy = init_proxy_guarded
