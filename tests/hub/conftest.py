"""Fixtures for the classroom hub tests: the shared course env, real Unix users, a running hub.

Everything is module-scoped: one hub serves the whole class cycle, and everything it started is
stopped by its id and every user removed, even when a test fails.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).parent))
from classhub import ClassHub, as_user, create_user, free_port, remove_user  # noqa: E402
from helpers import REPO  # noqa: E402

HUB_DIR = REPO / "grader" / "hub"
# A test prefix, kept between runs (rebuilt only when pyproject.toml changes), like system deps.
PREFIX = Path(os.environ.get("COURSE_HUB_TEST_PREFIX", "/opt/cours-memoire-tuteur-test"))
COURSE_ID = "memoire-tuteur"
PASSWORD = "mot-de-passe-de-la-classe"


@pytest.fixture(scope="module")
def hub_requirements() -> None:
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("le test du hub crée de vrais utilisateurs Unix : il faut être root sous Linux")
    missing = [tool for tool in ("useradd", "userdel", "runuser") if not shutil.which(tool)]
    assert not missing, f"outils système manquants : {missing}"
    if not shutil.which("configurable-http-proxy"):
        # the hub's proxy comes from npm; .ci/system-deps installs it (and skips what is there)
        subprocess.run(["bash", str(REPO / ".ci" / "system-deps")], timeout=900, check=False)
    assert shutil.which("configurable-http-proxy"), (
        "configurable-http-proxy manque : lancer `bash .ci/system-deps` (make system-deps)"
    )


@pytest.fixture(scope="module")
def hub_workdir(hub_requirements) -> Iterator[Path]:
    """Hub database, logs and the exchange; traversable by the test users."""
    path = Path(tempfile.mkdtemp(prefix="cours-hub-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def exchange_dir(hub_workdir: Path) -> Path:
    return hub_workdir / "exchange"


@pytest.fixture(scope="module")
def course_env(hub_requirements, exchange_dir: Path) -> Path:
    """The shared course environment, built by the shipped installer from Debian's python3."""
    import jupyterhub

    env = {
        **os.environ,
        "COURSE_HUB_PREFIX": str(PREFIX),
        "COURSE_HUB_EXCHANGE": str(exchange_dir),
        # the single-user servers must speak the same JupyterHub version as the hub
        "JUPYTERHUB_SPEC": f"jupyterhub=={jupyterhub.__version__}",
    }
    result = subprocess.run(
        ["bash", str(HUB_DIR / "install-course-env.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return PREFIX


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
    created: list[str] = []
    try:
        for name in names.values():
            create_user(name)
            created.append(name)
        yield names
    finally:
        for name in created:
            remove_user(name)


@pytest.fixture(scope="module")
def class_hub(
    course_env: Path, class_users: dict[str, str], hub_workdir: Path, exchange_dir: Path
) -> Iterator[ClassHub]:
    """The shipped jupyterhub_config.py, run by the env's jupyterhub on 127.0.0.1 free ports.

    The test overlay only changes what a test must: ports, DummyAuthenticator with a password,
    a database in the temp folder, and an admin service token to drive the REST API.
    """
    port, hub_port, proxy_port = free_port(), free_port(), free_port()
    admin_token = secrets.token_hex(32)
    overlay = hub_workdir / "jupyterhub_test_config.py"
    overlay.write_text(
        f"""
c = get_config()  # noqa
load_subconfig({str(HUB_DIR / "jupyterhub_config.py")!r})
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {PASSWORD!r}
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_port}"
c.ConfigurableHTTPProxy.pid_file = {str(hub_workdir / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{hub_workdir / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(hub_workdir / "cookie_secret")!r}
c.JupyterHub.cleanup_servers = True
c.JupyterHub.services = [{{"name": "test-admin", "api_token": {admin_token!r}}}]
c.JupyterHub.load_roles = [{{
    "name": "test-admin",
    "scopes": ["admin:users", "admin:servers", "admin:server_state", "tokens", "admin:groups",
               "read:hub"],
    "services": ["test-admin"],
}}]
"""
    )
    env = {
        "PATH": f"{course_env / 'env' / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": str(hub_workdir),
        "COURSE_HUB_PREFIX": str(course_env),
        "COURSE_HUB_EXCHANGE": str(exchange_dir),
        "COURSE_ID": COURSE_ID,
        "COURSE_INSTRUCTORS": class_users["prof"],
        "COURSE_STUDENTS": ",".join(class_users[k] for k in ("complet", "partiel", "casse")),
    }
    log_path = hub_workdir / "jupyterhub.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [str(course_env / "env" / "bin" / "jupyterhub"), "-f", str(overlay)],
            cwd=hub_workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    hub = ClassHub(
        url=f"http://127.0.0.1:{port}",
        admin_token=admin_token,
        process=process,
        log_path=log_path,
        proxy_pid_file=hub_workdir / "proxy.pid",
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, f"le hub ne démarre pas :\n{hub.log_tail()}"
            try:
                if hub.api("GET", "/", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, f"hub injoignable :\n{hub.log_tail()}"
            time.sleep(0.5)
        yield hub
    finally:
        left = hub.stop()
        assert not left, f"processus encore vivants : {left}"


@pytest.fixture(scope="module")
def run_as():
    """Run a command as a Unix user (what that user could type in a terminal)."""
    return as_user
