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
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
import requests
from helpers import REPO

# The first test also pays for the module's set-up: building the shared environment on a fresh
# machine (about 1 min from PyPI), four servers and the whole class cycle (about 2 min).
pytestmark = [pytest.mark.hub, pytest.mark.timeout(900)]

COURSE_ID = "memoire-tuteur"
COURSE_DIR = "cours-memoire-tuteur"
PASSWORD = "mot-de-passe-de-la-classe"
STUDENT_ROLES = ("complet", "partiel", "casse")


# The course's own lab and sample answers (grader/submissions, with their expected scores).
LAB_NAME = "oublier"
LAB_NOTEBOOK = "oublier.ipynb"
LAB_CELL = "oublier"  # grade_id of the cell the student writes
SAMPLES = {"complet": "complete_vacuum", "partiel": "graine", "casse": "exception"}


@dataclass
class Lab:
    """What the class works on: the assignment, its answers per student and expected scores."""

    name: str
    notebook: str
    answers: dict[str, str]  # role -> text of the student's `oublier` cell
    expected: dict[str, float]
    max_score: float


@pytest.fixture(scope="module")
def lab() -> Lab:
    source = REPO / "solutions" / LAB_NAME / LAB_NOTEBOOK
    assert source.is_file(), f"le labo {source} manque"
    points = sum(
        cell.metadata.get("nbgrader", {}).get("points", 0)
        for cell in nbformat.read(source, as_version=4).cells
    )
    folder = REPO / "grader" / "submissions"
    expected = json.loads((folder / "attendus.json").read_text(encoding="utf-8"))
    return Lab(
        name=LAB_NAME,
        notebook=LAB_NOTEBOOK,
        answers={
            role: (folder / f"{sample}.py").read_text(encoding="utf-8").rstrip("\n")
            for role, sample in SAMPLES.items()
        },
        expected={role: float(expected[sample]["score"]) for role, sample in SAMPLES.items()},
        max_score=float(points),
    )


def _ok(response: requests.Response) -> dict | list:
    assert response.status_code == 200, (response.status_code, response.text[:2000])
    return response.json()


def _formgrader(hub, prof: str, path: str) -> dict:
    result = _ok(hub.server(prof, "POST", f"/formgrader/api/{path}", timeout=300))
    assert result.get("success"), json.dumps(result, ensure_ascii=False)[:4000]
    return result


def _assignment_list(hub, student: str) -> list[dict]:
    listing = _ok(hub.server(student, "GET", "/assignments", params={"course_id": COURSE_ID}))
    assert listing["success"], listing
    return listing["value"]


def _student_action(hub, student: str, action: str, lab: Lab) -> list[dict]:
    response = hub.server(
        student,
        "POST",
        f"/assignments/{action}",
        data={"course_id": COURSE_ID, "assignment_id": lab.name},
    )
    result = _ok(response)
    assert result.get("success"), result
    return result["value"]


@pytest.fixture(scope="module")
def class_cycle(class_hub, class_users, lab: Lab, exchange_dir: Path) -> dict:
    """Run the whole class once; the tests below read what happened."""
    hub, users = class_hub, class_users
    prof = users["prof"]
    for name in users.values():  # all four servers start through the hub's REST API
        hub.start_server(name)
    servers = {name: hub.wait_ready(name) for name in users.values()}

    # Instructor: generate the student version and release it, from formgrader.
    _formgrader(hub, prof, f"assignment/{lab.name}/assign")
    _formgrader(hub, prof, f"assignment/{lab.name}/release")

    # Students: fetch, answer, submit, each from their own server.
    for role in STUDENT_ROLES:
        student = users[role]
        released = [a for a in _assignment_list(hub, student) if a["assignment_id"] == lab.name]
        assert released and released[0]["status"] == "released", released
        _student_action(hub, student, "fetch", lab)
        path = f"/api/contents/{lab.name}/{lab.notebook}"
        model = _ok(hub.server(student, "GET", path))
        nb = model["content"]
        cells = [
            cell
            for cell in nb["cells"]
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == LAB_CELL
        ]
        assert len(cells) == 1, [c.get("metadata") for c in nb["cells"]]
        cells[0]["source"] = lab.answers[role]
        body = {"type": "notebook", "format": "json", "content": nb}
        assert hub.server(student, "PUT", path, json=body).status_code == 200
        after = _student_action(hub, student, "submit", lab)
        mine = [a for a in after if a["assignment_id"] == lab.name and a["status"] == "submitted"]
        assert mine, after

    # Instructor: collect, autograde each submission, generate and release feedback.
    _formgrader(hub, prof, f"assignment/{lab.name}/collect")
    for role in STUDENT_ROLES:
        _formgrader(hub, prof, f"submission/{lab.name}/{users[role]}/autograde")
    _formgrader(hub, prof, f"assignment/{lab.name}/generate_feedback")
    _formgrader(hub, prof, f"assignment/{lab.name}/release_feedback")
    submissions = _ok(hub.server(prof, "GET", f"/formgrader/api/submissions/{lab.name}"))

    # Students: fetch their feedback.
    feedback = {}
    for role in STUDENT_ROLES:
        student = users[role]
        listing = _student_action(hub, student, "fetch_feedback", lab)
        feedback[role] = [a for a in listing if a["assignment_id"] == lab.name]
    return {"servers": servers, "submissions": submissions, "feedback": feedback}


def test_each_server_runs_as_its_own_unix_user(class_hub, class_users, class_cycle):
    import pwd

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


def test_autograded_scores_match_each_answer(class_users, class_cycle, lab: Lab):
    assert lab.expected["complet"] == lab.max_score > lab.expected["partiel"]
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
    """The course's own report tool, run by the instructor from the shared environment."""
    import csv
    import pwd

    prof = class_users["prof"]
    grader = Path(pwd.getpwnam(prof).pw_dir) / COURSE_DIR / "grader"
    result = run_as(
        prof,
        str(course_env / "env" / "bin" / "python"),
        "-m",
        "grading.report",
        "--db",
        f"sqlite:///{grader / 'gradebook.db'}",
        "--assignment",
        lab.name,
        "--out",
        str(grader / "rapport"),
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
        disabled[name] = json.loads(config.group(1)).get("disabledExtensions", {})
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

    quiz.reinitialiser()
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
