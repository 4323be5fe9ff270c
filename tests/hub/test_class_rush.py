"""A class rush on the one-machine hub, measured: 30 real students and their instructor
(`make test-classe`; 15 in `make test`).

The instructor releases the TP; then all the students log in and start their servers at once,
fetch the TP, run its set-up cells in their own kernel, answer and submit, each in a thread of
their own; the instructor, from a terminal of their server, collects, grades them all with the
course's class command (--jobs 2), generates and releases feedback; every student fetches it.
Nothing may be lost: every server started, every submission graded with its expected score,
every feedback page fetched. Printed (and written to .artefacts/classe.json): the time until
every server is ready, p50/p95 of each student step, grading time per submission, the sitting's
CPU (the hub's; the students' servers and kernels'), peak memory of the machine. Bounded: one
Unix user and one thread per student, loopback only, a deadline on every wait; every process
is stopped by its id and every user removed afterwards. `make test-classe` runs it alone.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import shutil
import statistics
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import psutil
import pytest
import requests
from classhub import (
    HUB_DIR,
    PASSWORD,
    REPO,
    ClassHub,
    as_user,
    environment_of,
    hub_settings,
    launch_hub,
    make_exchange,
    open_tempdir,
    unix_users,
    write_roster,
)
from cycle import Lab, formgrader, load_lab, ok, page_score, student_action, write_answer

from course.labo.tp_notebook import ANSWER_GRADE_ID

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.timeout(2700)]

# 15 in the suite (`make test`: the rush's 30 servers on 2 cores were a sixth of the suite's CPU
# and the part that failed first under a neighbour's load); `make test-classe` runs the 30
# whose figures grader/hub/ADMIN.md gives
STUDENTS = int(os.environ.get("COURSE_RUSH_STUDENTS", "15"))
SAMPLES = ("complete_vacuum", "graine", "exception")  # 10, 7 and 5 points: a class's mix
JOBS = 2
# The rush's servers listen on 29100 + hub user id: apart from every other test hub's (classhub.
# port_base: 20000-28999 + id), so the rush may run beside the other hub tests (another worker).
PORT_BASE = 29100
# The instructor's class grading command, run from the grader/ folder of their course copy (the
# class tools find the course from there, as ADMIN.md says).
CLASS_GRADING = ["python", "-m", "grading.autograde", "oublier", "--jobs", str(JOBS)]


class MemoryPeak:
    """The machine's used memory (MemTotal - MemAvailable), sampled every 0.5 s in a thread."""

    def __init__(self) -> None:
        self.baseline = self.peak = self.used()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @staticmethod
    def used() -> int:
        fields = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
        kib = int(fields["MemTotal"].split()[0]) - int(fields["MemAvailable"].split()[0])
        return kib * 1024

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self.peak = max(self.peak, self.used())

    def __enter__(self) -> MemoryPeak:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


@pytest.fixture(scope="module")
def rush_users(hub_requirements) -> Iterator[dict[str, list[str] | str]]:
    tag = secrets.token_hex(2)
    prof = f"hubr{tag}prof"
    students = [f"hubr{tag}e{k:02d}" for k in range(1, STUDENTS + 1)]
    with unix_users([prof, *students]):
        yield {"prof": prof, "students": students}


def members_of(rush_users) -> dict[str, str]:
    """The class roster: {user name: role}."""
    members = {rush_users["prof"]: "instructor"}
    members.update({name: "student" for name in rush_users["students"]})
    return members


@pytest.fixture(scope="module")
def rush_hub(course_env: Path, rush_users) -> Iterator[ClassHub]:
    work = open_tempdir("cours-hub-classe-")
    members = members_of(rush_users)
    try:
        with launch_hub(
            prefix=course_env,
            workdir=work,
            roster=write_roster(work / "classe.csv", members),
            exchange=make_exchange(work / "exchange"),
            settings=hub_settings(COURSE_HUB_PORT_BASE=str(PORT_BASE)),
            hub_config=HUB_DIR / "jupyterhub_config.py",
        ) as hub:
            yield hub
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _log_in_and_start(hub: ClassHub, name: str) -> None:
    """What a student's browser does: the login form, then « Start My Server »."""
    with requests.Session() as browser:
        page = browser.get(f"{hub.url}/hub/login", timeout=120)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)
        form = {"username": name, "password": PASSWORD}
        if xsrf:
            form["_xsrf"] = xsrf.group(1)
        login = browser.post(f"{hub.url}/hub/login", data=form, allow_redirects=False, timeout=120)
        assert login.status_code == 302, (name, login.status_code)
        spawn = browser.get(f"{hub.url}/hub/spawn", allow_redirects=False, timeout=120)
        assert spawn.status_code in (200, 302), (name, spawn.status_code)


