"""The grading sandbox: bubblewrap (Debian package ``bubblewrap``) around every process that
touches a submission, with resource limits set by ``prlimit`` inside it.

What a sandboxed process gets (see ``grader/README.md``, section « Le bac à sable »):

- a root file system of its own: the system's ``/usr`` (and the ``/bin``, ``/lib``… links), the
  Python environment and the ``course`` package, all read-only; for the runner, a work folder
  (``WORK_DIR``) and a ``/tmp`` that are its own tmpfs, each of a fixed size (nothing it writes
  reaches the host's disk, and a full folder is an ``ENOSPC`` for it, not for the machine); for
  the checker, the snapshots read-only; a new ``/proc`` and a minimal ``/dev``. Nothing else
  exists there: no home folder, no gradebook, no ``grader/`` folder, no other submission;
- a network of its own with nothing in it (a new network namespace: its loopback leads only to
  itself, never to the machine's services), no IPC, its own PID namespace: the sandboxed command
  is its PID 1, and when it ends the kernel kills every process it started, detached or not;
- the limits of ``LIMITS``: per process (setrlimit: address space, open files, file size, CPU,
  no core dump), per sandbox uid (processes), and for the whole submission together (resident
  memory and CPU time of all its processes, polled by the runner's supervisor, which stops them
  all past the budget: cgroups are not delegated on every grading machine, this works on all);
- no privilege: run by root, bubblewrap switches to an uid that no account uses, chosen per
  evaluation, without capabilities; run by anyone else, it creates a user namespace and the
  processes keep that user's rights, restricted to the folders above.

The student's own ``verifier`` does not use it (their code, their rights); grading does
(``sandboxed=True``), and the grader refuses to run without it unless told to on purpose
(``grading.nbgrader_ext.sandbox_setting``, instructor side).
"""

from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "LIMITS",
    "WORK_DIR",
    "SANDBOX_UIDS",
    "Limits",
    "Sandbox",
    "sandbox_problem",
]

_MiB = 1 << 20


# The runner's work folder inside the sandbox: a tmpfs of ``Limits.work_bytes``.
WORK_DIR = "/labo-work"


@dataclass(frozen=True)
class Limits:
    """Resource limits of a submission: per process (setrlimit values, set by prlimit), and
    for all its processes together (``total_*``, enforced by the runner's supervisor)."""

    memory_bytes: int = 1024 * _MiB  # address space of one process: a 2 GiB allocation fails
    processes: int = 64  # processes and threads of the sandbox's uid (RLIMIT_NPROC)
    open_files: int = 256
    file_bytes: int = 64 * _MiB  # largest file it may write
    tmp_bytes: int = 64 * _MiB  # size of its private /tmp (a tmpfs)
    work_bytes: int = 64 * _MiB  # size of its work folder (a tmpfs)
    cpu_seconds: int = 30  # per process, a backstop: the totals below come first
    total_memory_bytes: int = 1024 * _MiB  # resident memory of all its processes together
    total_cpu_seconds: float = 20.0  # CPU time of all its processes together


LIMITS = Limits()

# When the grader runs as root, sandboxed processes get an uid from this range, which no account
# uses (Debian gives accounts uids below 60000 and containers' subuid ranges start at 100000).
SANDBOX_UIDS = range(1_900_000_000, 2_000_000_000)
_SYSTEM_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime")
_TOOLS = ("bwrap", "prlimit")


def _is_root() -> bool:
    return os.geteuid() == 0


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _python_dirs() -> list[str]:
    """Folders a sandboxed ``python -I -m course...`` needs: the environment and the package."""
    import course

    wanted = [
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        str(Path(sys.executable).parent),
        str(Path(course.__file__).parent),  # an editable install points outside the prefix
    ]
    dirs: list[str] = []
    for raw in wanted:
        for path in {raw, os.path.realpath(raw)}:
            if not os.path.isdir(path) or _inside(path, "/usr"):
                continue
            if not any(_inside(path, kept) for kept in dirs):
                dirs = [d for d in dirs if not _inside(d, path)] + [path]
    return sorted(dirs, key=len)


