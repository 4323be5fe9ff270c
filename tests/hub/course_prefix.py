"""The course environment the shipped installer builds from Debian's python3, shared by every
test that needs one any user can read: the hub tests (their single-user servers run from it) and
the grading tests run as an ordinary user. Installed once per test run, whichever xdist worker
asks first; kept between runs at ``PREFIX`` and rebuilt by the installer when the course changes.
"""

from __future__ import annotations

import fcntl
import functools
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from classhub import HUB_DIR, INSTRUCTORS_GROUP, open_tempdir

__all__ = ["PREFIX", "in_use", "installed", "release"]

# A test prefix, kept between runs (rebuilt only when the course changes), like system deps.
PREFIX = Path(os.environ.get("COURSE_HUB_TEST_PREFIX", "/opt/cours-memoire-tuteur-test"))

# Beside the prefix: a lock every session using the prefix holds (shared) while it runs, a lock
# for installing, and the id of the test run that last installed it. Two xdist workers running
# hub tests at once install it once, and the last one to finish removes the instructors' group.
SESSIONS_LOCK = PREFIX.with_name(PREFIX.name + ".sessions")
INSTALL_LOCK = PREFIX.with_name(PREFIX.name + ".install")
INSTALLED_FOR = PREFIX.with_name(PREFIX.name + ".run")


@functools.cache
def _run_id() -> str:
    """This test run (every xdist worker of it); a run without xdist is this process."""
    return os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex


def _install_course_env() -> None:
    """The shipped installer on the test prefix, from Debian's python3."""
    import jupyterhub

    scratch = open_tempdir("cours-hub-env-")
    env = {
        **os.environ,
        "COURSE_HUB_PREFIX": str(PREFIX),
        "COURSE_HUB_EXCHANGE": str(scratch / "exchange"),
        "COURSE_HUB_INSTRUCTORS_GROUP": INSTRUCTORS_GROUP,
        # the single-user servers must speak the same JupyterHub version as the hub
        "JUPYTERHUB_SPEC": f"jupyterhub=={jupyterhub.__version__}",
    }
    try:
        result = subprocess.run(
            ["bash", str(HUB_DIR / "install-course-env.sh")],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _install_for_this_run() -> None:
    """Install the prefix unless this run already did (whichever worker asks first; the others
    wait)."""
    PREFIX.parent.mkdir(parents=True, exist_ok=True)
    with open(INSTALL_LOCK, "a") as install:
        fcntl.flock(install, fcntl.LOCK_EX)  # one install at a time; the others wait
        if not INSTALLED_FOR.exists() or INSTALLED_FOR.read_text() != _run_id():
            _install_course_env()
            INSTALLED_FOR.write_text(_run_id())


# this process's use of the prefix outside a hub session (grading tests), until release()
_HELD = ExitStack()
_held: list[Path] = []


def installed() -> Path:
    """The prefix, installed for this run and in use by this process until :func:`release`
    (the root conftest calls it when the test session ends): the last hub session then cannot
    take it for unused, remove its group and mark it for a second install."""
    if not _held:
        _held.append(_HELD.enter_context(in_use()))
    return _held[0]


def release() -> None:
    """End this process's use of the prefix started by :func:`installed` (if any)."""
    _held.clear()
    _HELD.close()


@contextmanager
def in_use() -> Iterator[Path]:
    """The prefix, installed for this run and in use until the block ends; the last session
    using it removes the instructors' group (the others still need it)."""
    SESSIONS_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(SESSIONS_LOCK, "a") as sessions:
        # in use by this session until it ends (waits only while a last session tidies up)
        fcntl.flock(sessions, fcntl.LOCK_SH)
        _install_for_this_run()
        try:
            yield PREFIX
        finally:
            try:
                fcntl.flock(sessions, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                subprocess.run(["groupdel", INSTRUCTORS_GROUP], capture_output=True)
                INSTALLED_FOR.unlink(missing_ok=True)
