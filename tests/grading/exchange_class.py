"""A class on one machine with nbgrader's exchange between real Unix users (tests/grading):
an exchange folder students can reach, their accounts, and the commands each one runs."""

from __future__ import annotations

import functools
import inspect
import os
import secrets
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
from grading.samples import build_submission
from grading_course import course_key, generated_course, nbgrader
from helpers import REPO
from run_cache import built_once

from course.labo.tp_notebook import ANSWER_GRADE_ID

__all__ = [
    "Student",
    "answer_of",
    "exchange_root",
    "readable_course_env",
    "release",
    "released_copy",
    "sample_text",
    "tag",
    "unix_users",
]

sys.path.insert(0, str(REPO / "tests" / "hub"))
from classhub import unix_users  # noqa: E402
from course_prefix import installed  # noqa: E402

# A student's nbgrader: Debian's python3 (same 3.11) on the test venv's site-packages when any
# user can read them; otherwise (a clone in a private folder, as CI's may be) the course
# environment the hub installer builds from Debian's python3, the hub tests' (course_prefix).


def _readable_by_all(path: Path) -> bool:
    """`path` can be read by any user: every folder above it can be crossed."""
    if not path.stat().st_mode & stat.S_IROTH:
        return False
    return all(parent.stat().st_mode & stat.S_IXOTH for parent in path.parents)


def readable_course_env() -> Path:
    """The course environment any user can read: the hub tests' (course_prefix), installed
    once per run by the shipped installer from Debian's python3, whichever test asks first."""
    return installed() / "env"


def student_wrapper() -> str:
    """The image's wrapper (cours-singleuser), from a place a bare uid can read."""
    if _readable_by_all(WRAPPER):
        return str(WRAPPER)
    return str(readable_course_env() / "bin" / "cours-singleuser")


@functools.cache
def student_nbgrader() -> tuple[str, ...]:
    purelib = Path(sysconfig.get_paths()["purelib"])
    if _readable_by_all(purelib):
        return (
            "/usr/bin/python3",
            "-c",
            f"import sys; sys.path.insert(0, {str(purelib)!r}); "
            "from nbgrader.apps.nbgraderapp import main; sys.argv[0] = 'nbgrader'; "
            "sys.exit(main())",
        )
    return (str(readable_course_env() / "bin" / "python"), "-m", "nbgrader")


WRAPPER = REPO / "grader" / "hub" / "cours-singleuser"


def tag() -> str:
    return secrets.token_hex(2)


@contextmanager
def exchange_root() -> Iterator[Path]:
    """nbgrader's exchange as the hub's installer makes it (1777), in a folder others reach."""
    base = Path(tempfile.mkdtemp(prefix="echange-", dir="/tmp"))
    try:
        base.chmod(0o755)
        root = base / "exchange"
        root.mkdir()
        root.chmod(0o1777)
        yield root
    finally:
        shutil.rmtree(base, ignore_errors=True)


def release(grader: Path, exchange: Path) -> None:
    proc = nbgrader(grader, "release_assignment", "oublier", f"--Exchange.root={exchange}")
    assert proc.returncode == 0, proc.stdout + proc.stderr


COURSE_ID = "memoire-tuteur"  # the course's folder in the exchange (nbgrader_config.py)


def _release_once(folder: Path) -> None:
    """What ``released_copy`` copies: the course's folder of an exchange after stock
    ``nbgrader release_assignment oublier`` from a generated course, as it left it."""
    with exchange_root() as exchange:
        release(generated_course(folder / "cours"), exchange)
        shutil.copytree(exchange / COURSE_ID, folder / COURSE_ID, symlinks=True)
    shutil.rmtree(folder / "cours")


def released_copy(exchange: Path) -> None:
    """The TP released in `exchange` as ``release`` leaves it: a copy (same tree, same modes)
    of the run's one real release (run_cache), for the tests whose claims begin after it."""
    key = course_key(*map(inspect.getsource, (_release_once, release, exchange_root)))
    shutil.copytree(
        built_once("echange-publie", key, _release_once) / COURSE_ID,
        exchange / COURSE_ID,
        symlinks=True,
    )


@dataclass(frozen=True)
class Student:
    """Who runs a student's commands: a Unix account (runuser), or, as in a Kubernetes pod, a
    bare uid without passwd entry started through the image's wrapper (cours-singleuser), which
    names it after the hub user with nss_wrapper."""

    name: str
    home: Path
    prefix: tuple[str, ...]

    @classmethod
    def account(cls, name: str) -> Student:
        return cls(name, Path(os.path.expanduser(f"~{name}")), ("runuser", "-u", name, "--"))

    @classmethod
    def pod(cls, name: str, uid: int, base: Path) -> Student:
        home = base / f"volume-{name}"
        home.mkdir()
        os.chown(home, uid, 100)
        setpriv = ("setpriv", f"--reuid={uid}", "--regid=100", "--clear-groups")
        return cls(name, home, setpriv)

    @property
    def env(self) -> dict[str, str]:
        env = {"HOME": str(self.home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        if self.prefix[0] == "setpriv":
            env["JUPYTERHUB_USER"] = self.name
            # a pod's /tmp is its own: the wrapper's passwd entry (with the name) stays in the
            # pod's volume here, removed with it, never in this machine's /tmp
            env["TMPDIR"] = str(self.home)
        return env

    def run(self, *args: str) -> subprocess.CompletedProcess:
        """A command run by this student in their home, with a clean environment."""
        wrapper = [student_wrapper()] if self.prefix[0] == "setpriv" else []
        return subprocess.run(
            [*self.prefix, "env", "-i", *(f"{k}={v}" for k, v in self.env.items())]
            + wrapper
            + list(args),
            cwd=self.home,
            capture_output=True,
            text=True,
            timeout=300,
            stdin=subprocess.DEVNULL,
        )

    def submit(
        self, grader: Path, exchange: Path, sample: str, *extra: str, written: str | None = None
    ) -> subprocess.CompletedProcess:
        """Writes the sample answer (and `written`, the written answer) in
        ~/oublier/oublier.ipynb and runs nbgrader submit."""
        text = (REPO / "grader" / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
        release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
        nb = build_submission(release, text, written)
        folder = self.home / "oublier"
        folder.mkdir(exist_ok=True)
        nbformat.write(nb, folder / "oublier.ipynb")
        owner = (self.home.stat().st_uid, self.home.stat().st_gid)
        for path in (folder, folder / "oublier.ipynb"):
            os.chown(path, *owner)
        return self.run(
            *student_nbgrader(),
            "submit",
            "oublier",
            "--course=memoire-tuteur",
            f"--Exchange.root={exchange}",
            *extra,
        )


def answer_of(notebook: Path) -> str:
    """The source of the answer cell of a collected notebook."""
    nb = nbformat.read(notebook, as_version=4)
    (cell,) = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER_GRADE_ID
    ]
    return cell.source


def sample_text(sample: str) -> str:
    return (REPO / "grader" / "submissions" / f"{sample}.py").read_text(encoding="utf-8").rstrip()