def _run_cells(hub: ClassHub, student: str, codes: list[str]) -> None:
    """Run code cells in a new kernel of the student's server, through its websocket."""
    import websocket

    kernel = ok_created(hub.server(student, "POST", "/api/kernels", json={"name": "python3"}))
    url = hub.url.replace("http://", "ws://")
    ws = websocket.create_connection(
        f"{url}/user/{student}/api/kernels/{kernel['id']}/channels",
        header=[f"Authorization: token {hub.token_for(student)}"],
        timeout=300,
    )
    session = uuid.uuid4().hex
    try:
        for code in codes:
            msg_id = uuid.uuid4().hex
            header = {
                "msg_id": msg_id,
                "msg_type": "execute_request",
                "username": student,
                "session": session,
                "date": datetime.now(UTC).isoformat(),
                "version": "5.3",
            }
            content = {"code": code, "silent": False, "store_history": True}
            content |= {"user_expressions": {}, "allow_stdin": False, "stop_on_error": True}
            message = {"header": header, "parent_header": {}, "metadata": {}, "content": content}
            ws.send(json.dumps({**message, "channel": "shell", "buffers": []}))
            errors = []
            while True:
                try:
                    reply = json.loads(ws.recv())
                except websocket.WebSocketException as lost:
                    raise AssertionError(f"{student}: {lost!r}\n{hub.log_tail(120)}") from lost
                if reply.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if reply["msg_type"] == "error":
                    errors.append(reply["content"]["ename"])
                if reply["msg_type"] == "execute_reply":
                    assert reply["content"]["status"] == "ok" and not errors, (student, errors)
                    break
    finally:
        ws.close()


def ok_created(response: requests.Response) -> dict:
    assert response.status_code in (200, 201), (response.status_code, response.text[:500])
    return response.json()


def _setup_cells(nb: dict) -> list[str]:
    """The code cells before the student's answer: what a student runs first."""
    codes = []
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == ANSWER_GRADE_ID:
            return codes
        if cell["cell_type"] == "code":
            source = cell["source"]
            codes.append("".join(source) if isinstance(source, list) else source)
    raise AssertionError("pas de cellule de réponse dans le TP")


