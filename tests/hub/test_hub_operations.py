"""What a school runs the hub with: idle culling, scoped staff roles, one shared formgrader.

One hub, the shipped jupyterhub_config.py, real Unix users from one roster: an instructor and a
teaching assistant grade one course together in nbgrader's shared formgrader (a hub service run
as a grading account, JupyterHubAuthPlugin), two students submit from a terminal, a third
student's idle server is stopped by jupyterhub-idle-culler while an active one keeps running.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from classhub import (
    HUB_DIR,
    ClassHub,
    as_user,
    environment_of,
    free_port,
    hub_settings,
    launch_hub,
    make_exchange,
    open_tempdir,
    unix_users,
    write_roster,
)
from cycle import COURSE_ID, Lab, load_lab, ok, page_score
from helpers import alive

pytestmark = [pytest.mark.hub, pytest.mark.timeout(900), pytest.mark.recette("machine")]

CULL_TIMEOUT = 30  # seconds idle before the culler stops a server (3600 by default)
SAMPLES = {"ana": "complete_vacuum", "bob": "graine"}
SERVICE = f"/services/{COURSE_ID}"


@pytest.fixture(scope="module")
def ops_users(hub_requirements) -> Iterator[dict[str, str]]:
    """Real Unix accounts: instructor, TA, grading account, three students."""
    tag = secrets.token_hex(2)
    keys = ("prof", "ta", "grader", "ana", "bob", "cam")
    names = {key: f"hubo{tag}{key}" for key in keys}
    with unix_users(list(names.values())):
        yield names


@pytest.fixture(scope="module")
def ops_hub(course_env: Path, ops_users: dict[str, str]) -> Iterator[ClassHub]:
    work = open_tempdir("cours-hub-ops-")
    roles = {"prof": "instructor", "ta": "ta", "ana": "student", "bob": "student", "cam": "student"}
    roster = write_roster(work / "classe.csv", {ops_users[k]: role for k, role in roles.items()})
    settings = hub_settings(
        COURSE_HUB_GRADER=ops_users["grader"],
        COURSE_HUB_GRADER_PORT=str(free_port()),
        COURSE_HUB_CULL_TIMEOUT=str(CULL_TIMEOUT),
        COURSE_HUB_CULL_EVERY="5",
        COURSE_HUB_INSTRUCTORS_ACCESS="1",
    )
    # activity reaches the hub every 5 s (300 s by default), so an active server is not culled
    overlay = (
        "c.JupyterHub.last_activity_interval = 5\n"
        'c.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"] = "5"\n'
    )
    try:
        with launch_hub(
            prefix=course_env,
            workdir=work,
            roster=roster,
            exchange=make_exchange(work / "exchange"),
            settings=settings,
            overlay=overlay,
            hub_config=HUB_DIR / "jupyterhub_config.py",
        ) as hub:
            yield hub
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _service(hub: ClassHub, who: str, method: str, path: str, **kwargs) -> requests.Response:
    headers = {"Authorization": f"token {hub.token_for(who)}"}
    kwargs.setdefault("timeout", 300)
    return requests.request(method, f"{hub.url}{SERVICE}{path}", headers=headers, **kwargs)


def _grade(hub: ClassHub, who: str, path: str) -> dict:
    response = _service(hub, who, "POST", f"/formgrader/api/{path}")
    assert response.status_code == 200, (response.status_code, hub.log_tail(80))
    result = response.json()
    assert result.get("success"), result
    return result


@pytest.fixture(scope="module")
def culling(ops_hub: ClassHub, ops_users: dict[str, str]) -> Iterator[dict]:
    """cam's server left idle, bob's kept busy (a request every 3 s) while the module runs."""
    hub, cam, bob = ops_hub, ops_users["cam"], ops_users["bob"]
    for name in (cam, bob):
        hub.start_server(name)
    for name in (cam, bob):
        hub.wait_ready(name)
    stop = threading.Event()

    def keep_busy() -> None:
        while not stop.wait(3):
            try:
                hub.server(bob, "GET", "/api/contents", timeout=30)
            except requests.RequestException:
                pass

    worker = threading.Thread(target=keep_busy, daemon=True)
    worker.start()
    state = {"ready_at": time.monotonic(), "pids": dict(hub.server_pids)}
    try:
        yield state
    finally:
        stop.set()
        worker.join(timeout=40)


def _as_student(name: str, exchange: Path, prefix: Path, *command: str):
    """A student's terminal: the students' Jupyter configuration, the course env."""
    home = pwd.getpwnam(name).pw_dir
    env = [
        f"HOME={home}",
        f"PATH={prefix}/env/bin:/usr/bin:/bin",
        f"JUPYTER_CONFIG_PATH={prefix}/etc/students",
        f"NBGRADER_EXCHANGE={exchange}",
        f"COURSE_ID={COURSE_ID}",
        "LANG=C.UTF-8",
    ]
    return as_user(name, "env", "-i", *env, *command, cwd=home, timeout=180)


@pytest.fixture(scope="module")
def shared_grading(
    ops_hub: ClassHub, ops_users: dict[str, str], course_env: Path, culling: dict
) -> dict:
    """The instructor and the TA run one course's grading in its shared formgrader."""
    hub, prof, ta = ops_hub, ops_users["prof"], ops_users["ta"]
    lab: Lab = load_lab(list(SAMPLES.values()))
    exchange = Path(hub.log_path).parent / "exchange"
    deadline = time.monotonic() + 180
    while _service(hub, prof, "GET", "/formgrader/api/status", timeout=30).status_code != 200:
        assert time.monotonic() < deadline, f"formgrader partagé injoignable :\n{hub.log_tail()}"
        time.sleep(2)
    _grade(hub, prof, f"assignment/{lab.name}/assign")
    _grade(hub, ta, f"assignment/{lab.name}/release")
    answers = open_tempdir("cours-hub-answers-")
    for key, sample in SAMPLES.items():
        student = ops_users[key]
        fetched = _as_student(student, exchange, course_env, "nbgrader", "fetch", lab.name)
        assert fetched.returncode == 0, fetched.stderr
        answer = answers / f"{key}.py"
        answer.write_text(lab.answers[sample], encoding="utf-8")
        answer.chmod(0o644)
        edit = (
            "import nbformat, sys\n"
            f"path = '{lab.name}/{lab.notebook}'\n"
            "nb = nbformat.read(path, as_version=4)\n"
            "cell = [c for c in nb.cells if c.metadata.get('nbgrader', {}).get('grade_id')"
            " == 'oublier'][0]\n"
            "cell.source = open(sys.argv[1], encoding='utf-8').read()\n"
            "nbformat.write(nb, path)\n"
        )
        wrote = _as_student(student, exchange, course_env, "python", "-c", edit, str(answer))
        assert wrote.returncode == 0, wrote.stderr
        submitted = _as_student(student, exchange, course_env, "nbgrader", "submit", lab.name)
        assert submitted.returncode == 0, submitted.stderr
    _grade(hub, prof, f"assignment/{lab.name}/collect")
    # each grader autogrades one submission, in the same course folder and gradebook
    _grade(hub, prof, f"submission/{lab.name}/{ops_users['ana']}/autograde")
    _grade(hub, ta, f"submission/{lab.name}/{ops_users['bob']}/autograde")
    _grade(hub, ta, f"assignment/{lab.name}/generate_feedback")
    _grade(hub, prof, f"assignment/{lab.name}/release_feedback")
    seen = {
        who: ok(_service(hub, who, "GET", f"/formgrader/api/submissions/{lab.name}"))
        for who in (prof, ta)
    }
    feedback = {}
    for key in SAMPLES:
        got = _as_student(
            ops_users[key], exchange, course_env, "nbgrader", "fetch_feedback", lab.name
        )
        assert got.returncode == 0, got.stderr
        pages = list(
            Path(pwd.getpwnam(ops_users[key]).pw_dir, lab.name, "feedback").glob("*/*.html")
        )
        assert len(pages) == 1, pages
        feedback[key] = pages[0].read_text(encoding="utf-8")
    shutil.rmtree(answers, ignore_errors=True)
    return {"lab": lab, "seen": seen, "feedback": feedback}


