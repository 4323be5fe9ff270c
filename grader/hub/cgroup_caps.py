"""One cgroup per user server: a memory cap, an equal CPU share and a process cap (one machine).

Why: LocalProcessSpawner enforces no limit. One runaway cell could take the machine's memory
(the kernel's OOM killer then picks any process: a classmate's kernel, the hub) and two busy
loops would halve everyone's speed. The kernel's cgroups do it for real: a process beyond its
cgroup's memory cap is killed inside that cgroup alone, and sibling cgroups of equal weight
share a busy CPU equally, however many processes each one runs.

Layout, for a user `ana` (PARENT = "jupyterhub-cours"):
- cgroup v2 (`<fs>/cgroup.controllers` exists): `<fs>/PARENT/ana` with memory.max,
  memory.swap.max, cpu.weight and pids.max. PARENT sits at the root: v2 forbids enabling
  controllers below a cgroup that holds processes (the hub's own, under systemd);
- cgroup v1: `<fs>/<controller>/<the hub's own cgroup>/PARENT/ana` in the memory, cpu and pids
  hierarchies (memory.limit_in_bytes, memory.memsw.limit_in_bytes, cpu.shares, pids.max),
  nested in the hub's cgroup so the class stays inside whatever bounds the hub's service.
The server process joins its cgroup between fork and exec (its kernels and every child follow);
stopping the server kills whatever is left in the cgroup (a detached child included) and removes
it. Needs root (the hub already is, to start servers as their users); standard library only.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PARENT", "Caps", "UserCgroup", "cgroup_version", "probe_problem"]

PARENT = "jupyterhub-cours"
V1_CONTROLLERS = ("memory", "cpu", "pids")
# a roster id (roster.py) or a Unix name: never "/", ".", ".." (a path out of the parent)
_SAFE_NAME = re.compile(r"^[a-z0-9_][a-z0-9_.@+-]{0,199}$")


@dataclass(frozen=True)
class Caps:
    """What one server may use: bytes of memory, CPU weight (v2 scale, 100 = equal) and tasks."""

    memory: int
    cpu_weight: int
    tasks: int

    def files(self, version: int) -> dict[str, list[tuple[str, str]]]:
        """{controller: [(file, value)...]} in the order they must be written."""
        if version == 2:
            return {
                "": [
                    ("memory.max", str(self.memory)),
                    ("memory.swap.max", "0"),  # no swapping past the cap: the machine stays fast
                    ("cpu.weight", str(self.cpu_weight)),
                    ("pids.max", str(self.tasks)),
                ]
            }
        return {
            "memory": [
                # memory+swap (only where swap is counted) may never be below memory: raise it
                # first for a larger cap, set it again once memory is set for a smaller one
                ("memory.memsw.limit_in_bytes", "-1"),
                ("memory.limit_in_bytes", str(self.memory)),
                ("memory.memsw.limit_in_bytes", str(self.memory)),
            ],
            "cpu": [("cpu.shares", str(max(2, self.cpu_weight * 1024 // 100)))],
            "pids": [("pids.max", str(self.tasks))],
        }


def cgroup_version(fs: Path) -> int | None:
    """2 (unified), 1 (memory, cpu and pids hierarchies mounted) or None (no usable cgroups)."""
    if (fs / "cgroup.controllers").is_file():
        return 2
    if all((fs / name / "cgroup.procs").is_file() for name in V1_CONTROLLERS):
        return 1
    return None


def _own_path(controller: str) -> str:
    """This process's cgroup in the v1 hierarchy of `controller` ("/" when not listed)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return "/"


class UserCgroup:
    """The cgroup (one folder per hierarchy) of one user's server."""

    def __init__(self, name: str, *, fs: Path, parent: str = PARENT) -> None:
        if not _SAFE_NAME.match(name) or not _SAFE_NAME.match(parent):
            raise ValueError(f"nom de cgroup invalide\u00a0: {parent}/{name}")
        self.name = name
        self.fs = fs
        self.version = cgroup_version(fs)
        if self.version is None:
            raise OSError(f"aucun cgroup utilisable sous {fs}")
        if self.version == 2:
            self.parents = {"": fs / parent}
        else:
            self.parents = {c: fs / c / _own_path(c).lstrip("/") / parent for c in V1_CONTROLLERS}
        self.dirs = {controller: path / name for controller, path in self.parents.items()}

    def create(self, caps: Caps) -> None:
        """Make the folders and write the caps (an existing cgroup gets the new caps)."""
        if self.version == 2:
            wanted = "+memory +cpu +pids"
            for level in (self.fs, self.parents[""]):
                if level != self.fs:
                    level.mkdir(exist_ok=True)
                enabled = (level / "cgroup.subtree_control").read_text().split()
                if not {"memory", "cpu", "pids"} <= set(enabled):
                    (level / "cgroup.subtree_control").write_text(wanted)
        for controller, settings in caps.files(self.version).items():
            folder = self.dirs[controller]
            folder.mkdir(parents=True, exist_ok=True)
            for file, value in settings:
                target = folder / file
                if file == "memory.memsw.limit_in_bytes" and not target.exists():
                    continue
                if file == "memory.swap.max" and not target.exists():
                    continue
                target.write_text(value)

    def enter_function(self) -> Callable[[], None]:
        """What the child runs between fork and exec (still root): join every folder."""
        procs = [str(folder / "cgroup.procs") for folder in self.dirs.values()]

        def enter() -> None:
            pid = str(os.getpid()).encode()
            for path in procs:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)

        return enter

    def pids(self) -> set[int]:
        """Processes in the cgroup now (any hierarchy)."""
        found: set[int] = set()
        for folder in self.dirs.values():
            try:
                found.update(int(p) for p in (folder / "cgroup.procs").read_text().split())
            except OSError:
                continue
        return found

    def exists(self) -> bool:
        return any(folder.exists() for folder in self.dirs.values())

    def remove(self, timeout: float = 10) -> bool:
        """Kill what is left inside (a detached child too), then remove the folders."""
        deadline = time.monotonic() + timeout
        while True:
            left = self.pids()
            if not left:
                break
            kill = self.dirs.get("", Path("/nonexistent")) / "cgroup.kill"
            if kill.exists():
                kill.write_text("1")
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        for folder in self.dirs.values():
            while folder.exists():
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        return False
                    time.sleep(0.1)  # the last process is still being reaped
        return True


def probe_problem(fs: Path, parent: str = PARENT) -> str | None:
    """Why no server could be capped here (French, for the admin), or None when it can."""
    version = cgroup_version(fs)
    if version is None:
        return f"ni cgroup v2 ni les hiérarchies v1 memory, cpu et pids sous {fs}"
    probe = UserCgroup(f"sonde-{os.getpid()}", fs=fs, parent=parent)
    try:
        probe.create(Caps(memory=64 * 2**20, cpu_weight=100, tasks=16))
    except OSError as error:
        reason = error.strerror or str(error)
        return f"cgroup v{version} non modifiable ({reason}\u00a0: {error.filename})"
    finally:
        probe.remove(timeout=5)
    return None