def _cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by these live processes and their descendants."""
    total = 0.0
    for pid in pids:
        try:
            top = psutil.Process(pid)
            for proc in [top, *top.children(recursive=True)]:
                times = proc.cpu_times()
                total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


def _timed(times: dict, key: str, action, *args):
    start = time.monotonic()
    result = action(*args)
    times[key] = time.monotonic() - start
    return result


def _instructor(prof: str, prof_pid: int, course: Path, *command: str, timeout: float = 1800):
    """A terminal of the instructor's JupyterLab: the server's environment, in the course."""
    variables = [f"{key}={value}" for key, value in environment_of(prof_pid).items()]
    result = as_user(prof, "env", "-i", *variables, *command, cwd=course, timeout=timeout)
    assert result.returncode == 0, (command, result.stdout[-3000:], result.stderr[-3000:])
    return result


@pytest.fixture(scope="module")
def rush(rush_hub: ClassHub, rush_users) -> dict:
    hub, prof, students = rush_hub, rush_users["prof"], rush_users["students"]
    lab: Lab = load_lab(list(SAMPLES))
    answer_of = {name: SAMPLES[k % len(SAMPLES)] for k, name in enumerate(students)}
    with MemoryPeak() as memory:
        # before the sitting: the instructor releases the TP from formgrader
        hub.start_server(prof)
        hub.wait_ready(prof)
        formgrader(hub, prof, f"assignment/{lab.name}/assign")
        formgrader(hub, prof, f"assignment/{lab.name}/release")

        # the sitting: everyone at once
        start = time.monotonic()
        ready_at: dict[str, float] = {}
        times: dict[str, dict[str, float]] = {name: {} for name in students}

        def student_work(name: str) -> None:
            _log_in_and_start(hub, name)
            hub.wait_ready(name, timeout=600)
            ready_at[name] = time.monotonic() - start
            mine = times[name]
            _timed(mine, "fetch", student_action, hub, name, "fetch", lab)
            nb = ok(hub.server(name, "GET", f"/api/contents/{lab.name}/{lab.notebook}"))
            _timed(mine, "setup", _run_cells, hub, name, _setup_cells(nb["content"]))
            write_answer(hub, name, lab, lab.answers[answer_of[name]])
            _timed(mine, "submit", student_action, hub, name, "submit", lab)

        with ThreadPoolExecutor(max_workers=len(students)) as pool:
            futures = {name: pool.submit(student_work, name) for name in students}
            for name, future in futures.items():
                try:
                    future.result(timeout=1800)
                except Exception as failed:
                    # the hub's log holds every server's: keep it where the run's figures go
                    kept = REPO / ".artefacts" / "classe-hub.log"
                    kept.parent.mkdir(exist_ok=True)
                    shutil.copy(hub.log_path, kept)
                    raise AssertionError(f"{name} : {failed!r} (journal : {kept})") from failed
        sitting = time.monotonic() - start
        # where the sitting's CPU went (the hub alone; each student's server with its kernel)
        hub_cpu = psutil.Process(hub.process.pid).cpu_times()
        cpu = {
            "hub": hub_cpu.user + hub_cpu.system,
            "servers_and_kernels": _cpu_seconds([hub.server_pids[name] for name in students]),
        }

        # after the sitting: the instructor grades the class from a terminal
        course = Path(pwd.getpwnam(prof).pw_dir) / "cours-memoire-tuteur" / "grader"
        prof_pid = hub.server_pids[prof]
        # the class comes from the hub's roster (the instructor keeps a copy in the course)
        roster = write_roster(course / "classe.csv", members_of(rush_users))
        os.chown(roster, pwd.getpwnam(prof).pw_uid, -1)
        _instructor(prof, prof_pid, course, "cours-roster", "eleves", "classe.csv", "-o", "e.csv")
        _instructor(prof, prof_pid, course, "nbgrader", "db", "student", "import", "e.csv")
        _instructor(prof, prof_pid, course, "nbgrader", "collect", lab.name)
        grading_start = time.monotonic()
        graded = _instructor(prof, prof_pid, course, *CLASS_GRADING)
        grading = time.monotonic() - grading_start
        _instructor(prof, prof_pid, course, "nbgrader", "generate_feedback", lab.name)
        _instructor(prof, prof_pid, course, "nbgrader", "release_feedback", lab.name)

        def fetch_feedback(name: str) -> str:
            _timed(times[name], "feedback", student_action, hub, name, "fetch_feedback", lab)
            folder = ok(hub.server(name, "GET", f"/api/contents/{lab.name}/feedback"))
            (stamp,) = [item["name"] for item in folder["content"] if item["type"] == "directory"]
            page = f"/api/contents/{lab.name}/feedback/{stamp}/{Path(lab.notebook).stem}.html"
            return ok(hub.server(name, "GET", page))["content"]

        with ThreadPoolExecutor(max_workers=len(students)) as pool:
            pages = dict(zip(students, pool.map(fetch_feedback, students), strict=True))
    return {
        "lab": lab,
        "answer_of": answer_of,
        "ready_at": ready_at,
        "times": times,
        "sitting": sitting,
        "grading": grading,
        "graded_output": graded.stdout + graded.stderr,
        "pages": pages,
        "gradebook": course / "gradebook.db",
        "memory": memory,
        "cpu": cpu,
    }


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def test_thirty_students_nothing_lost(rush_users, rush, capsys):
    students, lab = rush_users["students"], rush["lab"]
    assert sorted(rush["ready_at"]) == sorted(students)  # every server started
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{rush['gradebook']}") as gradebook:
        scores = {s.student.id: s.score for s in gradebook.assignment_submissions(lab.name)}
    assert sorted(scores) == sorted(students)  # every submission graded
    for name in students:
        expected = lab.expected[rush["answer_of"][name]]
        assert scores[name] == pytest.approx(expected), name
        shown, _ = page_score(rush["pages"][name])
        assert float(shown) == pytest.approx(expected), name  # every feedback
    memory = rush["memory"]
    per_step = {
        step: _percentiles([rush["times"][name][step] for name in students])
        for step in ("fetch", "setup", "submit", "feedback")
    }
    figures = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "students": len(students),
        "cores": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "all_servers_ready_s": round(max(rush["ready_at"].values()), 1),
        "sitting_s": round(rush["sitting"], 1),
        **{f"{step}_p50_s": round(p50, 2) for step, (p50, _) in per_step.items()},
        **{f"{step}_p95_s": round(p95, 2) for step, (_, p95) in per_step.items()},
        "grading_jobs": JOBS,
        "grading_total_s": round(rush["grading"], 1),
        "grading_per_submission_s": round(rush["grading"] / len(students), 2),
        "sitting_cpu_hub_s": round(rush["cpu"]["hub"], 1),
        "sitting_cpu_students_s": round(rush["cpu"]["servers_and_kernels"], 1),
        "memory_total_gib": round(
            os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1
        ),
        "memory_baseline_gib": round(memory.baseline / 2**30, 2),
        "memory_peak_gib": round(memory.peak / 2**30, 2),
        "memory_per_student_mib": round((memory.peak - memory.baseline) / len(students) / 2**20),
    }
    out = REPO / ".artefacts" / "classe.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    with capsys.disabled():
        print(f"\n--- rush de la classe ({len(students)} élèves, {out}) ---")
        for key, value in figures.items():
            print(f"{key:28} {value}")
