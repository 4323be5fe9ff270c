"""Refuse to start a class hub whose login lets a stranger in.

Why: JupyterHub starts happily with DummyAuthenticator (any name, any password: the chart's
default), FirstUseAuthenticator (the first person to type a roster name sets its password),
`allow_all` or an empty allow-list. A class hub holds the solutions and every student's work:
it must name a real login (PAM, LDAP, OAuth...) and admit the roster's names only.

The check runs inside the hub, at start, after every configuration file has been loaded (a
later file may change the authenticator), just before JupyterHub loads its users. The test
suite alone may run DummyAuthenticator: `COURSE_HUB_TEST_LOGIN=dummy` in the hub's environment
is honoured only when the hub's parent process is pytest (or a pytest-xdist worker of pytest)
and the hub listens on the loopback interface only, so a production unit or chart that copied
the variable still refuses to start.
No dependency beyond the standard library and JupyterHub (the z2jh hub image loads it as it is).
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import urlparse

__all__ = ["OPEN_AUTHENTICATORS", "TEST_OPT_IN", "install", "login_problems", "test_opt_in"]

# Authenticators that admit whoever types a name (a password shared by all, or none).
OPEN_AUTHENTICATORS = (
    "DummyAuthenticator",
    "FirstUseAuthenticator",
    "NullAuthenticator",
    "SharedPasswordAuthenticator",
)
TEST_OPT_IN = "COURSE_HUB_TEST_LOGIN"


def _class_names(authenticator: object) -> set[str]:
    return {cls.__name__ for cls in type(authenticator).__mro__}


def login_problems(authenticator: object, *, test_login: bool = False) -> list[str]:
    """Why this authenticator must not guard a class (French, for the admin); [] when it may."""
    problems = []
    open_ones = sorted(_class_names(authenticator) & set(OPEN_AUTHENTICATORS))
    if open_ones and not (test_login and open_ones == ["DummyAuthenticator"]):
        problems.append(
            f"l'authentificateur {type(authenticator).__name__} laisse entrer n'importe qui "
            "(n'importe quel nom, ou le premier venu choisit le mot de passe)\u00a0: choisissez "
            "une vraie connexion (PAM, LDAP, OAuth de l'établissement) dans "
            "c.JupyterHub.authenticator_class"
        )
    if getattr(authenticator, "allow_all", False):
        problems.append(
            "allow_all est activé\u00a0: tout compte accepté par la connexion entrerait, "
            "pas seulement la liste de la classe"
        )
    if not getattr(authenticator, "allowed_users", None):
        problems.append(
            "la liste des utilisateurs autorisés est vide\u00a0: vérifiez la liste de la "
            "classe (COURSE_HUB_ROSTER)"
        )
    return problems


def _loopback(url: str) -> bool:
    host = urlparse(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # "" (every interface) or a name


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg]


def _parent_pid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state


def _is_pytest(args: list[str]) -> bool:
    return any(Path(arg).name.startswith("pytest") for arg in args[:3])


# How pytest-xdist starts a worker (execnet's bootstrap over stdin); the worker's parent is pytest.
XDIST_WORKER = ["-u", "-c", "import sys;exec(eval(sys.stdin.readline()))"]


def _parent_is_pytest() -> bool:
    """The hub's parent is pytest, or an xdist worker whose own parent is pytest."""
    parent = os.getppid()
    args = _cmdline(parent)
    if _is_pytest(args):
        return True
    return args[1:] == XDIST_WORKER and _is_pytest(_cmdline(_parent_pid(parent)))


def test_opt_in(app: object) -> bool:
    """True only for a hub the test suite started: variable set, parent pytest, loopback only."""
    if os.environ.get(TEST_OPT_IN) != "dummy":
        return False
    urls = [getattr(app, "bind_url", ""), getattr(app, "hub_bind_url", "") or "http://127.0.0.1"]
    return _parent_is_pytest() and all(_loopback(url) for url in urls)


def install(app: object) -> None:
    """Check the login of `app` (the JupyterHub being configured) before it loads its users."""
    load_users = app.init_users

    async def init_users_if_closed() -> None:
        allowed = test_opt_in(app)
        problems = login_problems(app.authenticator, test_login=allowed)
        if problems:
            app.exit(
                "Le hub de la classe refuse de démarrer\u00a0:\n- "
                + "\n- ".join(problems)
                + "\n(grader/hub/ADMIN.md, «\u00a0Qui peut se connecter\u00a0»)"
            )
            return
        if allowed:
            app.log.warning("DummyAuthenticator accepté pour la suite de tests seulement")
        await load_users()

    app.init_users = init_users_if_closed
