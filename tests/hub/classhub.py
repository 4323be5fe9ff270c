"""Drive a real classroom JupyterHub: Unix users, the hub process, its REST API, stopping by pid.

Kept apart from the tests so the fixtures stay short; nothing here is mocked: the users are real
accounts (useradd), the hub and every single-user server are real processes, the exchange is a
real folder and every action goes through the hub's proxy exactly as a browser's would.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import pwd
import re
import secrets
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil
import requests
from helpers import REPO, alive, free_port, stop_pids

__all__ = [
    "unix_users",
    "ClassHub",
    "as_user",
    "create_user",
    "environment_of",
    "free_port",
    "port_base",
    "hub_settings",
    "launch_hub",
    "make_exchange",
    "open_tempdir",
    "remove_user",
    "user_pids",
    "write_roster",
]

PASSWORD = "mot-de-passe-de-la-classe"
# the UMask of the shipped systemd unit (grader/hub/jupyterhub-cours.service)
UNIT_UMASK = int(
    re.search(
        r"^UMask=(\d+)$",
        (REPO / "grader" / "hub" / "jupyterhub-cours.service").read_text(encoding="utf-8"),
        re.M,
    ).group(1),
    8,
)
COURSE_ID = "memoire-tuteur"
# The Unix group that alone reads the test prefix's course template (removed after the session);
# a run with a prefix of its own (COURSE_HUB_TEST_PREFIX, tests/hub/course_prefix.py) has a group
# of its own too: two checkouts' runs on one machine never add to or remove each other's group.
_OWN_PREFIX = os.environ.get("COURSE_HUB_TEST_PREFIX", "")
INSTRUCTORS_GROUP = "cours-enseignants-test" + (
    f"-{hashlib.sha256(_OWN_PREFIX.encode()).hexdigest()[:8]}" if _OWN_PREFIX else ""
)
HUB_DIR = REPO / "grader" / "hub"


def open_tempdir(prefix: str) -> Path:
    """A temp folder every user may traverse (pytest's own tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    path.chmod(0o755)
    return path


def user_pids(uid: int) -> list[int]:
    """Ids of the live processes whose real uid is `uid` (processes a test user still runs)."""
    return [
        proc.pid
        for proc in psutil.process_iter(["uids"])
        if proc.info["uids"] is not None and proc.info["uids"].real == uid and alive(proc.pid)
    ]


_PORT_BASES = itertools.count()


def port_base() -> int:
    """A base for a test hub's server ports (base + hub user id) that no other hub of the run
    uses at the same time: hubs run side by side in several xdist workers, and two of them on one
    base would give their third users one port (the verified spawner then refuses the second).
    A range per worker (20000-28999; the class rush keeps 29100), ten bases in turn within it:
    apart for up to 9 workers and hubs of under 100 users (the rush, with 30 and more, has its
    own base)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    index = int(worker) if worker.isdigit() else 0
    return 20000 + 1000 * (index % 9) + 100 * (next(_PORT_BASES) % 10)


def hub_settings(**more: str) -> dict[str, str]:
    """The hub's environment for a test hub (the test prefix's Unix group, the course id)."""
    return {"COURSE_ID": COURSE_ID, "COURSE_HUB_INSTRUCTORS_GROUP": INSTRUCTORS_GROUP, **more}


def write_roster(path: Path, members: dict[str, str]) -> Path:
    """The class roster the hub reads (grader/hub/roster.py's format): {user name: role}."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "first_name", "last_name", "email", "role"])
        for name, role in members.items():
            writer.writerow([name, name.capitalize(), "Test", f"{name}@example.org", role])
    path.chmod(0o600)  # names and e-mails: for the hub (root) only
    return path


def make_exchange(path: Path) -> Path:
    """nbgrader's exchange as install-course-env.sh makes it: writable by all, sticky."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o1777)
    return path


def create_user(name: str) -> pwd.struct_passwd:
    """A real Unix account with a home folder (Debian's default mode, 0755 with UMASK 022)."""
    subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/bash", "--comment", "test hub cours", name],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(name)


@contextmanager
def unix_users(names: list[str]) -> Iterator[None]:
    """These real Unix accounts for the block; every one created is removed, even on failure."""
    created: list[str] = []
    try:
        for name in names:
            create_user(name)
            created.append(name)
        yield
    finally:
        for name in created:
            remove_user(name)


def remove_user(name: str) -> None:
    """Remove the account and its home; first stop (by id) anything it still runs."""
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        return
    for pid in user_pids(account.pw_uid):
        stop_pids([pid], grace=5)
    subprocess.run(["userdel", "--remove", name], capture_output=True)
    try:
        pwd.getpwnam(name)
    except KeyError:
        return
    subprocess.run(["userdel", "--force", "--remove", name], capture_output=True)


def as_user(
    name: str, *command: str, cwd: str | Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run a command as that Unix user (what the user could do in a terminal)."""
    return subprocess.run(
        ["runuser", "-u", name, "--", *command],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


@dataclass
class ClassHub:
    """A running hub: its base URL, the admin service token, the process and where it logs."""

    url: str
    admin_token: str
    process: subprocess.Popen
    log_path: Path
    proxy_pid_file: Path
    server_pids: dict[str, int] = field(default_factory=dict)
    user_tokens: dict[str, str] = field(default_factory=dict)
    verify: str | bool = True  # HTTPS: the certificate to trust
    command: list[str] = field(default_factory=list)  # how it was started: restart() again
    env: dict[str, str] = field(default_factory=dict)

    # hub REST API, as the admin service
    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"Authorization": f"token {self.admin_token}"}
        kwargs.setdefault("timeout", 60)
        kwargs.setdefault("verify", self.verify)
        return requests.request(method, f"{self.url}/hub/api{path}", headers=headers, **kwargs)

    def log_tail(self, lines: int = 60) -> str:
        """The hub log's last lines, without the test's own polling (`200 GET` by the test
        admin or the idle culler): a 600 s wait once left only those in the tail."""
        try:
            log = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return "(pas de journal)"
        polling = re.compile(
            r" 200 GET /hub/api/\S* \((test-admin|idle-culler)@| 200 GET /api/routes"
        )
        return "\n".join([line for line in log if not polling.search(line)][-lines:])

    def start_server(self, name: str) -> None:
        response = self.api("POST", f"/users/{name}/server")
        assert response.status_code in (201, 202), (response.status_code, self.log_tail())

    def follow_progress(self, name: str, timeout: float) -> None:
        """Wait on the hub's spawn progress stream, as the spawn-pending page does: one request
        the hub answers when the server is ready or failed, not a request per second (30
        students polling during a rush kept the hub busy answering them). Returns early on
        any answer but the stream (not starting, an error): wait_ready polls after it."""
        deadline = time.monotonic() + timeout
        try:
            with requests.get(
                f"{self.url}/hub/api/users/{name}/server/progress",
                headers={"Authorization": f"token {self.admin_token}"},
                stream=True,
                timeout=(30, 60),  # the hub sends a keep-alive line every few seconds
                verify=self.verify,
            ) as stream:
                if stream.status_code != 200:
                    return
                for line in stream.iter_lines():
                    if line.startswith(b"data:"):
                        event = json.loads(line[len(b"data:") :])
                        if event.get("ready") or event.get("failed"):
                            return
                    if time.monotonic() > deadline:
                        return
        except (requests.RequestException, ValueError):
            return

    def wait_ready(self, name: str, timeout: float = 180) -> dict:
        deadline = time.monotonic() + timeout
        self.follow_progress(name, timeout)
        while time.monotonic() < deadline:
            model = self.api("GET", f"/users/{name}").json()
            server = model.get("servers", {}).get("")
            if server and server.get("ready"):
                pid = (server.get("state") or {}).get("pid")
                if pid:
                    self.server_pids[name] = int(pid)
                return server
            if self.process.poll() is not None:
                raise AssertionError(f"le hub s'est arrêté :\n{self.log_tail()}")
            time.sleep(1)
        raise AssertionError(f"serveur de {name} pas prêt après {timeout} s :\n{self.log_tail()}")

    def wait_stopped(self, name: str, timeout: float = 120) -> dict:
        """Wait until the hub has stopped that user's server: no server and nothing pending.
        Its port is free a moment before the hub's stop completes; a start asked for then is
        refused ("pending stop")."""
        deadline = time.monotonic() + timeout
        while True:
            model = self.api("GET", f"/users/{name}").json()
            if not model["servers"] and not model["pending"]:
                return model
            assert time.monotonic() < deadline, f"{name} : arrêt non terminé\n{self.log_tail()}"
            time.sleep(0.5)

    def wait_until(self, condition: Callable[[], object], what: str, timeout: float = 90) -> None:
        """Poll `condition` until it holds; else fail with `what` and the hub's log."""
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"{what} :\n{self.log_tail()}"
            time.sleep(0.5)

    def groups_of(self, name: str) -> set[str]:
        """The user's hub groups (none for a user the hub does not know)."""
        response = self.api("GET", f"/users/{name}")
        return set(response.json()["groups"]) if response.status_code == 200 else set()

    def login_status(self, name: str, password: str = PASSWORD) -> int:
        """The status of a login through the hub's form: 302 let in, 403 refused."""
        session = requests.Session()
        session.get(f"{self.url}/hub/login", timeout=30, verify=self.verify)
        return session.post(
            f"{self.url}/hub/login",
            data={
                "username": name,
                "password": password,
                "_xsrf": session.cookies.get("_xsrf", ""),
            },
            allow_redirects=False,
            timeout=60,
            verify=self.verify,
        ).status_code

    def token_for(self, name: str) -> str:
        """An API token of that user (created by the admin service), as their browser would hold."""
        if name not in self.user_tokens:
            response = self.api(
                "POST", f"/users/{name}/tokens", json={"note": "test hub", "expires_in": 3600}
            )
            assert response.status_code == 201, (response.status_code, response.text)
            self.user_tokens[name] = response.json()["token"]
        return self.user_tokens[name]

    # a user's single-user server, through the hub's proxy, with that user's token
    def server(
        self, owner: str, method: str, path: str, token_of: str | None = None, **kwargs
    ) -> requests.Response:
        token = self.token_for(token_of or owner)
        headers = {"Authorization": f"token {token}"}
        return requests.request(
            method,
            f"{self.url}/user/{owner}{path}",
            headers=headers,
            timeout=kwargs.pop("timeout", 120),
            allow_redirects=False,
            verify=self.verify,
            **kwargs,
        )

    def execute(self, owner: str, kernel_id: str, code: str, timeout: float = 120) -> str:
        """Run `code` in that user's kernel through the hub's proxy; what it printed, or "died".

        The reply (shell) and the printed text (iopub) travel on two channels whose order is not
        guaranteed: measured in CI, the reply came first once. So this waits for both the reply
        and iopub's "idle" for this request, after which no more output can come.
        """
        import websocket  # imported here: only the kernel tests need it

        ws = websocket.create_connection(
            f"{self.url.replace('http', 'ws', 1)}/user/{owner}/api/kernels/{kernel_id}/channels",
            header=[f"Authorization: token {self.token_for(owner)}"],
            timeout=timeout,
        )
        msg_id, out, replied, idle = uuid.uuid4().hex, [], False, False
        header = {
            "msg_id": msg_id,
            "msg_type": "execute_request",
            "username": owner,
            "session": uuid.uuid4().hex,
            "date": datetime.now(UTC).isoformat(),
            "version": "5.3",
        }
        content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}}
        content["stop_on_error"] = False  # a failed cell must not abort the next one
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
        try:
            ws.send(json.dumps({**message, "channel": "shell", "buffers": []}))
            while not (replied and idle):
                reply = json.loads(ws.recv())
                kind, body = reply["msg_type"], reply["content"]
                if kind == "status" and body["execution_state"] in ("restarting", "dead"):
                    return "died"
                if reply.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if kind == "stream":
                    out.append(body["text"])
                elif kind == "error":
                    raise AssertionError(body)
                elif kind == "execute_reply":
                    assert body["status"] == "ok", body
                    replied = True
                elif kind == "status" and body["execution_state"] == "idle":
                    idle = True
            return "".join(out)
        finally:
            ws.close()

    def wait_up(self, timeout: float = 120) -> None:
        """Until the hub's API answers (AssertionError with its log if it stops or never does)."""
        deadline = time.monotonic() + timeout
        while True:
            assert self.process.poll() is None, f"le hub ne démarre pas :\n{self.log_tail()}"
            try:
                if self.api("GET", "/", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, f"hub injoignable :\n{self.log_tail()}"
            time.sleep(0.5)

    def restart(self) -> None:
        """Stop the hub process alone (systemd's KillMode=process), then start it again."""
        stop_pids([self.process.pid], grace=30)
        self.process.wait(timeout=30)
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                self.command,
                cwd=self.log_path.parent,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.wait_up()

    def proxy_pid(self) -> int | None:
        try:
            return int(self.proxy_pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def stop(self) -> list[int]:
        """Stop servers, the hub and its proxy, each by its id; return the pids still alive."""
        proxy = self.proxy_pid()
        try:  # the hub's managed services (the idle culler) too: measured, one outlived the hub
            spawned = [p.pid for p in psutil.Process(self.process.pid).children(recursive=True)]
        except psutil.NoSuchProcess:
            spawned = []
        if self.process.poll() is None:

            def delete(name: str) -> None:
                try:
                    self.api("DELETE", f"/users/{name}/server", timeout=60)
                except requests.RequestException:
                    pass

            # all at once, as a class leaves: the hub stops them concurrently
            with ThreadPoolExecutor(max_workers=max(1, len(self.server_pids))) as pool:
                list(pool.map(delete, list(self.server_pids)))
            stop_pids([self.process.pid], grace=30)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        others = [*self.server_pids.values(), *spawned, *([proxy] if proxy else [])]
        for pid in dict.fromkeys(others):
            stop_pids([pid], grace=10)
        return [pid for pid in dict.fromkeys(others) if alive(pid)]


@contextmanager
def launch_hub(
    *,
    prefix: Path,
    workdir: Path,
    roster: Path,
    exchange: Path,
    settings: dict[str, str] | None = None,
    overlay: str = "",
    hub_config: Path,
    tls: tuple[Path, Path] | None = None,
) -> Iterator[ClassHub]:
    """Run the shipped `hub_config` with the env's jupyterhub on 127.0.0.1 free ports.

    The test overlay only changes what a test must: ports, DummyAuthenticator with a password,
    a database in `workdir`, and an admin service token to drive the REST API; `settings` are the
    hub's environment variables (COURSE_HUB_*), `overlay` more configuration lines; `tls`
    (certificate, key) serves HTTPS through the configuration's own COURSE_HUB_TLS_* settings.
    """
    port, hub_port, proxy_port = free_port(), free_port(), free_port()
    admin_token = secrets.token_hex(32)
    scheme = "https" if tls else "http"
    if tls:
        settings = {
            **(settings or {}),
            "COURSE_HUB_TLS_CERT": str(tls[0]),
            "COURSE_HUB_TLS_KEY": str(tls[1]),
            "COURSE_HUB_URL": f"https://127.0.0.1:{port}",
        }
    config = workdir / "jupyterhub_test_config.py"
    config.write_text(
        f"""
c = get_config()  # noqa
load_subconfig({str(hub_config)!r})
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.JupyterHub.bind_url = "{scheme}://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_port}"
c.ConfigurableHTTPProxy.pid_file = {str(workdir / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{workdir / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(workdir / "cookie_secret")!r}
c.JupyterHub.services.append({{"name": "test-admin", "api_token": {admin_token!r}}})
c.JupyterHub.load_roles.append({{
    "name": "test-admin",
    "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens", "admin:groups",
               "read:hub", "list:services", "read:services", "read:roles"],
    "services": ["test-admin"],
}})
{overlay}
"""
    )
    env = {
        "PATH": f"{prefix / 'env' / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(workdir),
        "COURSE_HUB_PREFIX": str(prefix),
        "COURSE_HUB_EXCHANGE": str(exchange),
        "COURSE_HUB_ROSTER": str(roster),
        "COURSE_HUB_PORT_BASE": str(port_base()),
        # DummyAuthenticator, for the test suite only: login_guard.py honours it because this
        # process (pytest) is the hub's parent and the hub listens on 127.0.0.1 only
        "COURSE_HUB_TEST_LOGIN": "dummy",
        **(settings or {}),
    }
    log_path = workdir / "jupyterhub.log"
    command = [str(prefix / "env" / "bin" / "jupyterhub"), "-f", str(config)]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            umask=UNIT_UMASK,  # as the shipped systemd unit starts it
        )
    hub = ClassHub(
        url=f"{scheme}://127.0.0.1:{port}",
        admin_token=admin_token,
        process=process,
        log_path=log_path,
        proxy_pid_file=workdir / "proxy.pid",
        verify=str(tls[0]) if tls else True,
        command=command,
        env=env,
    )
    try:
        hub.wait_up()
        yield hub
    finally:
        left = hub.stop()
        assert not left, f"processus encore vivants : {left}"


def environment_of(pid: int) -> dict[str, str]:
    """The environment a live process started with (read from /proc, as root)."""
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    items = raw.decode(errors="replace").split("\0")
    return dict(item.split("=", 1) for item in items if "=" in item)
