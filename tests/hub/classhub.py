"""Drive a real classroom JupyterHub: Unix users, the hub process, its REST API, stopping by pid.

Kept apart from the tests so the fixtures stay short; nothing here is mocked: the users are real
accounts (useradd), the hub and every single-user server are real processes, the exchange is a
real folder and every action goes through the hub's proxy exactly as a browser's would.
"""

from __future__ import annotations

import pwd
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import requests
from helpers import alive, free_port, stop_pids

__all__ = [
    "ClassHub",
    "as_user",
    "create_user",
    "free_port",
    "remove_user",
    "user_pids",
]


def user_pids(uid: int) -> list[int]:
    """Ids of the live processes whose real uid is `uid` (processes a test user still runs)."""
    return [
        proc.pid
        for proc in psutil.process_iter(["uids"])
        if proc.info["uids"] is not None and proc.info["uids"].real == uid and alive(proc.pid)
    ]


def create_user(name: str) -> pwd.struct_passwd:
    """A real Unix account with a home folder (Debian's default mode, 0755 with UMASK 022)."""
    subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/bash", "--comment", "test hub cours", name],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(name)


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

    # hub REST API, as the admin service
    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"Authorization": f"token {self.admin_token}"}
        kwargs.setdefault("timeout", 60)
        return requests.request(method, f"{self.url}/hub/api{path}", headers=headers, **kwargs)

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(pas de journal)"

    def start_server(self, name: str) -> None:
        response = self.api("POST", f"/users/{name}/server")
        assert response.status_code in (201, 202), (response.status_code, response.text)

    def wait_ready(self, name: str, timeout: float = 180) -> dict:
        deadline = time.monotonic() + timeout
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
            **kwargs,
        )

    def proxy_pid(self) -> int | None:
        try:
            return int(self.proxy_pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def stop(self) -> list[int]:
        """Stop servers, the hub and its proxy, each by its id; return the pids still alive."""
        proxy = self.proxy_pid()
        if self.process.poll() is None:
            for name in list(self.server_pids):
                try:
                    self.api("DELETE", f"/users/{name}/server", timeout=30)
                except requests.RequestException:
                    pass
            stop_pids([self.process.pid], grace=30)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        for pid in [*self.server_pids.values(), *([proxy] if proxy else [])]:
            stop_pids([pid], grace=10)
        return [pid for pid in [*self.server_pids.values(), proxy] if pid and alive(pid)]
