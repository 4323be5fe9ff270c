"""Zero to JupyterHub's conditions, reproduced on this machine: a class cycle in "pods".

Kubernetes runs every server under a uid derived from the user's name (kube_recipe.py), with no
passwd entry in the image, with HOME on the user's volume and nbgrader's exchange on a shared
volume. nbgrader names the exchange's user with pwd.getpwuid(os.getuid()): without an entry,
fetch, submit and fetch_feedback raise KeyError. Here a real hub runs the values' extraConfig and
starts each server as its pod would (tests/hub/kube.py: uid, gid, fsGroup, volumes and image
files mounted at their paths in a private mount namespace, the image's environment and the
values' extraEnv only, init containers, no privilege escalation), through the image's wrapper
cours-singleuser. Every value reproduced is read from values.yaml and the Dockerfile.
"""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shlex
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from chart_hub import chart_hub
from classhub import HUB_DIR, ClassHub, environment_of, launch_hub, open_tempdir, write_roster
from cycle import (
    COURSE_ID,
    Lab,
    assignment_list,
    feedback_score,
    formgrader,
    load_lab,
    ok,
    student_action,
    write_answer,
)
from helpers import alive
from kube_recipe import uid_of

pytestmark = [pytest.mark.hub, pytest.mark.timeout(900), pytest.mark.recette("kubernetes")]