def test_instructor_and_ta_grade_one_course_together(ops_users, shared_grading):
    lab: Lab = shared_grading["lab"]
    prof, ta = ops_users["prof"], ops_users["ta"]
    rows = {who: {r["student"]: r for r in shared_grading["seen"][who]} for who in (prof, ta)}
    for key, sample in SAMPLES.items():
        for who in (prof, ta):  # each sees the other's grading: one gradebook
            row = rows[who][ops_users[key]]
            assert row["autograded"] and row["score"] == pytest.approx(lab.expected[sample]), row
        score, _ = page_score(shared_grading["feedback"][key])
        assert float(score) == pytest.approx(lab.expected[sample]), score
    grader = pwd.getpwnam(ops_users["grader"])
    gradebook = Path(grader.pw_dir) / "cours-memoire-tuteur" / "grader" / "gradebook.db"
    assert gradebook.stat().st_uid == grader.pw_uid  # written by the grading account only


def test_students_cannot_reach_the_shared_formgrader(ops_hub, ops_users, shared_grading):
    for key in ("ana", "bob"):
        response = _service(ops_hub, ops_users[key], "GET", "/formgrader/api/assignments")
        assert response.status_code == 403, response.status_code
    assert _service(ops_hub, ops_users["ta"], "GET", "/formgrader/api/assignments").ok


