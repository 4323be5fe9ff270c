"""Fixtures for the classroom hub tests: the shared course env, real Unix users, a running hub.

The course environment is built once per test run (the installer, from Debian's python3); each
module runs its own hub with its own users, and everything it started is stopped by its id and
every user removed, even when a test fails.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from classhub import (  # noqa: E402
    COURSE_ID,
    HUB_DIR,
    INSTRUCTORS_GROUP,
    ClassHub,
    as_user,
    hub_settings,
    launch_hub,
    open_tempdir,
    unix_users,
    write_roster,
)
from helpers import REPO  # noqa: E402

# A test prefix, kept between runs (rebuilt only when pyproject.toml changes), like system deps.
PREFIX = Path(os.environ.get("COURSE_HUB_TEST_PREFIX", "/opt/cours-memoire-tuteur-test"))


@pytest.fixture(scope="session")
def hub_requirements() -> None:
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("le test du hub crée de vrais utilisateurs Unix : il faut être root sous Linux")
    tools = ("useradd", "userdel", "runuser", "gpasswd", "setpriv", "unshare", "nsenter")
    missing = [tool for tool in tools if not shutil.which(tool)]
    assert not missing, f"outils système manquants : {missing}"
    if not shutil.which("configurable-http-proxy"):
        # the hub's proxy comes from npm; .ci/system-deps installs it (and skips what is there)
        subprocess.run(["bash", str(REPO / ".ci" / "system-deps")], timeout=900, check=False)
    assert shutil.which("configurable-http-proxy"), (
        "configurable-http-proxy manque : lancer `bash .ci/system-deps` (make system-deps)"
    )


# Beside the prefix: a lock every session using the prefix holds (shared) while it runs, a lock
# for installing, and the id of the test run that last installed it. Two xdist workers running
# hub tests at once install it once, and the last one to finish removes the instructors' group.
SESSIONS_LOCK = PREFIX.with_name(PREFIX.name + ".sessions")
INSTALL_LOCK = PREFIX.with_name(PREFIX.name + ".install")
INSTALLED_FOR = PREFIX.with_name(PREFIX.name + ".run")


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


@pytest.fixture(scope="session")
def course_env(hub_requirements) -> Iterator[Path]:
    """The shared course environment, built by the shipped installer from Debian's python3:
    once per test run, even when two xdist workers run hub tests (the other worker's hubs must
    not see the template re-copied under them)."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex
    SESSIONS_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(SESSIONS_LOCK, "a") as sessions:
        # in use by this session until it ends (waits only while a last session tidies up)
        fcntl.flock(sessions, fcntl.LOCK_SH)
        with open(INSTALL_LOCK, "a") as install:
            fcntl.flock(install, fcntl.LOCK_EX)  # one install at a time; the others wait
            if not INSTALLED_FOR.exists() or INSTALLED_FOR.read_text() != run:
                _install_course_env()
                INSTALLED_FOR.write_text(run)
        try:
            yield PREFIX
        finally:
            try:  # the last session using the prefix removes the group (others still need it)
                fcntl.flock(sessions, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pass
            else:
                subprocess.run(["groupdel", INSTRUCTORS_GROUP], capture_output=True)
                INSTALLED_FOR.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def hub_workdir(hub_requirements) -> Iterator[Path]:
    """Hub database, logs, roster and the exchange; traversable by the test users."""
    path = open_tempdir("cours-hub-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def install_exchange(exchange: Path, owner: str) -> subprocess.CompletedProcess[str]:
    """The shipped installer's exchange step: the course's folder owned by `owner`."""
    env = {
        **os.environ,
        "COURSE_HUB_EXCHANGE": str(exchange),
        "COURSE_ID": COURSE_ID,
        "COURSE_HUB_EXCHANGE_OWNER": owner,
        "COURSE_HUB_INSTRUCTORS_GROUP": INSTRUCTORS_GROUP,
    }
    return subprocess.run(
        ["bash", str(HUB_DIR / "install-course-env.sh"), "--exchange-only"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def scratch(hub_requirements) -> Iterator:
    """Fresh folders every user may traverse (`scratch("prefix-")`), removed after the test."""
    made: list[Path] = []

    def make(prefix: str) -> Path:
        made.append(open_tempdir(prefix))
        return made[-1]

    yield make
    for path in made:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def exchange_dir(hub_workdir: Path, class_users: dict[str, str]) -> Path:
    """The exchange as the installer makes it, the course's folder given to the instructor."""
    made = install_exchange(hub_workdir / "exchange", class_users["prof"])
    assert made.returncode == 0, made.stderr
    return hub_workdir / "exchange"


@pytest.fixture(scope="module")
def class_users(hub_requirements) -> Iterator[dict[str, str]]:
    """One instructor and three students, real Unix accounts, removed at the end."""
    tag = secrets.token_hex(2)
    names = {
        "prof": f"hubt{tag}prof",
        "complet": f"hubt{tag}ana",
        "partiel": f"hubt{tag}bob",
        "casse": f"hubt{tag}cam",
    }
    with unix_users(list(names.values())):
        yield names


@pytest.fixture(scope="module")
def class_hub(
    course_env: Path, class_users: dict[str, str], hub_workdir: Path, exchange_dir: Path
) -> Iterator[ClassHub]:
    """The shipped jupyterhub_config.py with the class's roster, on 127.0.0.1 free ports."""
    roster = write_roster(
        hub_workdir / "classe.csv",
        {name: "instructor" if role == "prof" else "student" for role, name in class_users.items()},
    )
    with launch_hub(
        prefix=course_env,
        workdir=hub_workdir,
        roster=roster,
        exchange=exchange_dir,
        settings=hub_settings(),
        hub_config=HUB_DIR / "jupyterhub_config.py",
    ) as hub:
        yield hub


@pytest.fixture(scope="module")
def run_as():
    """Run a command as a Unix user (what that user could type in a terminal)."""
    return as_user