class Sandbox:
    """The sandbox of one evaluation: builds the bubblewrap command of each process it runs.

    As root, its processes run under one fresh uid (``uid``) without capabilities, and the
    folders they must write are handed over to that uid first (``hand_over``); otherwise they
    run in a user namespace as the grader's own user.
    """

    def __init__(self, limits: Limits = LIMITS) -> None:
        self.limits = limits
        uids = SANDBOX_UIDS
        self.uid: int | None = uids[secrets.randbelow(len(uids))] if _is_root() else None

    def hand_over(self, folder: Path) -> None:
        """Let the sandbox's uid write in `folder` and in everything it holds (root only)."""
        if self.uid is None:
            return
        for parent, _dirs, files in os.walk(folder):
            os.chown(parent, self.uid, self.uid)
            for name in files:
                os.chown(os.path.join(parent, name), self.uid, self.uid)

    def command(
        self,
        argv: list[str],
        *,
        writable: Path | None = None,
        readable: tuple[Path, ...] = (),
        work: bool = False,
    ) -> list[str]:
        """The command that runs `argv` in the sandbox, in `writable` (or ``/``) as its folder;
        with `work`, in a size-limited tmpfs ``WORK_DIR`` of its own instead."""
        bwrap = shutil.which("bwrap") or "bwrap"
        args = [
            bwrap,
            "--clearenv",  # before --setenv: bwrap applies both as it reads them
            "--die-with-parent",
            "--new-session",
            "--unshare-pid",
            # the command is the namespace's PID 1: when it ends, the kernel kills the rest and
            # bubblewrap reaps it (with bubblewrap's own PID 1 in between, that one is left to the
            # machine's init as a zombie)
            "--as-pid-1",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
        ]
        if self.uid is None:
            args += ["--unshare-user", "--disable-userns"]
        home = WORK_DIR if work else str(writable) if writable else "/tmp"
        for name, value in (
            ("PATH", "/usr/bin:/bin"),
            ("HOME", home),
            ("TMPDIR", "/tmp"),
            ("LANG", "C.UTF-8"),
            ("MALLOC_ARENA_MAX", "2"),  # threads reserve less address space
            ("OPENBLAS_NUM_THREADS", "1"),  # numpy (pandas…) would reserve buffers per core
            ("OMP_NUM_THREADS", "1"),
        ):
            args += ["--setenv", name, value]
        args += ["--ro-bind", "/usr", "/usr"]
        for path in _SYSTEM_DIRS:
            if os.path.islink(path):
                args += ["--symlink", os.readlink(path), path]
            elif os.path.isdir(path):
                args += ["--ro-bind", path, path]
        for path in _ETC_FILES:
            args += ["--ro-bind-try", path, path]
        args += ["--proc", "/proc", "--dev", "/dev"]
        args += ["--perms", "1777", "--size", str(self.limits.tmp_bytes), "--tmpfs", "/tmp"]
        if work:
            args += ["--perms", "1777", "--size", str(self.limits.work_bytes), "--tmpfs", WORK_DIR]
        binds = [(path, "--ro-bind") for path in _python_dirs()]
        binds += [(str(path), "--ro-bind") for path in readable]
        if writable is not None:
            binds.append((str(writable), "--bind"))
        made = {"/", "/tmp"}
        for path, kind in sorted(binds, key=lambda b: len(b[0])):  # parents before children
            # bubblewrap would create missing parents 0700 (root's): the sandbox's uid could
            # not reach what is bound below them
            parents = list(reversed(Path(path).parents))[1:]
            for parent in map(str, parents):
                if parent not in made and not any(_inside(parent, b) for b, _k in binds):
                    args += ["--perms", "0755", "--dir", parent]
                    made.add(parent)
            args += [kind, path, path]
        args += ["--chdir", home if (writable or work) else "/", "--"]
        if self.uid is not None:
            args += [
                "setpriv",
                f"--reuid={self.uid}",
                f"--regid={self.uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--",
            ]
        lim = self.limits
        args += [
            "prlimit",
            f"--as={lim.memory_bytes}",
            f"--nproc={lim.processes}",
            f"--nofile={lim.open_files}",
            f"--fsize={lim.file_bytes}",
            f"--cpu={lim.cpu_seconds}",
            "--core=0",
            "--",
        ]
        return args + list(argv)


@functools.lru_cache(maxsize=1)
def sandbox_problem() -> str | None:
    """Why grading cannot use its sandbox here, in French (what to install); None if it can.

    Checked once per process by running a real sandboxed Python that imports the course.
    """
    if not sys.platform.startswith("linux"):
        return (
            "Le bac à sable de la notation (bubblewrap) n'existe que sous Linux\u00a0: notez sur "
            "une machine Linux (Debian, Ubuntu…) où le paquet bubblewrap est installé."
        )
    tools = _TOOLS + (("setpriv",) if _is_root() else ())
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        packages = ["bubblewrap" if t == "bwrap" else "util-linux" for t in missing]
        return (
            f"Le bac à sable de la notation manque ({', '.join(missing)} introuvable)\u00a0: "
            f"installez le paquet {' et '.join(dict.fromkeys(packages))} "
            f"(sudo apt-get install {' '.join(dict.fromkeys(packages))} sous Debian ou Ubuntu)."
        )
    probe = Sandbox().command([sys.executable, "-I", "-c", "import course.app"])
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"Le bac à sable de la notation (bubblewrap) ne démarre pas\u00a0: {exc}."
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["sans message"])[-1]
        return (
            "bubblewrap est installé mais ne peut pas isoler la notation sur cette machine "
            f"({reason})\u00a0: les espaces de noms utilisateur y sont sans doute interdits "
            "(sysctl kernel.unprivileged_userns_clone, ou "
            "kernel.apparmor_restrict_unprivileged_userns sous Ubuntu). "
            "Voir grader/README.md, section «\u00a0Le bac à sable\u00a0»."
        )
    return None
