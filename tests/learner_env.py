"""The learner's environment: a venv made by `make setup` (what `make lab` installs and nothing
else: requirements/lab.txt and the course), in which the lessons run and the TPs are graded.

The test environment holds more (playwright, the hub, pytest...): a package the course needs and
only a test tool brings would pass there and fail for every learner (greenlet did, issue 31).
Built once per content and checkout, whichever test process asks first (a file lock), with
`make setup VENV=...` itself, so the Makefile's own install is what is tested; kept between runs
in the system's temporary folder (uv makes it in about a minute from a warm cache, most of it
compiling bytecode) and rebuilt, the older one removed, when what it is made from changes. Its
kernel is named by a kernelspec of its own, outside the venv.

It is made with the newest CPython this machine has of those the README names (a learner on a
new Mac has 3.13), not the test set's own: the lessons and the TPs' grading then run on another
Python than the tools, as they do for that learner. COURSE_LEARNER_PYTHON names another one.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from helpers import REPO

__all__ = [
    "KERNEL_NAME",
    "LearnerEnv",
    "cell_answer",
    "kernels_for",
    "learner_env",
    "learner_kernel",
    "learner_python",
    "run_cell",
]

KERNEL_NAME = "cours-lab"
# what `make setup` installs from (its target's prerequisites): a change rebuilds the venv
INPUTS = ("requirements/lab.txt", "pyproject.toml", "Makefile")
# the README's Pythons, newest first (tests/test_wheel_matrix.py checks their wheels)
NEWEST_FIRST = ("3.14", "3.13", "3.12")


@dataclass(frozen=True)
class LearnerEnv:
    venv: Path
    kernels: Path  # a folder of kernelspecs holding KERNEL_NAME, this venv's python

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def bin(self) -> Path:
        return self.venv / "bin"


@functools.cache
def learner_python() -> Path:
    """The interpreter the learner's venv is made from: COURSE_LEARNER_PYTHON, else the newest
    of NEWEST_FIRST on PATH or in pyenv's folder, else the one the test set was made from (a
    venv's python would nest venvs)."""
    if chosen := os.environ.get("COURSE_LEARNER_PYTHON"):
        return Path(chosen)
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for version in NEWEST_FIRST:
        found = [shutil.which(f"python{version}")]
        found += sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True)
        for python in filter(None, found):
            # a pyenv shim of a version that is not selected answers with an error
            asked = [python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"]
            done = subprocess.run(asked, capture_output=True, text=True, timeout=60)
            if done.returncode == 0 and done.stdout.strip() == version:
                return Path(python)
    return Path(getattr(sys, "_base_executable", sys.executable))


def _key() -> tuple[str, str]:
    """(this checkout, the content `make setup` installs from and the Python it runs on)."""
    content = hashlib.sha256(str(learner_python()).encode())
    for name in INPUTS:
        content.update((REPO / name).read_bytes())
    return hashlib.sha256(str(REPO).encode()).hexdigest()[:8], content.hexdigest()[:12]


def _uv() -> str | None:
    """The test set-up's uv (requirements/uv.txt), else the one on PATH: without it, the
    Makefile would fetch uv from the registry into the new venv."""
    local = Path(sys.executable).parent / "uv"
    return str(local) if local.exists() else shutil.which("uv")


def _build(base: Path) -> None:
    venv = base / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    args = ["make", "--no-print-directory", "-C", str(REPO), "setup", f"VENV={venv}"]
    args.append(f"PYTHON={learner_python()}")
    if uv := _uv():
        args.append(f"UV={uv}")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    _write_kernelspec(base / "kernels", venv / "bin" / "python")


def _write_kernelspec(folder: Path, python: Path) -> None:
    spec = folder / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": f"Python ({python})", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")


@functools.cache
def kernels_for(python: Path) -> Path:
    """A folder of kernelspecs whose KERNEL_NAME runs ``python`` (another environment's kernel:
    the hub's), removed when this process ends."""
    folder = Path(tempfile.mkdtemp(prefix="cours-noyau-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    _write_kernelspec(folder, python)
    return folder


def _remove_orphans(parent: Path) -> None:
    """The venvs of checkouts that are gone: every fresh clone's run leaves one (200 to 740 MB
    in the machine's temporary folder, 29 of them on a developer's machine in a day)."""
    for other in parent.glob("cours-lab-env-*"):
        try:
            if Path((other / "checkout").read_text(encoding="utf-8")).is_dir():
                continue
            lock = open(other / ".verrou", "a")  # noqa: SIM115 (held while removing)
        except OSError:  # an older venv without its checkout's name, or someone else's
            continue
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # being built
                continue
            shutil.rmtree(other, ignore_errors=True)


@functools.cache
def learner_env() -> LearnerEnv:
    """The venv `make setup` makes from this checkout, built if need be (once for every test
    process of the machine: the others wait on its lock)."""
    checkout, content = _key()
    base = Path(tempfile.gettempdir()) / f"cours-lab-env-{checkout}-{content}"
    base.mkdir(mode=0o755, exist_ok=True)
    with open(base / ".verrou", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "fait").exists():
            # this checkout's venvs of an older content (about 740 MB each)
            for old in base.parent.glob(f"cours-lab-env-{checkout}-*"):
                if old != base:
                    shutil.rmtree(old, ignore_errors=True)
            _remove_orphans(base.parent)
            _build(base)
            (base / "checkout").write_text(str(REPO), encoding="utf-8")
            (base / "fait").write_text("ok\n", encoding="utf-8")
    return LearnerEnv(venv=base / "venv", kernels=base / "kernels")


@contextmanager
def learner_kernel(folder: Path):
    """A kernel of the learner's venv (what `make lab` installs), started in `folder`: its
    manager and a client whose channels are open."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = folder / "noyaux" / "eleve"
    spec.mkdir(parents=True)
    argv = [str(learner_env().python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "language": "python"}))
    km = KernelManager(
        kernel_name="eleve", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)])
    )
    km.start_kernel(cwd=str(folder))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run_cell(kc, code: str) -> tuple[dict, str, list[str]]:
    """Run `code` as a cell: (the reply's content, what it printed, the error lines shown)."""
    return cell_answer(kc, kc.execute(code), 120)


def cell_answer(kc, msg_id: str, reply_timeout: float) -> tuple[dict, str, list[str]]:
    """The kernel's answer to the cell `msg_id`, as `run_cell` gives it."""
    deadline = time.monotonic() + reply_timeout
    while True:  # a late reply to an earlier request goes first: wait_for_ready asks again
        # when the kernel is slow to answer (a busy machine), and only reads one reply
        reply = kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.1))
        if reply["parent_header"].get("msg_id") == msg_id:
            break
        assert reply["msg_type"] == "kernel_info_reply", reply["msg_type"]
    printed, shown = [], []
    while True:
        msg = kc.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            shown = msg["content"]["traceback"]
        elif msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return reply["content"], "".join(printed), shown
