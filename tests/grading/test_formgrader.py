"""`make formgrader` from a fresh clone: JupyterLab for the instructor starts as root too
(`--allow-root` when uid 0), honours LAB_ARGS, lists the TP in formgrader and keeps the
instructor's view (nbgrader's formgrader plugin enabled in JupyterLab)."""

from __future__ import annotations

import json
import os
import re
import urllib.request

import pytest
from grading_course import VENV, clone_head, nbgrader
from helpers import free_port, http_server, tp_points

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]
TOKEN = "jeton-de-test-formgrader"


def _get(url: str) -> tuple[int, str]:
    req = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(req, timeout=20) as resp:  # noqa: S310 - localhost only
        return resp.status, resp.read().decode()


@pytest.fixture
def formgrader_url(tmp_path):
    clone = clone_head(tmp_path / "clone")
    # a clone has notebooks/oublier already: without --force nbgrader would skip it and leave
    # the gradebook without the assignment (`make grade` adds it; formgrader's Generate too)
    assert nbgrader(clone / "grader", "generate_assignment", "oublier", "--force").returncode == 0
    port = free_port()
    lab_args = f"--no-browser --ip=127.0.0.1 --port={port} --IdentityProvider.token={TOKEN}"
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    cmd = [
        "make",
        "--no-print-directory",
        f"VENV={VENV}",
        f"--old-file={VENV / '.stamp-runtime'}",
        "formgrader",
        f"LAB_ARGS={lab_args}",
    ]
    url, log = f"http://127.0.0.1:{port}", tmp_path / "formgrader.log"
    headers = {"Authorization": f"token {TOKEN}"}
    with http_server(cmd, clone, env, log, f"{url}/api/status", "JupyterLab", headers):
        yield url, log


def test_make_formgrader_lists_the_tp_for_the_instructor(formgrader_url):
    url, log = formgrader_url
    echoed = log.read_text().split("[", 1)[0]  # make's echo of the command, before the log
    assert "/jupyter' lab" in echoed and "--IdentityProvider.token=" in echoed  # LAB_ARGS
    assert ("--allow-root" in echoed) == (os.geteuid() == 0)
    status, body = _get(f"{url}/formgrader/api/assignments")
    assert status == 200
    assignments = {a["name"]: a for a in json.loads(body)}
    assert assignments["oublier"]["max_score"] == sum(tp_points())  # tests, and by hand
    status, page = _get(f"{url}/formgrader")
    assert status == 200 and "nbgrader" in page.lower()
    status, page = _get(f"{url}/lab")  # JupyterLab's page config lists its extensions
    assert status == 200 and '"name": "@jupyter/nbgrader"' in page
    data = re.search(
        r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S
    )
    disabled = json.loads(data[1]).get("disabledExtensions", [])
    assert "@jupyter/nbgrader:formgrader" not in disabled and "@jupyter/nbgrader" not in disabled
