"""The Littlest JupyterHub's spawner, reproduced without systemd: what the port check meets.

TLJH's `UserCreatingSpawner` (tljh/user_creating_spawner.py) is SystemdSpawner plus user
creation: its start sets `username_template` to the Unix name `jupyter-<name>` (cut and hashed
past 25 characters: `generate_system_username`), then SystemdSpawner's start always takes
`self.port = random_port()` (a port the hub set before is ignored) and starts the server as
that Unix user. This LocalProcessSpawner does the same on this machine, where no systemd runs:
the accounts are made by the test, the server is a real process of that account, on a random
port. Named like TLJH's, so `c.UserCreatingSpawner.*` and `c.SystemdSpawner.*`-style settings
in the course's drop-in apply as they would.
"""

from __future__ import annotations

import hashlib
import pwd

from jupyterhub.spawner import LocalProcessSpawner
from jupyterhub.utils import random_port
from traitlets import Dict, List, Unicode

__all__ = ["UserCreatingSpawner", "generate_system_username"]


def generate_system_username(username: str) -> str:
    """TLJH's own rule (tljh/normalize.py, copied as it is): a Unix name under 32 characters,
    `jupyter-<name>` cut at 26 characters and followed by 5 of its hash when it is longer."""
    if len(username) < 26:
        return username
    userhash = hashlib.sha256(username.encode("utf-8")).hexdigest()
    return f"{username[:26]}-{userhash[:5]}"


class UserCreatingSpawner(LocalProcessSpawner):
    """Random port and `jupyter-<name>` Unix account, as TLJH's SystemdSpawner does."""

    username_template = Unicode("{USERNAME}", config=True)
    user_groups = Dict(key_trait=Unicode(), value_trait=List(Unicode()), config=True)

    def _system_username(self) -> str:
        return self.username_template.replace("{USERNAME}", self.user.name)

    def make_preexec_fn(self, name):
        return super().make_preexec_fn(self._system_username())

    def user_env(self, env: dict[str, str]) -> dict[str, str]:
        entry = pwd.getpwnam(self._system_username())
        env.update(USER=entry.pw_name, HOME=entry.pw_dir, SHELL=entry.pw_shell)
        return env

    async def start(self):
        # TLJH's UserCreatingSpawner: its Unix name, cut when long
        self.username_template = generate_system_username("jupyter-" + self.user.name)
        self.port = random_port()  # SystemdSpawner.start: whatever port was set before
        return await super().start()
