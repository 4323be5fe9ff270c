"""Formgrader from JupyterLab: a real server started the way `make formgrader` does (in
grader/, serving the course root) lists the lab, and nbgrader's JupyterLab extension is there."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
BIN = Path(sys.executable).parent
TOKEN = "jeton-de-test-formgrader"


def _get(url: str) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(req, timeout=20) as resp:  # noqa: S310 - localhost only
        return resp.status, resp.read().decode()


@pytest.fixture
def formgrader_url(tmp_path, repo_root, run_nbgrader):
    root = tmp_path / "cours"
    shutil.copytree(repo_root / "solutions" / "oublier", root / "solutions" / "oublier")
    (root / "grader").mkdir()
    shutil.copy(repo_root / "grader" / "nbgrader_config.py", root / "grader")
    assert run_nbgrader(root / "grader", "generate_assignment", "oublier").returncode == 0
    port = free_port()
    env = dict(
        os.environ,
        PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}",
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
    )
    log = open(tmp_path / "lab.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            str(BIN / "jupyter"),
            "lab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={root}",
        ],
        cwd=root / "grader",
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if _get(f"{url}/api/status")[0] == 200:
                    break
            except OSError:
                pass
            assert proc.poll() is None, (tmp_path / "lab.log").read_text()
            assert time.monotonic() < deadline, "JupyterLab n'a pas démarré"
            time.sleep(1)
        yield url
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def test_formgrader_lists_the_lab_and_the_extension_is_installed(formgrader_url):
    status, body = _get(f"{formgrader_url}/formgrader/api/assignments")
    assert status == 200
    assignments = {a["name"]: a for a in json.loads(body)}
    assert "oublier" in assignments
    assert assignments["oublier"]["max_score"] == 10
    status, page = _get(f"{formgrader_url}/formgrader")
    assert status == 200 and "nbgrader" in page.lower()
    status, page = _get(f"{formgrader_url}/lab")  # JupyterLab's page config lists its extensions
    assert status == 200 and '"name": "@jupyter/nbgrader"' in page
