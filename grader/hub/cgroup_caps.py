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

The admin's check, on the hub machine, of what the kernel applies to a running server:
`sudo /opt/cours-memoire-tuteur/env/bin/python /opt/cours-memoire-tuteur/etc/cgroup_caps.py ana`
prints, in French, each cgroup holding the Unix user's processes with its memory cap, CPU weight
and task cap read back from the kernel (exit 1 when a process is outside the course's cgroups).
"""

from __future__ import annotations

import argparse
import errno
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "PARENT",
    "Caps",
    "UserCgroup",
    "cgroup_version",
    "effective_caps",
    "main",
    "probe_problem",
    "process_cgroups",
]

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
            available = (self.fs / "cgroup.controllers").read_text().split()
            missing = [name for name in V1_CONTROLLERS if name not in available]
            if missing:  # a hybrid machine: these controllers are held by its v1 hierarchies
                raise OSError(
                    errno.ENOTSUP,
                    f"contrôleurs absents du cgroup v2\u00a0: {', '.join(missing)}",
                    str(self.fs / "cgroup.controllers"),
                )
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


def process_cgroups(pid: int, fs: Path) -> dict[str, Path]:
    """The cgroup folders holding a live process: {"": folder} on v2, per capped controller
    on v1 (from /proc/<pid>/cgroup, the kernel's own answer)."""
    version = cgroup_version(fs)
    paths: dict[str, str] = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    if version == 2:
        return {"": fs / paths[""].lstrip("/")}
    return {c: fs / c / paths.get(c, "/").lstrip("/") for c in V1_CONTROLLERS}


def _number(text: str) -> int | None:
    """A cgroup value: None for no limit (v2 `max`, v1's page-rounded 2^63)."""
    text = text.strip()
    if text == "max" or int(text) >= 2**62:
        return None
    return int(text)


def effective_caps(folders: dict[str, Path]) -> dict[str, int | None]:
    """What the kernel applies to a cgroup now: memory cap and use (bytes), CPU weight (v2
    scale, 100 = equal share) and task cap; None where there is no limit."""
    if "" in folders:
        folder = folders[""]
        read = lambda name: (folder / name).read_text()  # noqa: E731
        return {
            "memory": _number(read("memory.max")),
            "used": _number(read("memory.current")),
            "cpu_weight": _number(read("cpu.weight")),
            "tasks": _number(read("pids.max")),
        }
    shares = _number((folders["cpu"] / "cpu.shares").read_text())
    return {
        "memory": _number((folders["memory"] / "memory.limit_in_bytes").read_text()),
        "used": _number((folders["memory"] / "memory.usage_in_bytes").read_text()),
        "cpu_weight": None if shares is None else shares * 100 // 1024,
        "tasks": _number((folders["pids"] / "pids.max").read_text()),
    }


def _size(value: int | None) -> str:
    if value is None:
        return "sans plafond"
    if value >= 2**30:
        return f"{value / 2**30:.1f}".replace(".", ",") + "\u00a0Gio"
    return f"{value // 2**20}\u00a0Mio"


def _pids_of(uid: int) -> list[int]:
    """The live processes whose real uid is `uid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uids = re.search(r"^Uid:\s+(\d+)", status, re.M)
        if uids and int(uids.group(1)) == uid:
            found.append(int(entry))
    return found


def main(argv: list[str] | None = None) -> int:
    """Print the caps the kernel applies to a user's running server (French, for the admin)."""
    import pwd

    parser = argparse.ArgumentParser(
        description="Plafonds (mémoire, processeur, tâches) appliqués au serveur d'un utilisateur"
    )
    parser.add_argument(
        "compte", help="le compte Unix de l'utilisateur (TLJH\u00a0: jupyter-<nom>)"
    )
    parser.add_argument("--fs", default="/sys/fs/cgroup", help="où les cgroups sont montés")
    args = parser.parse_args(argv)
    fs = Path(args.fs)
    version = cgroup_version(fs)
    if version is None:
        print(f"ni cgroup v2 ni les hiérarchies v1 memory, cpu et pids sous {fs}")
        return 1
    try:
        uid = pwd.getpwnam(args.compte).pw_uid
    except KeyError:
        print(f"{args.compte}\u00a0: compte Unix inconnu")
        return 1
    groups: dict[tuple[tuple[str, Path], ...], list[int]] = {}
    for pid in _pids_of(uid):
        try:
            folders = process_cgroups(pid, fs)
        except OSError:
            continue  # ended meanwhile
        groups.setdefault(tuple(folders.items()), []).append(pid)
    if not groups:
        print(f"{args.compte}\u00a0: aucun processus\u00a0; démarrez son serveur puis relancez")
        return 1
    status = 0
    for folders, pids in sorted(groups.items()):
        controller, folder = folders[0]
        where = folder.relative_to(fs / controller)
        shown = "/" + ("" if where == Path(".") else where.as_posix())
        if where.parts[-2:-1] != (PARENT,):
            print(
                f"{args.compte}\u00a0: {len(pids)} processus hors des cgroups du cours "
                f"({shown}, cgroup v{version})\u00a0: aucun plafond du cours"
            )
            status = 1
            continue
        caps = effective_caps(dict(folders))
        tasks = "sans plafond" if caps["tasks"] is None else f"au plus {caps['tasks']}"
        print(
            f"{args.compte}\u00a0: {len(pids)} processus dans {shown} (cgroup v{version})\u00a0: "
            f"mémoire plafonnée à {_size(caps['memory'])} (utilisée\u00a0: {_size(caps['used'])}), "
            f"poids processeur {caps['cpu_weight']}, {tasks} tâches"
        )
    return status


if __name__ == "__main__":
    sys.exit(main())
