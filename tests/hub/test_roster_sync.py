"""The roster is the truth while the hub runs: an edit removes, demotes and adds, no restart.

A real hub (the shipped jupyterhub_config.py, its roster-sync service), real Unix users and
their real servers. The roster file is edited as an admin would; the hub's API must follow:
a removed student's server stopped and the user gone (the login refused), a demoted
instructor out of `instructors` and of the Unix group that reads the solutions, their server
stopped and restarted as a student's, a new line admitted. A bad roster changes nothing.
"""

from __future__ import annotations

import grp
import re
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from classhub import (
    INSTRUCTORS_GROUP,
    ClassHub,
    environment_of,
    hub_settings,
    launch_hub,
    unix_users,
    write_roster,
)
from conftest import HUB_DIR
from helpers import alive

pytestmark = [pytest.mark.hub, pytest.mark.recette("machine")]


@pytest.fixture(scope="module")
def names() -> Iterator[dict[str, str]]:
    tag = secrets.token_hex(2)
    names = {key: f"sync{tag}{key}" for key in ("prof", "ana", "bob", "cam", "dan", "zed")}
    with unix_users(list(names.values())):
        yield names


@pytest.fixture(scope="module")
def sync_hub(course_env, names, hub_workdir) -> Iterator[tuple[ClassHub, object]]:
    workdir = hub_workdir
    roster = write_roster(
        workdir / "classe.csv",
        {names["prof"]: "instructor", names["ana"]: "student", names["bob"]: "student"},
    )
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=roster,
        exchange=workdir / "exchange",
        settings=hub_settings(COURSE_HUB_CULL_TIMEOUT="0", COURSE_HUB_ROSTER_SYNC_EVERY="1"),
        hub_config=HUB_DIR / "jupyterhub_config.py",
        # a name this hub refuses to create, as a PAM hub refuses a line without its Unix account
        overlay=f'c.Authenticator.username_pattern = r"^(?!{names["zed"]}$).*$"',
    ) as hub:
        yield hub, roster


def test_an_edited_roster_removes_demotes_and_adds_without_restart(sync_hub, names):
    hub, roster = sync_hub
    prof, ana, bob, cam = names["prof"], names["ana"], names["bob"], names["cam"]
    hub_pid = hub.process.pid
    for name in (prof, ana):
        hub.start_server(name)
    for name in (prof, ana):
        hub.wait_ready(name)
    prof_pid, ana_pid = hub.server_pids[prof], hub.server_pids[ana]
    assert environment_of(prof_pid)["COURSE_ROLE"] == "instructors"
    assert prof in grp.getgrnam(INSTRUCTORS_GROUP).gr_mem  # reads the solutions
    assert hub.login_status(cam) == 403  # not in the class yet
    # the hub's own files private (the unit's UMask); a student's server gets the usual umask
    # back (an instructor's is the grading configuration's, stricter: nbgrader_config.py)
    database = hub.log_path.parent / "jupyterhub.sqlite"
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    status = {pid: Path(f"/proc/{pid}/status").read_text() for pid in (prof_pid, ana_pid)}
    umask = {
        pid: int(re.search(r"^Umask:\s+(\d+)$", text, re.M)[1], 8) for pid, text in status.items()
    }
    assert umask[ana_pid] == 0o022 and umask[prof_pid] & 0o022 == 0o022, umask

    # ana leaves the class, prof becomes a student, cam arrives
    write_roster(roster, {prof: "student", bob: "student", cam: "student"})
    hub.wait_until(lambda: hub.api("GET", f"/users/{ana}").status_code == 404, "ana toujours là")
    hub.wait_until(lambda: not alive(ana_pid), "le serveur d'ana tourne encore")
    assert hub.login_status(ana) == 403
    hub.wait_until(lambda: "instructors" not in hub.groups_of(prof), "prof toujours enseignant")
    hub.wait_until(lambda: "students" in hub.groups_of(prof), "prof pas encore élève")
    assert "formgrade-memoire-tuteur" not in hub.groups_of(prof)
    hub.wait_until(lambda: not alive(prof_pid), "l'ancien serveur d'enseignant tourne encore")
    hub.wait_until(lambda: prof not in grp.getgrnam(INSTRUCTORS_GROUP).gr_mem, "groupe Unix gardé")
    assert hub.groups_of(cam) >= {"students", "nbgrader-memoire-tuteur"}
    assert hub.login_status(cam) == 302
    assert hub.process.pid == hub_pid and hub.process.poll() is None  # no restart

    # the demoted instructor's next server is a student's
    hub.server_pids.pop(prof, None)
    hub.wait_stopped(prof, timeout=90)
    hub.start_server(prof)
    hub.wait_ready(prof)
    environment = environment_of(hub.server_pids[prof])
    assert environment["COURSE_ROLE"] == "students"
    assert environment["JUPYTER_CONFIG_PATH"].endswith("/students")