def test_the_roster_imported_in_the_shared_formgrader_joins_the_hub_group(
    ops_hub, ops_users, shared_grading
):
    """A terminal of the shared formgrader imports the roster's students into its gradebook;
    nbgrader's JupyterHubAuthPlugin puts each in the hub group of the course (nbgrader-<id>)."""
    group, cam, grader = f"nbgrader-{COURSE_ID}", ops_users["cam"], ops_users["grader"]
    removed = ops_hub.api("DELETE", f"/groups/{group}/users", json={"users": [cam]})
    assert removed.status_code == 200, removed.text
    assert cam not in ok(ops_hub.api("GET", f"/groups/{group}"))["users"]
    service = ok(ops_hub.api("GET", f"/services/{COURSE_ID}"))
    terminal_env = environment_of(service["pid"])  # what a terminal opened in it inherits
    assert terminal_env["COURSE_HUB_AUTH_PLUGIN"] == "jupyterhub"
    course = Path(pwd.getpwnam(grader).pw_dir) / "cours-memoire-tuteur" / "grader"
    roster = course / "classe.csv"  # the instructor uploads the class's roster there
    roles = {"prof": "instructor", "ta": "ta", "ana": "student", "bob": "student", "cam": "student"}
    write_roster(roster, {ops_users[k]: role for k, role in roles.items()})
    os.chown(roster, pwd.getpwnam(grader).pw_uid, -1)
    script = "cours-roster eleves classe.csv -o eleves.csv && nbgrader db student import eleves.csv"
    variables = [f"{key}={value}" for key, value in terminal_env.items()]
    imported = as_user(grader, "env", "-i", *variables, "sh", "-c", script, cwd=course)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "NOT added" not in imported.stderr, imported.stderr
    assert cam in ok(ops_hub.api("GET", f"/groups/{group}"))["users"], imported.stderr
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        students = {student.id for student in gradebook.students}
    assert students == {ops_users[k] for k in ("ana", "bob", "cam")}  # staff never graded


def test_the_instructors_course_list_leads_to_the_shared_formgrader(ops_hub, ops_users):
    """nbgrader's Course List, in the instructor's own JupyterLab, finds the course's service."""
    prof = ops_users["prof"]
    ops_hub.start_server(prof)
    ops_hub.wait_ready(prof)
    listing = ok(ops_hub.server(prof, "GET", "/formgraders"))
    assert listing["success"], listing
    shared = [c for c in listing["value"] if c["kind"] == "jupyterhub"]
    assert [c["course_id"] for c in shared] == [COURSE_ID], listing
    assert f"{SERVICE}/" in shared[0]["url"], shared


def test_instructors_open_a_students_server_when_the_hub_allows_it(ops_hub, ops_users, culling):
    bob = ops_users["bob"]
    assert (
        ops_hub.server(bob, "GET", "/api/contents", token_of=ops_users["prof"]).status_code == 200
    )
    # the TA holds no instructor role: grading, not the students' files
    ta = ops_hub.server(bob, "GET", "/api/contents", token_of=ops_users["ta"])
    assert ta.status_code in (403, 404), ta.status_code


def test_an_idle_server_is_culled_and_an_active_one_kept(ops_hub, ops_users, culling):
    hub, cam, bob = ops_hub, ops_users["cam"], ops_users["bob"]
    deadline = culling["ready_at"] + CULL_TIMEOUT + 120
    while hub.api("GET", f"/users/{cam}").json()["servers"]:
        assert time.monotonic() < deadline, f"serveur inactif jamais arrêté :\n{hub.log_tail()}"
        time.sleep(2)
    # the culler's own record: cam stopped for inactivity, not before its time; never bob
    log = Path(hub.log_path).read_text(errors="replace")
    culled = re.findall(rf"Culling server {cam} \(inactive for (\d+):(\d+):(\d+)\)", log)
    assert culled, log[-3000:]
    hours, minutes, seconds = map(int, culled[0])
    assert hours * 3600 + minutes * 60 + seconds >= CULL_TIMEOUT
    assert f"Culling server {bob}" not in log
    cam_pid = culling["pids"][cam]
    for _ in range(50):
        if not alive(cam_pid):
            break
        time.sleep(0.2)
    assert not alive(cam_pid), "le processus du serveur arrêté tourne encore"
    # bob worked all along: the server he started with outlived cam's, culled for having been
    # idle CULL_TIMEOUT (what happened, read from the processes, not from a clock)
    assert alive(culling["pids"][bob]), "le serveur actif a été arrêté"
    assert hub.api("GET", f"/users/{bob}").json()["servers"][""]["ready"]