Z2JH = HUB_DIR / "z2jh"
IMAGE_PREFIX = "/opt/cours-memoire-tuteur"
SAMPLES = {"ana": "complete_vacuum", "bob": "graine"}


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load((Z2JH / "values.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def dockerfile() -> str:
    return (Z2JH / "Dockerfile").read_text(encoding="utf-8")


def _stage_run_env(dockerfile: str, stage: str, marker: str) -> dict[str, str]:
    """KEY=value settings of the RUN line of `stage` that calls the installer with `marker`."""
    text = re.split(r"^FROM ", dockerfile, flags=re.M)
    (body,) = [part for part in text if re.match(rf"\S+ AS {stage}\b", part)]
    logical = body.replace("\\\n", " ")
    (line,) = [ln for ln in logical.splitlines() if ln.startswith("RUN ") and marker in ln]
    return dict(w.split("=", 1) for w in shlex.split(line[4:]) if re.match(r"^[A-Z_]+=", w))


@pytest.fixture(scope="module")
def kube_users(values) -> dict[str, str]:
    """Hub users only: no Unix account anywhere, as in a Kubernetes cluster."""
    tag = secrets.token_hex(2)
    return {"prof": f"k8s{tag}prof", "ana": f"k8s{tag}ana", "bob": f"k8s{tag}bob"}


@pytest.fixture(scope="module")
def kube_hub(
    course_env: Path, values: dict, dockerfile: str, kube_users: dict[str, str]
) -> Iterator[ClassHub]:
    import kube

    work = open_tempdir("cours-k8s-")
    work.chmod(0o700)  # the "cluster's" storage: no pod reaches it but through its mounts
    try:
        # The instructors' image: its template, built by the Dockerfile's own installer line.
        settings = _stage_run_env(dockerfile, "enseignant", "--template-only")
        assert settings == {"COURSE_HUB_INSTRUCTORS_GROUP": "users"}, settings
        built = subprocess.run(
            ["bash", str(HUB_DIR / "install-course-env.sh"), "--template-only"],
            env={**os.environ, **settings, "COURSE_HUB_PREFIX": str(work / "enseignant")},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert built.returncode == 0, built.stderr
        # The students' image is built with COURSE_HUB_TEMPLATE=0: no template at all.
        assert (
            _stage_run_env(dockerfile, "eleve", "install-course-env.sh")["COURSE_HUB_TEMPLATE"]
            == "0"
        )
        (work / "no-template").mkdir(mode=0o755)
        image = values["singleuser"]["image"]
        student_image = f"{image['name']}:{image['tag']}"
        instructor_image = values["hub"]["extraEnv"]["COURSE_HUB_INSTRUCTOR_IMAGE"]
        env_files = [[str(course_env), IMAGE_PREFIX], [str(course_env), str(course_env)]]
        template = f"{IMAGE_PREFIX}/share/cours"
        reproduction = {
            "image_binds": {
                student_image: [*env_files, [str(work / "no-template"), template]],
                instructor_image: [*env_files, [str(work / "enseignant/share/cours"), template]],
            },
            "image_env": {
                student_image: kube.dockerfile_env(dockerfile, "eleve"),
                instructor_image: kube.dockerfile_env(dockerfile, "enseignant"),
            },
            "volumes_root": str(work / "volumes"),
        }
        (work / "volumes").mkdir()
        # the exchange's volume after the admin's one command on the storage (ADMIN.md, « Le
        # stockage de l'échange »): the init container runs as the releasing instructor, no root
        (work / "volumes" / "nbgrader-exchange").mkdir(mode=0o755)
        (work / "volumes" / "nbgrader-exchange").chmod(0o1777)
        # hub.extraFiles as `helm --set-file` mounts them, the values' extraConfig as the chart
        # runs it (tests/hub/chart_hub.py)
        chart = chart_hub(
            work,
            Z2JH / "values.yaml",
            course_env,
            {n: "instructor" if key == "prof" else "student" for key, n in kube_users.items()},
            reproduction,
        )
        roster, config = chart.roster, chart.config
        hub_env = {**chart.settings, "COURSE_HUB_ROSTER_SYNC_EVERY": "1"}
        with launch_hub(
            prefix=course_env,
            workdir=work,
            roster=roster,
            exchange=work / "volumes" / "nbgrader-exchange",
            settings=hub_env,
            hub_config=config,
        ) as hub:
            yield hub
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module")
def lab() -> Lab:
    return load_lab(list(SAMPLES.values()))


@pytest.fixture(scope="module")
def kube_cycle(kube_hub: ClassHub, kube_users: dict[str, str], lab: Lab, values: dict) -> dict:
    """The class cycle of test_classroom_hub.py, in pods: two students and their instructor."""
    hub, users = kube_hub, kube_users
    prof = users["prof"]
    # the condition reproduced: the uids the recipe computes exist nowhere on this machine
    for key in users:
        with pytest.raises(KeyError):
            pwd.getpwuid(uid_of(users[key]))
    # The first pod of the class is a student's: its init container has made the course's
    # folder, for the instructor who releases, before that student's server runs.
    first = users["ana"]
    hub.start_server(first)
    hub.wait_ready(first)
    course = Path(hub.log_path).parent / "volumes" / "nbgrader-exchange" / COURSE_ID
    made = {p.name: (p.stat().st_uid, stat.S_IMODE(p.stat().st_mode)) for p in course.iterdir()}
    made[COURSE_ID] = (course.stat().st_uid, stat.S_IMODE(course.stat().st_mode))
    for name in users.values():
        if name != first:
            hub.start_server(name)
    for name in users.values():
        hub.wait_ready(name)

    formgrader(hub, prof, f"assignment/{lab.name}/assign")
    formgrader(hub, prof, f"assignment/{lab.name}/release")
    for key, sample in SAMPLES.items():
        student = users[key]
        released = [a for a in assignment_list(hub, student) if a["assignment_id"] == lab.name]
        assert released and released[0]["status"] == "released", released
        student_action(hub, student, "fetch", lab)
        write_answer(hub, student, lab, lab.answers[sample])
        after = student_action(hub, student, "submit", lab)
        assert [a for a in after if a["status"] == "submitted"], after
    collected = formgrader(hub, prof, f"assignment/{lab.name}/collect")
    for key in SAMPLES:
        formgrader(hub, prof, f"submission/{lab.name}/{users[key]}/autograde")
    formgrader(hub, prof, f"assignment/{lab.name}/generate_feedback")
    formgrader(hub, prof, f"assignment/{lab.name}/release_feedback")
    submissions = ok(hub.server(prof, "GET", f"/formgrader/api/submissions/{lab.name}"))
    scores = {}
    for key in SAMPLES:
        student_action(hub, users[key], "fetch_feedback", lab)
        scores[key] = feedback_score(hub, users[key], lab)
    return {
        "made": made,
        "collected": collected,
        "submissions": submissions,
        "scores": scores,
    }


def _in_pod(pid: int, uid: int, *command: str) -> subprocess.CompletedProcess[str]:
    """Run a command inside a pod's mount namespace as its user (what its terminal would do)."""
    status = Path(f"/proc/{pid}/status").read_text()
    gid = int(re.search(r"^Gid:\s+(\d+)", status, re.M).group(1))
    groups = re.search(r"^Groups:\s*(.*)$", status, re.M).group(1).split()
    return subprocess.run(
        ["nsenter", f"--target={pid}", "--mount", "--", "setpriv", f"--reuid={uid}"]
        + [f"--regid={gid}", f"--groups={','.join(groups) or gid}", "--", *command],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_servers_run_as_the_values_uid_without_passwd_entry(kube_hub, kube_users, kube_cycle):
    single = yaml.safe_load((Z2JH / "values.yaml").read_text())["singleuser"]
    for name in kube_users.values():
        pid = kube_hub.server_pids[name]
        status = Path(f"/proc/{pid}/status").read_text()
        uid = int(re.search(r"^Uid:\s+(\d+)", status, re.M).group(1))
        assert uid == uid_of(name)
        assert re.search(r"^Gid:\s+100\b", status, re.M), status  # c.KubeSpawner.gid
        assert re.search(rf"^Groups:\s*{single['fsGid']}\s*$", status, re.M), status
        with pytest.raises(KeyError):
            pwd.getpwuid(uid)
        assert os.readlink(f"/proc/{pid}/ns/mnt") != os.readlink("/proc/self/ns/mnt")
        env = environment_of(pid)
        # HOME on the user's volume; the passwd entry came from cours-singleuser's nss_wrapper
        assert env["HOME"] == single["storage"]["homeMountPath"] == "/home/jovyan"
        assert "libnss_wrapper" in env["LD_PRELOAD"] and env["USER"] == name
        entry = _in_pod(pid, uid, "getent", "passwd", str(uid))
        assert entry.returncode != 0  # outside the server's process tree: still no entry
        assert env["NBGRADER_EXCHANGE"] == single["extraEnv"]["NBGRADER_EXCHANGE"]


def test_the_class_cycle_grades_both_students(kube_users, kube_cycle, lab: Lab):
    by_student = {row["student"]: row for row in kube_cycle["submissions"]}
    for key, sample in SAMPLES.items():
        row = by_student[kube_users[key]]  # named after the hub user, not "jovyan" nor a uid
        assert row["autograded"] and row["score"] == pytest.approx(lab.expected[sample]), row
        score, total = kube_cycle["scores"][key]
        assert float(score) == pytest.approx(lab.expected[sample])
        assert float(total) == pytest.approx(lab.max_score)
    # collect checks each submission's owner by name: the instructor's pod knows the class's uids
    log = kube_cycle["collected"]["log"]
    for key in SAMPLES:
        assert f"Collecting submission: {kube_users[key]} {lab.name}" in log, log
    assert "cheating attempt" not in log and "unknown id" not in log, log


def test_students_cannot_read_each_other(kube_hub, kube_users, kube_cycle, lab: Lab):
    ana, bob = kube_users["ana"], kube_users["bob"]
    bob_pid, bob_uid = kube_hub.server_pids[bob], uid_of(bob)
    exchange = "/srv/nbgrader/exchange"
    denied = {
        "inbound listing": ["ls", f"{exchange}/{COURSE_ID}/inbound"],
        "feedback listing": ["ls", f"{exchange}/{COURSE_ID}/feedback"],
    }
    for what, command in denied.items():
        result = _in_pod(bob_pid, bob_uid, *command)
        assert result.returncode != 0 and "Permission denied" in result.stderr, what
    # bob's pod holds only his own volume: ana's answer is nowhere in it
    homes = _in_pod(bob_pid, bob_uid, "ls", "-A", "/home")
    assert homes.stdout.split() == ["jovyan"], homes
    mine = _in_pod(bob_pid, bob_uid, "cat", f"/home/jovyan/{lab.name}/{lab.notebook}")
    assert mine.returncode == 0 and "oublier" in mine.stdout
    ana_volume = Path(kube_hub.log_path).parent / "volumes" / f"claim-{ana}"
    assert (ana_volume / lab.name / lab.notebook).is_file()  # it exists, outside bob's pod
    assert _in_pod(bob_pid, bob_uid, "ls", str(ana_volume)).returncode != 0
    # and the hub lets no student into another's server
    response = kube_hub.server(ana, "GET", "/api/contents", token_of=bob)
    assert response.status_code in (403, 404), response.status_code


def test_the_first_students_pod_finds_the_course_folder_made_for_the_instructor(
    kube_hub, kube_users, kube_cycle
):
    """Point 6 on Kubernetes: made by the chart's init container, owned by the releasing uid."""
    prof_uid = uid_of(kube_users["prof"])
    assert kube_cycle["made"] == {
        COURSE_ID: (prof_uid, 0o755),
        "outbound": (prof_uid, 0o755),
        "inbound": (prof_uid, 0o2733),
        "feedback": (prof_uid, 0o711),
    }
    # and the release worked from the instructor's pod (the cycle above): nbgrader found the
    # folder its own. Now a student's terminal: no squatting, no listing; the admin's storage
    # check, run in that pod as the student, finds the exchange private.
    bob_pid, bob_uid = kube_hub.server_pids[kube_users["bob"]], uid_of(kube_users["bob"])
    course = f"/srv/nbgrader/exchange/{COURSE_ID}"
    for command in (["rm", "-rf", course], ["mv", course, "/srv/nbgrader/exchange/x"]):
        assert _in_pod(bob_pid, bob_uid, *command).returncode != 0, command
    check = _in_pod(
        bob_pid,
        bob_uid,
        f"{IMAGE_PREFIX}/env/bin/python",
        "-I",
        f"{IMAGE_PREFIX}/etc/exchange_check.py",
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == f"échange privé\u00a0: {course}", check.stdout


def test_only_the_instructors_image_holds_the_course_template(kube_hub, kube_users, kube_cycle):
    template = f"{IMAGE_PREFIX}/share/cours"
    for key in ("ana", "bob"):
        pid = kube_hub.server_pids[kube_users[key]]
        listing = _in_pod(pid, uid_of(kube_users[key]), "ls", "-A", template)
        assert listing.returncode == 0 and listing.stdout.strip() == "", listing
    prof_pid = kube_hub.server_pids[kube_users["prof"]]
    listing = _in_pod(prof_pid, uid_of(kube_users["prof"]), "ls", f"{template}/grader")
    assert "nbgrader_config.py" in listing.stdout, listing


def test_the_wrapper_gives_a_home_and_a_name_to_a_bare_uid(course_env):
    """HOME=/ and no passwd entry (a pod without extraEnv HOME): the wrapper fixes both."""
    nbgrader_probe = "from nbgrader.utils import get_username; print(get_username())"
    probe = (
        "import os, pwd; e = pwd.getpwuid(os.getuid()); "
        f"print(e.pw_dir, os.environ['HOME']); {nbgrader_probe}"
    )
    uid = 29999
    with pytest.raises(KeyError):
        pwd.getpwuid(uid)
    scratch = open_tempdir("cours-k8s-tmp-")
    os.chown(scratch, uid, 100)  # the pod's own /tmp
    env = {
        "HOME": "/",
        "JUPYTERHUB_USER": "zoe",
        "TMPDIR": str(scratch),
        "PATH": f"{course_env}/env/bin:/usr/bin:/bin",
    }
    try:
        result = subprocess.run(
            ["setpriv", f"--reuid={uid}", "--regid=100", "--clear-groups", "--"]
            + [str(course_env / "env" / "bin" / "cours-singleuser"), "python", "-c", probe],
            env=env,
            capture_output=True,
            text=True,
            cwd="/",
            timeout=60,
        )
        # the same process without the wrapper: what nbgrader met in a pod before
        bare = subprocess.run(
            ["setpriv", f"--reuid={uid}", "--regid=100", "--clear-groups", "--"]
            + [str(course_env / "env" / "bin" / "python"), "-c", nbgrader_probe],
            env=env,
            capture_output=True,
            text=True,
            cwd="/",
            timeout=60,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["/home/jovyan", "/home/jovyan", "zoe"]
    assert bare.returncode != 0 and "KeyError" in bare.stderr, bare.stderr


def test_a_roster_edit_removes_and_demotes_in_pods(kube_hub, kube_users, kube_cycle, values):
    """The one hub configuration's roster sync, on Kubernetes: a line removed loses the login
    and the user; a demoted instructor loses the group, then the instructors' image (the
    template: solutions, hidden tests) and formgrader; a promoted student gets the group and,
    at their next pod, the instructors' image; with no hub restart. Last of the module: it
    changes the class."""
    hub = kube_hub
    prof, bob = kube_users["prof"], kube_users["bob"]
    roster = Path(hub.env["COURSE_HUB_ROSTER"])
    hub_pid, prof_pid, bob_pid = hub.process.pid, hub.server_pids[prof], hub.server_pids[bob]
    assert hub.login_status(bob) == 302  # still in the class: let in
    assert "instructors" in hub.groups_of(prof)
    assert (
        environment_of(prof_pid)["JUPYTER_IMAGE"]
        == values["hub"]["extraEnv"]["COURSE_HUB_INSTRUCTOR_IMAGE"]
    )

    ana = kube_users["ana"]
    assert "instructors" not in hub.groups_of(ana)
    write_roster(roster, {prof: "student", ana: "instructor"})
    hub.wait_until(lambda: hub.api("GET", f"/users/{bob}").status_code == 404, "bob toujours là")
    hub.wait_until(lambda: not alive(bob_pid), "le pod de bob tourne encore")
    assert hub.login_status(bob) == 403
    hub.wait_until(lambda: "instructors" not in hub.groups_of(prof), "prof toujours enseignant")
    assert f"formgrade-{COURSE_ID}" not in hub.groups_of(prof)
    hub.wait_until(lambda: not alive(prof_pid), "l'ancien pod d'enseignant tourne encore")
    assert hub.process.pid == hub_pid and hub.process.poll() is None  # no restart

    # the demoted instructor's next pod is a student's: image, configuration, no template
    hub.server_pids.pop(prof, None)
    hub.wait_stopped(prof, timeout=90)
    hub.start_server(prof)
    hub.wait_ready(prof)
    pid = hub.server_pids[prof]
    environment = environment_of(pid)
    image = values["singleuser"]["image"]
    assert environment["JUPYTER_IMAGE"] == f"{image['name']}:{image['tag']}"
    assert environment["COURSE_ROLE"] == "students" and "COURSE_HUB_PASSWD" not in environment
    listing = _in_pod(pid, uid_of(prof), "ls", "-A", f"{IMAGE_PREFIX}/share/cours")
    assert listing.returncode == 0 and listing.stdout.strip() == "", listing
    assert hub.server(prof, "GET", "/formgrader/api/assignments").status_code == 404

    # the promoted student: the group at once, the instructors' image at their next pod
    hub.wait_until(lambda: "instructors" in hub.groups_of(ana), "ana toujours élève")
    if ana in hub.server_pids:
        hub.api("DELETE", f"/users/{ana}/server")
        hub.server_pids.pop(ana, None)
        hub.wait_stopped(ana, timeout=90)
    hub.start_server(ana)
    hub.wait_ready(ana)
    promoted = environment_of(hub.server_pids[ana])
    instructor_image = values["hub"]["extraEnv"]["COURSE_HUB_INSTRUCTOR_IMAGE"]
    assert promoted["JUPYTER_IMAGE"] == instructor_image
    assert promoted["COURSE_ROLE"] == "instructors"
    assert hub.process.pid == hub_pid and hub.process.poll() is None  # still no restart
