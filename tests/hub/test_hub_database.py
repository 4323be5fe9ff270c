"""Kubernetes: the hub's database backed up while the hub runs, restored, or lost, and no uid moves.

The chart keeps the hub's SQLite database on its own volume; ADMIN.md (« La base du hub :
sauvegarde et restauration ») backs it up from the hub's pod with SQLite's backup API while the
hub runs, and restores it by copying the file in place, hub stopped. Here a real hub runs the
chart's values (tests/hub/chart_hub.py, the course's configuration in its Kubernetes mode) with a
class from the roster: the guide's very backup command runs against its live database, the hub
stops, the copy goes into a fresh folder as `kubectl cp` puts it, a hub starts on it: same users,
groups, row ids and a token only the database held. Then a hub on a lost database (an empty
folder): the roster rebuilds the same users and groups, their row ids changed (the positive
control: uids taken from them would have moved) and the old token is refused, while every uid
kube_recipe derives is the same as before.
"""

from __future__ import annotations

import re
import secrets
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
import requests
from chart_hub import chart_hub
from classhub import HUB_DIR, ClassHub, launch_hub, open_tempdir, write_roster
from helpers import REPO
from kube_recipe import uid_of

pytestmark = [pytest.mark.hub, pytest.mark.timeout(600)]

Z2JH = HUB_DIR / "z2jh"
HUB_DB = "/srv/jupyterhub/jupyterhub.sqlite"  # where the chart's hub keeps it


def _guide_backup_code() -> str:
    """The Python the guide runs in the hub's pod to back up its database."""
    guide = (REPO / "grader" / "hub" / "ADMIN.md").read_text(encoding="utf-8")
    (code,) = re.findall(r'kubectl exec -n cours deploy/hub -- python3 -c "([^"]+)"', guide)
    assert HUB_DB in code and "/srv/jupyterhub/sauvegarde-hub.sqlite" in code, code
    return code


@pytest.fixture(scope="module")
def kube_class(course_env: Path) -> Iterator[dict]:
    tag = secrets.token_hex(2)
    names = {key: f"hdb{tag}{key}" for key in ("prof", "ana", "bob", "cam")}
    work = open_tempdir("cours-hub-db-")
    work.chmod(0o700)
    try:
        chart = chart_hub(
            work,
            Z2JH / "values.yaml",
            course_env,
            {n: "instructor" if key == "prof" else "student" for key, n in names.items()},
            {"image_binds": {}, "image_env": {}, "volumes_root": str(work / "volumes")},
        )
        yield {"names": names, "chart": chart, "work": work}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _hub(course_env: Path, kube_class: dict, place: Path):
    chart = kube_class["chart"]
    return launch_hub(
        prefix=course_env,
        workdir=place,
        roster=chart.roster,
        exchange=kube_class["work"] / "volumes" / "nbgrader-exchange",
        settings={**chart.settings, "COURSE_HUB_ROSTER_SYNC_EVERY": "1"},
        hub_config=chart.config,
    )


def _class_state(hub: ClassHub, names: dict[str, str]) -> dict:
    """Each class member's row id, groups and derived uid, as the hub's API lists them."""
    users = {u["name"]: u for u in hub.api("GET", "/users").json()}
    return {
        n: {"id": _row_id(hub, n), "groups": sorted(users[n]["groups"]), "uid": uid_of(n)}
        for n in names.values()
    }


def _row_id(hub: ClassHub, name: str) -> int:
    """The user's row in the hub's database (JupyterHub's API does not show it)."""
    db = Path(hub.log_path).parent / "jupyterhub.sqlite"
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as base:
        (row,) = base.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchall()
    return row[0]


def _token_works(hub: ClassHub, token: str) -> bool:
    response = requests.get(
        f"{hub.url}/hub/api/user", headers={"Authorization": f"token {token}"}, timeout=30
    )
    return response.status_code == 200


def test_the_hub_database_restored_or_lost_keeps_every_uid(course_env, kube_class):
    names, work = kube_class["names"], kube_class["work"]
    ana = names["ana"]
    first = work / "hub-1"
    first.mkdir()
    with _hub(course_env, kube_class, first) as hub:
        hub.wait_until(lambda: "roster-sync\u00a0: liste appliquée" in hub.log_tail(400), "sync")
        # ana deleted by hand, put back by the roster sync after an edit, while a fifth member
        # holds the last row: SQLite gives a new row max(id) + 1, so her row is then past any a
        # fresh database gives the class (deleted and put back as the last row, a row gets its
        # id back: one run in three, by the order the hub first created the class in)
        roster = kube_class["chart"].roster
        members = {n: "instructor" if k == "prof" else "student" for k, n in names.items()}
        extra = ana.removesuffix("ana") + "tmp"
        write_roster(roster, {**members, extra: "student"})
        hub.wait_until(lambda: "students" in hub.groups_of(extra), "le cinquième membre")
        assert hub.api("DELETE", f"/users/{ana}").status_code == 204
        role = members.pop(ana)
        write_roster(roster, {**members, extra: "student", ana: role})
        hub.wait_until(lambda: "students" in hub.groups_of(ana), "ana remise par la liste")
        write_roster(roster, {**members, ana: role})
        hub.wait_until(lambda: "students" not in hub.groups_of(extra), "le cinquième parti")
        token = hub.token_for(names["prof"])  # only the database holds it
        before = _class_state(hub, names)
        # the guide's backup, while the hub runs, by the hub's own Python
        code = _guide_backup_code().replace("/srv/jupyterhub", str(first))
        backed = subprocess.run(
            [str(course_env / "env" / "bin" / "python"), "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert backed.returncode == 0, backed.stderr
        assert hub.process.poll() is None  # it ran all along
    assert before[ana]["id"] > max(v["id"] for k, v in before.items() if k != ana)
    for key, name in names.items():
        assert ("instructors" if key == "prof" else "students") in before[name]["groups"], before

    # restored: the copy put in place of the database of a fresh volume, a hub started on it
    restored = work / "hub-2"
    restored.mkdir()
    shutil.copyfile(first / "sauvegarde-hub.sqlite", restored / "jupyterhub.sqlite")
    (restored / "jupyterhub.sqlite").chmod(0o600)
    with _hub(course_env, kube_class, restored) as hub:
        assert _class_state(hub, names) == before
        assert _token_works(hub, token)

    # lost: an empty volume; the roster rebuilds the class, every uid is the same
    lost = work / "hub-3"
    lost.mkdir()
    with _hub(course_env, kube_class, lost) as hub:
        hub.wait_until(lambda: "students" in hub.groups_of(ana), "ana refaite par la liste")
        after = _class_state(hub, names)
        assert not _token_works(hub, token)  # the database really is a new one
    assert after[ana]["id"] < before[ana]["id"]  # renumbered rows...
    assert {n: v["uid"] for n, v in after.items()} == {n: v["uid"] for n, v in before.items()}
    assert {n: v["groups"] for n, v in after.items()} == {n: v["groups"] for n, v in before.items()}
