"""Fixtures for the classroom hub tests: the shared course env, real Unix users, a running hub.

The course environment is built once per test run (the installer, from Debian's python3); each
module runs its own hub with its own users, and everything it started is stopped by its id and
every user removed, even when a test fails.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
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
from course_prefix import in_use  # noqa: E402
from helpers import REPO  # noqa: E402

# the hub's own modules (roster.py, kube_recipe.py...), importable as the hub imports them
sys.path.insert(0, str(HUB_DIR))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "recette(*names): the hub recipes a test runs (machine, tljh, kubernetes); ADMIN.md's "
        "table of tested claims is checked against it (test_recipes.py)",
    )


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


@pytest.fixture(scope="session")
def course_env(hub_requirements) -> Iterator[Path]:
    """The shared course environment, built by the shipped installer from Debian's python3:
    once per test run, even when two xdist workers run hub tests (the other worker's hubs must
    not see the template re-copied under them)."""
    with in_use() as prefix:
        yield prefix


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
