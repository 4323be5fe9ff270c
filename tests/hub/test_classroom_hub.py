"""A whole class on one machine: real Unix users, a real JupyterHub, nbgrader's exchange.

The instructor releases the lab from formgrader, three students fetch it, answer (complete,
partial, broken) and submit from their own servers, the instructor collects, autogrades and
releases feedback, the students fetch it. Then: scores, what each group sees, and isolation.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import nbformat
import pytest
import requests
from classhub import environment_of
from cycle import (
    COURSE_ID,
    Lab,
    assignment_list,
    formgrader,
    load_lab,
    ok,
    student_action,
    write_answer,
)

# The first test also pays for the module's set-up: building the shared environment on a fresh
# machine (about 1 min from PyPI), four servers and the whole class cycle (about 2 min).
pytestmark = [pytest.mark.hub, pytest.mark.timeout(900), pytest.mark.recette("machine")]

COURSE_DIR = "cours-memoire-tuteur"
PASSWORD = "mot-de-passe-de-la-classe"
STUDENT_ROLES = ("complet", "partiel", "casse")

# The course's own sample answers (grader/submissions, with their expected scores).
SAMPLES = {"complet": "complete_vacuum", "partiel": "complete", "casse": "exception"}
_ok = ok


@pytest.fixture(scope="module")
def lab() -> Lab:
    samples = load_lab(list(SAMPLES.values()))
    # keyed by the student's role in this class
    samples.answers = {role: samples.answers[s] for role, s in SAMPLES.items()}
    samples.expected = {role: samples.expected[s] for role, s in SAMPLES.items()}
    return samples


@pytest.fixture(scope="module")
def class_cycle(class_hub, class_users, lab: Lab, exchange_dir: Path) -> dict:
    """Run the whole class once; the tests below read what happened."""
    hub, users = class_hub, class_users
    prof = users["prof"]
    for name in users.values():  # all four servers start through the hub's REST API
        hub.start_server(name)
    servers = {name: hub.wait_ready(name) for name in users.values()}

    # Instructor: generate the student version and release it, from formgrader.
    formgrader(hub, prof, f"assignment/{lab.name}/assign")
    formgrader(hub, prof, f"assignment/{lab.name}/release")

    # Students: fetch, answer, submit, each from their own server.
    for role in STUDENT_ROLES:
        student = users[role]
        released = [a for a in assignment_list(hub, student) if a["assignment_id"] == lab.name]
        assert released and released[0]["status"] == "released", released
        student_action(hub, student, "fetch", lab)
        write_answer(hub, student, lab, lab.answers[role])
        after = student_action(hub, student, "submit", lab)
        mine = [a for a in after if a["assignment_id"] == lab.name and a["status"] == "submitted"]
        assert mine, after

    # Instructor: collect, autograde each submission, generate and release feedback.
    formgrader(hub, prof, f"assignment/{lab.name}/collect")
    for role in STUDENT_ROLES:
        formgrader(hub, prof, f"submission/{lab.name}/{users[role]}/autograde")
    formgrader(hub, prof, f"assignment/{lab.name}/generate_feedback")
    formgrader(hub, prof, f"assignment/{lab.name}/release_feedback")
    submissions = ok(hub.server(prof, "GET", f"/formgrader/api/submissions/{lab.name}"))

    # Students: fetch their feedback.
    feedback = {}
    for role in STUDENT_ROLES:
        student = users[role]
        listing = student_action(hub, student, "fetch_feedback", lab)
        feedback[role] = [a for a in listing if a["assignment_id"] == lab.name]
    return {"servers": servers, "submissions": submissions, "feedback": feedback}


def test_each_server_runs_as_its_own_unix_user(class_hub, class_users, class_cycle):
    import pwd

    ports: dict[str, int] = {}
    for name in class_users.values():
        account = pwd.getpwnam(name)
        pid = class_hub.server_pids[name]
        status = Path(f"/proc/{pid}/status").read_text()
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
        assert uid == account.pw_uid, (name, uid)
        # from the shared course environment, not from anything under /root
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert any(b"/env/bin/" in part for part in command[:2]), command
        assert not any(part.startswith(b"/root") for part in command), command
        # the hub made the home private, whatever the system default was
        assert stat.S_IMODE(os.stat(account.pw_dir).st_mode) == 0o700
        # a port of its own below Linux's ephemeral range (never one picked at random)
        url = environment_of(pid)["JUPYTERHUB_SERVICE_URL"]
        ports[name] = int(url.rsplit(":", 1)[1].split("/")[0])
        assert 20000 < ports[name] < 32768, url
    assert len(set(ports.values())) == len(ports)


def test_autograded_scores_match_each_answer(class_users, class_cycle, lab: Lab):
    assert lab.expected["complet"] == lab.auto_max_score > lab.expected["partiel"]
    assert lab.expected["partiel"] > lab.expected["casse"]
    by_student = {row["student"]: row for row in class_cycle["submissions"]}
    for role in STUDENT_ROLES:
        row = by_student[class_users[role]]
        assert row["autograded"], row
        assert row["max_score"] == pytest.approx(lab.max_score)
        assert row["score"] == pytest.approx(lab.expected[role]), (role, row)


def test_every_student_fetched_their_feedback(class_hub, class_users, class_cycle, lab: Lab):
    for role in STUDENT_ROLES:
        student = class_users[role]
        listing = class_cycle["feedback"][role]
        # nbgrader's list: submitted assignments -> submissions -> notebooks with feedback flags
        flags = [
            nb
            for a in listing
            for sub in a.get("submissions", [a])
            for nb in sub.get("notebooks", [])
            if "has_local_feedback" in nb
        ]
        assert flags and all(nb["has_local_feedback"] for nb in flags), listing
        assert not any(nb["feedback_updated"] for nb in flags), listing
        folder = _ok(class_hub.server(student, "GET", f"/api/contents/{lab.name}/feedback"))
        stamps = [item["name"] for item in folder["content"] if item["type"] == "directory"]
        assert len(stamps) == 1, folder
        html_path = f"/api/contents/{lab.name}/feedback/{stamps[0]}/{Path(lab.notebook).stem}.html"
        html = _ok(class_hub.server(student, "GET", html_path))["content"]
        score = f"{lab.expected[role]:g}"
        # the course's French feedback template: "oublier — note : 7 / 10"
        assert re.search(rf"note\u00a0:\s*{re.escape(score)}\s*/\s*{lab.max_score:g}", html), (
            role,
            re.findall(r"note\u00a0:[^<]*", html),
        )


def test_instructor_builds_the_grade_report_with_the_course_tools(
    class_users, class_cycle, lab: Lab, course_env: Path, run_as
):
    """The course's own report tool (make rapport's command), run by the instructor from the
    shared environment in the grader/ folder of their copy of the course."""
    import csv
    import pwd

    prof = class_users["prof"]
    grader = Path(pwd.getpwnam(prof).pw_dir) / COURSE_DIR / "grader"
    result = run_as(
        prof,
        str(course_env / "env" / "bin" / "python"),
        "-m",
        "grading.rapport",
        lab.name,
        cwd=grader,
        timeout=180,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with open(grader / "rapport" / "notes.csv", encoding="utf-8") as handle:
        rows = {row["student_id"]: row for row in csv.DictReader(handle)}
    for role in STUDENT_ROLES:
        assert float(rows[class_users[role]]["score"]) == pytest.approx(lab.expected[role])
    page = (grader / "rapport" / "rapport.html").read_text(encoding="utf-8")
    assert "data:image/png;base64," in page  # plots embedded: the page opens offline
    assert (grader / "rapport" / "notes.csv").stat().st_uid == pwd.getpwnam(prof).pw_uid


def test_students_see_only_the_assignment_list(class_hub, class_users, class_cycle, lab: Lab):
    hub, prof = class_hub, class_users["prof"]
    managed = _ok(hub.server(prof, "GET", "/formgrader/api/assignments"))
    assert lab.name in {a["name"] for a in managed}, managed
    assert hub.server(prof, "GET", "/formgrader/manage_assignments").status_code == 200
    assert hub.server(prof, "GET", "/formgraders").status_code == 200  # nbgrader's course list
    for role in STUDENT_ROLES:
        student = class_users[role]
        assert hub.server(student, "GET", "/formgrader").status_code == 404
        assert hub.server(student, "GET", "/formgrader/api/assignments").status_code == 404
        assert hub.server(student, "GET", "/formgraders").status_code == 404
        assert hub.server(student, "GET", "/assignments", params={"course_id": COURSE_ID}).ok
    disabled = {}
    for name in (prof, class_users["complet"]):
        page = hub.server(name, "GET", "/lab")
        assert page.status_code == 200, page.status_code
        config = re.search(
            r'<script id="jupyter-config-data" type="application/json">(.*?)</script>',
            page.text,
            re.S,
        )
        page_config = json.loads(config.group(1))
        disabled[name] = page_config.get("disabledExtensions", {})
        # no build check at each page load (a `node` run), no language-server search at each
        # server start (an `npm` run): 200 servers start at 9:00
        assert [page_config["buildCheck"], page_config["buildAvailable"]] == [False, False]
        assert hub.server(name, "GET", "/lsp/status").status_code == 404
    student_off = disabled[class_users["complet"]]
    for plugin in ("formgrader", "course-list", "create-assignment"):
        assert f"@jupyter/nbgrader:{plugin}" in student_off, student_off
        assert f"@jupyter/nbgrader:{plugin}" not in disabled[prof]
    assert "@jupyter/nbgrader:assignment-list" not in student_off


def test_a_student_reaches_no_other_server(class_hub, class_users, class_cycle):
    hub = class_hub
    ana, bob, prof = class_users["complet"], class_users["partiel"], class_users["prof"]
    for owner in (bob, prof):
        response = hub.server(owner, "GET", "/api/contents", token_of=ana)
        assert response.status_code in (403, 404), (owner, response.status_code)
    assert hub.server(ana, "GET", "/api/contents").status_code == 200


def test_unix_permissions_keep_students_apart(
    class_users, class_cycle, lab: Lab, exchange_dir, run_as
):
    import pwd

    ana, bob = class_users["complet"], class_users["partiel"]
    prof_home = Path(pwd.getpwnam(class_users["prof"]).pw_dir)
    ana_home = Path(pwd.getpwnam(ana).pw_dir)
    inbound = exchange_dir / COURSE_ID / "inbound"
    # ana's submission, as it sits in the exchange, and her own copies
    ana_inbound = sorted(p for p in inbound.iterdir() if p.name.startswith(f"{ana}+{lab.name}+"))
    assert ana_inbound, list(inbound.iterdir())
    denied = {
        "inbound listing": ["ls", str(inbound)],
        "ana's answer": ["cat", str(ana_home / lab.name / lab.notebook)],
        "ana's home": ["ls", str(ana_home)],
        "instructor source": [
            "cat",
            str(prof_home / COURSE_DIR / "solutions" / lab.name / lab.notebook),
        ],
        "gradebook": ["cat", str(prof_home / COURSE_DIR / "grader" / "gradebook.db")],
        "instructor's submitted copy": [
            "ls",
            str(prof_home / COURSE_DIR / "grader" / "submitted" / ana),
        ],
    }
    # the instructor really has them (so a refusal means permissions, not absence)
    assert (prof_home / COURSE_DIR / "grader" / "gradebook.db").is_file()
    assert (prof_home / COURSE_DIR / "solutions" / lab.name / lab.notebook).is_file()
    assert (prof_home / COURSE_DIR / "grader" / "submitted" / ana / lab.name).is_dir()
    for what, command in denied.items():
        result = run_as(bob, *command)
        assert result.returncode != 0, (what, result.stdout[:300])
        assert "Permission denied" in result.stderr, (what, result.stderr)
    # while ana reads her own answer, and everybody reads the released lab
    assert run_as(ana, "cat", str(ana_home / lab.name / lab.notebook)).returncode == 0
    released = exchange_dir / COURSE_ID / "outbound" / lab.name / lab.notebook
    assert run_as(bob, "cat", str(released)).returncode == 0


def test_the_hub_refuses_a_wrong_password(class_hub, class_users):
    student = class_users["partiel"]
    attempts = (
        (student, "pas-le-bon", False),  # wrong password
        ("intrus", PASSWORD, False),  # right password, but not on the class list
        (student, PASSWORD, True),
    )
    for user, password, accepted in attempts:
        with requests.Session() as browser:
            page = browser.get(f"{class_hub.url}/hub/login", timeout=30)
            xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
            form = {"username": user, "password": password}
            if xsrf:
                form["_xsrf"] = xsrf.group(1)
            response = browser.post(
                f"{class_hub.url}/hub/login", data=form, allow_redirects=False, timeout=30
            )
            logged_in = any(c.name.startswith("jupyterhub-hub-login") for c in browser.cookies)
            if accepted:
                assert response.status_code == 302, (user, response.status_code)
                assert logged_in
            else:
                assert response.status_code == 403, (user, response.status_code)
                assert not logged_in


def test_a_students_server_saves_quizzes_without_their_widget(class_hub, class_users, class_cycle):
    """The hub's environment loads course.save_hook: what a student saves reopens readable."""
    from course import quiz

    quiz.reset()
    question = quiz.Quiz(
        "Que garde user_states ?",
        [
            quiz.Option("L'état user: de chaque élève", True, "Une ligne par (app, élève)."),
            quiz.Option("Les messages", False, "Les messages sont dans events."),
        ],
    )
    data, meta = question._repr_mimebundle_()
    cell = nbformat.v4.new_code_cell(
        "quiz", outputs=[nbformat.v4.new_output("display_data", data=data, metadata=meta)]
    )
    content = json.loads(json.dumps(nbformat.v4.new_notebook(cells=[cell])))
    hub, student = class_hub, class_users["complet"]
    path = "/api/contents/quiz-enregistre.ipynb"
    body = {"type": "notebook", "format": "json", "content": content}
    saved = hub.server(student, "PUT", path, json=body)
    assert saved.status_code == 201, (saved.status_code, saved.text[:2000])
    stored = _ok(hub.server(student, "GET", path))["content"]["cells"][0]["outputs"][0]["data"]
    assert "application/vnd.jupyter.widget-view+json" not in stored
    assert "quiz-statique" in stored["text/html"]
    hub.server(student, "DELETE", path)


