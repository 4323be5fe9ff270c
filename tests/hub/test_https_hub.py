"""HTTPS on one machine: the hub serves TLS itself from COURSE_HUB_TLS_CERT / COURSE_HUB_TLS_KEY.

PAM logins send the Unix password: over plain HTTP anyone on the network reads it. The test
makes a certificate for 127.0.0.1 (as Let's Encrypt would for the hub's name), starts the shipped
configuration with it and logs in over HTTPS; plain HTTP gets no hub.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from classhub import (
    HUB_DIR,
    PASSWORD,
    ClassHub,
    hub_settings,
    launch_hub,
    make_exchange,
    open_tempdir,
    write_roster,
)

pytestmark = [pytest.mark.hub, pytest.mark.timeout(300), pytest.mark.recette("machine")]


@pytest.fixture(scope="module")
def https_hub(course_env: Path) -> Iterator[ClassHub]:
    work = open_tempdir("cours-hub-https-")
    cert, key = work / "fullchain.pem", work / "privkey.pem"
    made = subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    key.chmod(0o600)
    try:
        with launch_hub(
            prefix=course_env,
            workdir=work,
            roster=write_roster(work / "classe.csv", {"ana": "student"}),
            exchange=make_exchange(work / "exchange"),
            settings=hub_settings(COURSE_HUB_CULL_TIMEOUT="0"),
            hub_config=HUB_DIR / "jupyterhub_config.py",
            tls=(cert, key),
        ) as hub:
            yield hub
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_login_travels_over_https_only(https_hub: ClassHub):
    assert https_hub.url.startswith("https://")
    trust = https_hub.verify  # the hub's certificate, checked (never verify=False)
    with requests.Session() as browser:
        page = browser.get(f"{https_hub.url}/hub/login", timeout=30, verify=trust)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        form = {"username": "ana", "password": PASSWORD, "_xsrf": xsrf.group(1) if xsrf else ""}
        login = browser.post(
            f"{https_hub.url}/hub/login",
            data=form,
            allow_redirects=False,
            timeout=30,
            verify=trust,
        )
        assert login.status_code == 302, login.status_code
        cookies = [c for c in browser.cookies if c.name.startswith("jupyterhub-hub-login")]
        assert cookies and all(c.secure for c in cookies)  # never sent back over HTTP
    # the same port in clear: no hub page, no login form
    plain = https_hub.url.replace("https://", "http://")
    try:
        answer = requests.get(f"{plain}/hub/login", timeout=30)
    except requests.ConnectionError:
        return
    assert answer.status_code >= 400 and "password" not in answer.text.lower()
