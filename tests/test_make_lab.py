"""`make lab`, the students' command, really serves the lessons in JupyterLab."""

import json
import os
import secrets
import urllib.request
from pathlib import Path

import pytest
from helpers import REPO, free_port, http_server

pytestmark = pytest.mark.slow  # nbgrader, kernels or the sandbox: not in make test-fast


def get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def test_make_lab_serves_the_student_notebooks(tmp_path: Path) -> None:
    """Served from notebooks/, with the extension that saves quizzes without their widget."""
    port, token = free_port(), secrets.token_hex(16)
    args = (
        f"--no-browser --ServerApp.ip=127.0.0.1 --port={port} --ServerApp.token={token} "
        f"--ServerApp.port_retries=0"
    )
    env = {
        **os.environ,
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    log, base = tmp_path / "lab.log", f"http://127.0.0.1:{port}"
    cmd = ["make", "--no-print-directory", "lab", f"LAB_ARGS={args}"]
    status = f"{base}/api/status?token={token}"
    with http_server(cmd, REPO, env, log, status, "make lab", timeout=90) as lab:
        listing = get_json(f"{base}/api/contents/lecons?token={token}")
        names = {entry["name"] for entry in listing["content"]}
        expected = {p.name for p in (REPO / "notebooks" / "lecons").glob("*.ipynb")}
        assert expected and expected <= names
        with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=10) as page:
            assert page.status == 200
        loaded = "course.save_hook\u00a0: les quiz sont enregistrés sans leur widget"
        assert loaded in log.read_text(errors="replace")
    try:
        os.killpg(lab.pid, 0)
        leftover = True
    except ProcessLookupError:
        leftover = False
    assert not leftover, "a process of make lab survived"
