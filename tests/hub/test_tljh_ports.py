"""TLJH: the hub routes a student only to a port that student's Unix account holds.

The Littlest JupyterHub's SystemdSpawner picks a random port at each start (a port the hub set
is ignored) and the server binds it seconds later: in between, a classmate who learned the port
can bind it first and would receive the student's requests. The course's drop-in
(tljh/cours-memoire-tuteur.py) wraps TLJH's spawner with the same check as the one-machine hub
(verified_spawner.py, test_verified_ports.py). A real hub runs TLJH's configuration with the
drop-in (TLJH's spawner reproduced without systemd: tljh_spawner.py), real `jupyter-<name>`
accounts: bob binds ana's port as soon as her server process exists (the test reads it from
that process, as root, playing a classmate who learned it); ana's start is refused with bob's
uid named and none of her requests reaches bob. Then ana starts on her own random port.
"""

from __future__ import annotations

import pwd
import re
import secrets
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from classhub import environment_of, hub_settings, launch_hub, write_roster
from conftest import HUB_DIR
from helpers import stop_pids

pytestmark = [pytest.mark.hub, pytest.mark.recette("tljh")]

SQUATTER = """
import socket, sys, time
port = int(sys.stdin.readline())
sock = socket.socket()
deadline = time.monotonic() + 20
while True:
    try:
        sock.bind(("127.0.0.1", port))
        break
    except OSError:
        if time.monotonic() > deadline:
            print("perdu", flush=True)
            sys.exit(3)
        time.sleep(0.001)
sock.listen()
print("pris", flush=True)
sock.settimeout(90)
while True:
    try:
        conn, _ = sock.accept()
    except OSError:
        break
    print("REQ", conn.recv(200)[:60], flush=True)
    conn.close()
"""


@pytest.fixture(scope="module")
def pair() -> Iterator[tuple[str, str]]:
    from classhub import unix_users

    tag = secrets.token_hex(2)
    names = (f"tlj{tag}ana", f"tlj{tag}bob")
    with unix_users([f"jupyter-{name}" for name in names]):  # TLJH's Unix names
        yield names


def _server_port(uid: int, deadline: float) -> int:
    """The port in the environment of the first process of `uid` (the server being started)."""
    while time.monotonic() < deadline:
        for proc in psutil.process_iter(["uids"]):
            if proc.info["uids"] is None or proc.info["uids"].real != uid:
                continue
            try:
                url = environment_of(proc.pid).get("JUPYTERHUB_SERVICE_URL", "")
            except OSError:
                continue
            found = re.match(r"https?://[^/]+:(\d+)/", url)
            if found:
                return int(found.group(1))
        time.sleep(0.01)
    raise AssertionError("aucun processus du serveur")


def _listeners(port: int) -> set[int]:
    return {
        c.pid
        for c in psutil.net_connections(kind="tcp")
        if c.status == psutil.CONN_LISTEN and c.laddr.port == port and c.pid
    }


def _wait_idle(hub, name: str) -> dict:
    deadline = time.monotonic() + 180
    while True:
        model = hub.api("GET", f"/users/{name}").json()
        if not model["pending"]:
            return model
        assert time.monotonic() < deadline, hub.log_tail()
        time.sleep(0.3)


def test_a_classmate_on_the_tljh_port_is_refused(course_env, pair, scratch):
    ana, bob = pair
    ana_uid = pwd.getpwnam(f"jupyter-{ana}").pw_uid
    bob_uid = pwd.getpwnam(f"jupyter-{bob}").pw_uid
    workdir = scratch("cours-hub-tljh-ports-")
    tljh = workdir / "tljh_config.py"  # what TLJH sets before loading jupyterhub_config.d/
    tljh.write_text(
        f"import sys\nsys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from tljh_spawner import UserCreatingSpawner\n"
        "c = get_config()  # noqa\n"
        "c.JupyterHub.spawner_class = UserCreatingSpawner\n"
        f"load_subconfig({str(HUB_DIR / 'tljh' / 'cours-memoire-tuteur.py')!r})\n"
    )
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=write_roster(workdir / "classe.csv", {ana: "student", bob: "student"}),
        exchange=workdir / "exchange",
        settings=hub_settings(COURSE_HUB_ADMINS="informaticien"),
        hub_config=tljh,
    ) as hub:
        # TLJH makes a hub admin root: the drop-in says so in the hub's log, with the name
        said = "les administrateurs du hub (informaticien) sont root sur cette machine"
        assert said in hub.log_path.read_text(), hub.log_tail()
        refused = False
        for _attempt in range(3):  # bob must bind before ana's server does: retried if late
            squatter = subprocess.Popen(
                ["runuser", "-u", f"jupyter-{bob}", "--", "python3", "-c", SQUATTER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                cwd="/tmp",
            )
            try:
                with ThreadPoolExecutor(1) as pool:  # the hub answers once the spawn is done
                    start = pool.submit(hub.api, "POST", f"/users/{ana}/server")
                    port = _server_port(ana_uid, time.monotonic() + 120)
                    squatter.stdin.write(f"{port}\n")
                    squatter.stdin.flush()
                    assert start.result().status_code in (201, 202, 500)
                model = _wait_idle(hub, ana)
            finally:
                stop_pids([squatter.pid], grace=5)
                output = squatter.communicate(timeout=10)[0]
            if output.startswith("pris"):
                refused = True
                break
            if model["servers"]:  # ana's server bound first: stop it, try again
                hub.api("DELETE", f"/users/{ana}/server")
                _wait_idle(hub, ana)
        assert refused, output
        assert not model["servers"], model  # no server, no route to bob
        assert f"le port {port} de {ana} est déjà pris par l'uid {bob_uid}" in hub.log_tail(300)
        assert "REQ" not in output, output  # not one of ana's requests reached bob

        # bob gone: ana starts, on SystemdSpawner's random port (not the hub's fixed one)
        hub.start_server(ana)
        hub.wait_ready(ana)
        model = hub.api("GET", f"/users/{ana}").json()
        url = model["servers"][""]["url"]
        assert hub.server(ana, "GET", "/api/status").status_code == 200
        port = _server_port(ana_uid, time.monotonic() + 30)
        holders = {psutil.Process(pid).uids().real for pid in _listeners(port)}
        assert holders == {ana_uid}, holders
        assert url.startswith(f"/user/{ana}/")
