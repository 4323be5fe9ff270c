"""No port a classmate can take: the hub routes a student only to a port that student holds.

Each server has a fixed port on 127.0.0.1 (the class rush showed JupyterHub's random ports
colliding), so a classmate knows it and can bind it first. A real hub, two real Unix users:
bob listens on ana's port with a web server of his own; ana's start is refused with the port
and bob's uid named, and none of her requests reaches bob; once bob is gone ana starts and the
port is hers. Also: without HTTPS the hub listens on 127.0.0.1 only (a reverse proxy in front).
"""

from __future__ import annotations

import os
import pwd
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import psutil
import pytest
from classhub import hub_settings, launch_hub, unix_users, write_roster
from conftest import HUB_DIR
from helpers import free_port, stop_pids

pytestmark = [pytest.mark.hub, pytest.mark.recette("machine")]


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[str, str]]:
    tag = secrets.token_hex(2)
    names = (f"prt{tag}ana", f"prt{tag}bob")
    with unix_users(list(names)):
        yield names


def _listening_port(pid: int) -> int:
    (port,) = {
        c.laddr.port
        for c in psutil.Process(pid).net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN
    }
    return port


def _listeners(port: int) -> set[int]:
    return {
        c.pid
        for c in psutil.net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid
    }


def test_a_classmate_on_the_port_is_refused(course_env, pair, scratch):
    ana, bob = pair
    workdir = scratch("cours-hub-ports-")
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=write_roster(workdir / "classe.csv", {ana: "student", bob: "student"}),
        exchange=workdir / "exchange",
        settings=hub_settings(COURSE_HUB_CULL_TIMEOUT="0"),
        hub_config=HUB_DIR / "jupyterhub_config.py",
    ) as hub:
        hub.start_server(ana)
        hub.wait_ready(ana)
        port = _listening_port(hub.server_pids.pop(ana))
        assert hub.api("DELETE", f"/users/{ana}/server").status_code in (202, 204)
        hub.wait_stopped(ana)  # the port is free a moment before the hub's stop completes
        deadline = time.monotonic() + 60
        while _listeners(port):
            assert time.monotonic() < deadline, "le port d'ana reste occupé"
            time.sleep(0.5)

        # bob takes ana's port first, with a web server that would log any request
        squatter = subprocess.Popen(
            ["runuser", "-u", bob, "--", "python3", "-m", "http.server", str(port)]
            + ["--bind", "127.0.0.1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd="/tmp",
        )
        try:
            while not _listeners(port):
                assert squatter.poll() is None and time.monotonic() < deadline + 30
                time.sleep(0.2)
            # refused at once (500: the start raised) or after the hub's 10 s wait (202)
            refused = hub.api("POST", f"/users/{ana}/server")
            assert refused.status_code in (202, 500), (refused.status_code, refused.text)
            deadline = time.monotonic() + 120
            while True:
                model = hub.api("GET", f"/users/{ana}").json()
                if not model["pending"]:
                    break
                assert time.monotonic() < deadline, hub.log_tail()
                time.sleep(0.5)
            assert not model["servers"], model  # no server, no route to bob
            bob_uid = pwd.getpwnam(bob).pw_uid
            assert f"déjà pris par l'uid {bob_uid}" in hub.log_tail(200)
            reached = hub.server(ana, "GET", "/api/status")
            assert reached.status_code != 200 or "Directory listing" not in reached.text
        finally:
            stop_pids([squatter.pid], grace=5)
            output = squatter.communicate(timeout=10)[0].decode(errors="replace")
        assert "GET " not in output, output  # not one of ana's requests reached bob

        # bob gone: ana's server starts on her port, held by her uid
        hub.start_server(ana)
        hub.wait_ready(ana)
        holders = {psutil.Process(pid).uids().real for pid in _listeners(port)}
        assert holders == {pwd.getpwnam(ana).pw_uid}, holders


def test_starting_servers_share_one_reading_of_the_socket_tables():
    """A reading of the kernel's socket tables walks its whole TCP hash table: a class's
    starting servers wait on one shared reading, and each decides on a reading of now."""
    sys.path.insert(0, str(HUB_DIR))
    from verified_spawner import SHARED_READING_AGE, listener_uids

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", free_port()))
        sock.listen()
        port = sock.getsockname()[1]
        assert listener_uids(port) == {os.geteuid()}  # read now: it listens
    # closed: the shared reading (taken above) still shows it, a reading of now does not
    assert listener_uids(port, max_age=3600) == {os.geteuid()}
    assert listener_uids(port) == set()
    assert listener_uids(port, max_age=3600) == set()  # the reading of now is shared in turn
    assert 0 < SHARED_READING_AGE <= 1  # a squatter is seen within a second


@pytest.fixture(scope="module")
def grading_staff() -> Iterator[dict[str, str]]:
    tag = secrets.token_hex(2)
    names = {key: f"prt{tag}{key}" for key in ("prof", "grader", "bob")}
    with unix_users(list(names.values())):
        yield names


def _squat(name: str, port: int) -> subprocess.Popen:
    """`name` serves 127.0.0.1:`port` with a web server that logs every request line."""
    squatter = subprocess.Popen(
        ["runuser", "-u", name, "--", "python3", "-u", "-m", "http.server", str(port)]
        + ["--bind", "127.0.0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd="/tmp",
    )
    deadline = time.monotonic() + 30
    while not _listeners(port):
        assert squatter.poll() is None and time.monotonic() < deadline, "le squatteur n'écoute pas"
        time.sleep(0.2)
    return squatter


def _end(squatter: subprocess.Popen) -> str:
    stop_pids([squatter.pid], grace=5)
    return squatter.communicate(timeout=10)[0].decode(errors="replace")


def test_a_student_on_the_formgraders_port_receives_no_request(course_env, grading_staff, scratch):
    """Issue 36.4: the shared formgrader's fixed port (a managed service) is owner-checked too.
    bob binds it before the hub starts, then again after the formgrader stops: the hub routes
    nothing to him and says so in its log; the port back in the grading account's hands, the
    instructor reaches the formgrader."""
    import requests
    from classhub import COURSE_ID

    prof, grader, bob = grading_staff["prof"], grading_staff["grader"], grading_staff["bob"]
    bob_uid, grader_uid = pwd.getpwnam(bob).pw_uid, pwd.getpwnam(grader).pw_uid
    port = free_port()
    workdir = scratch("cours-hub-grader-port-")
    marker = secrets.token_hex(8)
    squatter = _squat(bob, port)
    # positive control: bob's server logs what reaches it
    assert requests.get(f"http://127.0.0.1:{port}/?temoin={marker}", timeout=10).status_code
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=write_roster(workdir / "classe.csv", {prof: "instructor", bob: "student"}),
        exchange=workdir / "exchange",
        settings=hub_settings(
            COURSE_HUB_CULL_TIMEOUT="0",
            COURSE_HUB_GRADER=grader,
            COURSE_HUB_GRADER_PORT=str(port),
        ),
        hub_config=HUB_DIR / "jupyterhub_config.py",
    ) as hub:
        token = {"Authorization": f"token {hub.token_for(prof)}"}
        service = f"{hub.url}/services/{COURSE_ID}"

        def instructor_requests(tag: str) -> list[requests.Response]:
            answers = []
            for _ in range(3):  # over three of the hub's checks
                url = f"{service}/api/status?{tag}={marker}"
                answers.append(requests.get(url, headers=token, timeout=60))
                time.sleep(1)
            return answers

        try:
            refused = f"le port {port} est tenu par l'uid {bob_uid}, pas par {grader}"
            deadline = time.monotonic() + 60
            while refused not in hub.log_tail(400):
                assert time.monotonic() < deadline, hub.log_tail(80)
                time.sleep(0.5)
            for answer in instructor_requests("avant"):
                assert answer.status_code != 200, answer.text  # no formgrader, and not bob's
        finally:
            seen = _end(squatter)
        assert f"temoin={marker}" in seen, seen  # the control reached bob
        assert f"avant={marker}" not in seen, seen  # the instructor's requests did not

        # bob gone: the hub restarts the formgrader (it could not bind), the port is its own,
        # the route comes back
        def formgrader_pids() -> set[int]:
            return {p for p in _listeners(port) if psutil.Process(p).uids().real == grader_uid}

        deadline = time.monotonic() + 180
        while (
            not formgrader_pids()
            or requests.get(f"{service}/api/status", headers=token, timeout=60).status_code != 200
        ):
            assert time.monotonic() < deadline, hub.log_tail(80)
            time.sleep(1)

        # the formgrader stops (a crash): bob binds the freed port at once
        stop_pids(sorted(formgrader_pids()), grace=5)
        squatter = _squat(bob, port)
        try:
            time.sleep(2.5)  # the hub looks every second
            for answer in instructor_requests("apres"):
                assert answer.status_code != 200, answer.text
        finally:
            seen = _end(squatter)
        assert f"apres={marker}" not in seen, seen
        assert hub.log_tail(400).count(refused) >= 2, hub.log_tail(80)