def test_a_bad_roster_changes_nothing(sync_hub, names):
    hub, roster = sync_hub
    prof, bob, cam = names["prof"], names["bob"], names["cam"]
    before = {name: hub.groups_of(name) for name in (prof, bob, cam)}
    assert all(before.values()), before
    # bob removed and prof promoted on lines 2-3, then a duplicate on line 4: refused whole
    text = (
        "id,first_name,last_name,email,role\n"
        f"{prof},P,F,p@example.org,instructor\n"
        f"{cam},C,R,c@example.org,student\n"
        f"{cam},C,R,c@example.org,student\n"
    )
    roster.write_text(text, encoding="utf-8")
    hub.wait_until(
        lambda: "liste refusée" in hub.log_path.read_text(), "pas de refus dans le journal"
    )
    log = hub.log_path.read_text()
    assert "ligne 4" in log and "figure déjà ligne 3" in log
    time.sleep(3)  # three more looks at the file: still nothing applied
    assert {name: hub.groups_of(name) for name in (prof, bob, cam)} == before
    assert hub.login_status(bob) == 302
    # an unknown role and an invalid name are refused the same way, with their line
    roster.write_text(f"id,role\n{bob},student\n{cam},prof\n", encoding="utf-8")
    hub.wait_until(lambda: "rôle «\u00a0prof\u00a0» inconnu" in hub.log_path.read_text(), "rôle")
    roster.write_text(f"id,role\n{bob},student\nCam Roy,student\n", encoding="utf-8")
    hub.wait_until(lambda: "identifiant invalide" in hub.log_path.read_text(), "nom invalide")
    assert {name: hub.groups_of(name) for name in (prof, bob, cam)} == before


def test_a_refused_addition_holds_back_nothing_else(sync_hub, names):
    """One edit removes bob and adds dan and zed, a name the hub refuses: bob is removed and dan
    added all the same, zed named in the log with the hub's own reason (tried again later)."""
    hub, roster = sync_hub
    prof, bob, cam, dan, zed = (names[k] for k in ("prof", "bob", "cam", "dan", "zed"))
    write_roster(roster, {prof: "student", cam: "student", dan: "student", zed: "student"})
    hub.wait_until(lambda: hub.api("GET", f"/users/{bob}").status_code == 404, "bob toujours là")
    hub.wait_until(lambda: "students" in hub.groups_of(dan), "dan pas ajouté")
    assert hub.login_status(dan) == 302 and hub.login_status(bob) == 403
    hub.wait_until(lambda: f"{zed} non appliqué" in hub.log_path.read_text(), "zed pas nommé")
    line = next(ln for ln in hub.log_path.read_text().splitlines() if f"{zed} non appliqué" in ln)
    assert "400" in line and "Failed to create user" in line, line  # the hub's own words
    assert hub.api("GET", f"/users/{zed}").status_code == 404