def test_only_instructors_read_the_course_template(class_users, class_cycle, course_env, run_as):
    """The template holds the solutions and the grader's hidden part: students cannot read it."""
    template = course_env / "share" / "cours"
    assert (template / "grader" / "nbgrader_config.py").is_file()
    assert (template / "solutions").is_dir()
    assert stat.S_IMODE(template.stat().st_mode) & 0o007 == 0
    prof, bob = class_users["prof"], class_users["partiel"]
    for target in (template / "grader", template / "solutions", template):
        refused = run_as(bob, "ls", str(target))
        assert refused.returncode != 0 and "Permission denied" in refused.stderr, target
    # the hub put the instructor in the template's group at spawn: their copy came from it
    assert run_as(prof, "ls", str(template / "grader")).returncode == 0
    prof_home = Path(__import__("pwd").getpwnam(prof).pw_dir)
    assert (prof_home / COURSE_DIR / "grader" / "nbgrader_config.py").is_file()


def test_the_instructor_holds_a_scoped_role_not_admin(class_hub, class_users, class_cycle):
    """Instructors see the class and restart a student's server, but not into their files."""
    hub, prof, ana = class_hub, class_users["prof"], class_users["complet"]
    headers = {"Authorization": f"token {hub.token_for(prof)}"}

    def as_prof(method: str, path: str) -> requests.Response:
        return requests.request(method, f"{hub.url}/hub/api{path}", headers=headers, timeout=30)

    me = _ok(as_prof("GET", "/user"))
    assert me["admin"] is False and "instructors" in me["groups"], me
    assert "cours-enseignant" in _ok(hub.api("GET", "/groups/instructors"))["roles"]
    listed = {u["name"] for u in _ok(as_prof("GET", "/users"))}
    assert set(class_users.values()) <= listed
    assert ana in _ok(as_prof("GET", "/groups/students"))["users"]
    # no admin right: neither create a user nor change the hub's roles
    assert as_prof("POST", "/users/intrus").status_code == 403
    assert as_prof("DELETE", f"/users/{ana}").status_code == 403
    # a student's files stay closed unless COURSE_HUB_INSTRUCTORS_ACCESS=1 was chosen
    response = hub.server(ana, "GET", "/api/contents", token_of=prof)
    assert response.status_code in (403, 404), response.status_code


def test_kernels_talk_to_their_server_over_private_unix_sockets(
    class_hub, class_users, class_cycle
):
    """No TCP port per kernel: ports picked at random by a class's servers collide."""
    import pwd

    hub, student = class_hub, class_users["partiel"]
    kernel = hub.server(student, "POST", "/api/kernels", json={"name": "python3"})
    assert kernel.status_code == 201, kernel.text[:500]
    kernel_id = kernel.json()["id"]
    try:
        runtime = Path(pwd.getpwnam(student).pw_dir) / ".jupyter-run"
        info = json.loads((runtime / f"kernel-{kernel_id}.json").read_text())
        assert info["transport"] == "ipc", info
        assert info["ip"].startswith(str(runtime)), info
        assert stat.S_IMODE(runtime.stat().st_mode) & 0o077 == 0  # the student's alone
    finally:
        hub.server(student, "DELETE", f"/api/kernels/{kernel_id}")
