"""Kubernetes' exchange: made by the chart's init container, and the admin's storage check.

The chart's recipe (z2jh/values.yaml) makes the course's folder in the shared exchange volume
with an init container that runs first in every pod, as the releasing instructor's uid (the
hub's hook sets runAsUser), never root: here its very script runs on a real folder, under the
security context the hook gives it, as a real unprivileged account that cannot chown, which is
what root is on a share with NFS root_squash (the default). An exchange root it cannot make 1777
stops it with the admin's one command; once the admin ran it, the folder is made. A student who
made the folder first is reported, not taken over. Then the storage
check an admin runs after deploying (exchange_check.py, as a student) on the folder the chart
gives, with two real student accounts in the pods' group (gid 100, the fsGroup): private as
made; once regrouped as a storage driver applies `fsGroup` (kubelet's volume ownership: every
entry given the group, folders g+rwx and setgid, files g+rw), one student really lists the
other's submission, and the check names that hole. test_kubernetes_conditions.py runs the same
init container in the reproduced pods of a full class cycle.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from classhub import COURSE_ID, unix_users
from conftest import HUB_DIR
from kube_recipe import with_exchange_env

pytestmark = [pytest.mark.hub, pytest.mark.recette("kubernetes")]

VALUES = HUB_DIR / "z2jh" / "values.yaml"
FS_GROUP = 100  # singleuser.fsGid: every pod's supplementary group


@pytest.fixture(scope="module")
def accounts(hub_requirements) -> Iterator[dict[str, str]]:
    tag = secrets.token_hex(2)
    names = {"prof": f"kxc{tag}prof", "ana": f"kxc{tag}ana", "bob": f"kxc{tag}bob"}
    with unix_users(list(names.values())):
        yield names


def _init_container(owner_uid: int) -> dict:
    """The values' init container as the hub's hook hands it to KubeSpawner."""
    values = yaml.safe_load(VALUES.read_text(encoding="utf-8"))
    assert values["singleuser"]["fsGid"] == FS_GROUP
    (container,) = with_exchange_env(values["singleuser"]["initContainers"], [], owner_uid)
    return container


def run_init_container(exchange: Path, owner_uid: int) -> subprocess.CompletedProcess[str]:
    """The values' init container script, as the uid and group the hook gives it (no root, no
    new privilege), with the env the values and hook give it."""
    container = _init_container(owner_uid)
    context = container["securityContext"]
    assert context["runAsNonRoot"] and not context["allowPrivilegeEscalation"]
    assert context["runAsUser"] == owner_uid != 0
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["NBGRADER_EXCHANGE"] == container["volumeMounts"][0]["mountPath"]
    env.update(  # on this machine, the volume is a folder of the test; the hook adds the rest
        NBGRADER_EXCHANGE=str(exchange),
        COURSE_ID=COURSE_ID,
        COURSE_EXCHANGE_OWNER_UID=str(owner_uid),
        PATH="/usr/sbin:/usr/bin:/sbin:/bin",
    )
    user = [f"--reuid={context['runAsUser']}", f"--regid={context['runAsGroup']}"]
    return subprocess.run(
        ["setpriv", *user, f"--groups={FS_GROUP}", "--no-new-privs", "--", *container["command"]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )


def in_pod(name: str, *command: str) -> subprocess.CompletedProcess[str]:
    """`command` as that student's uid, in the pods' group (gid and fsGroup 100)."""
    uid = pwd.getpwnam(name).pw_uid
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={FS_GROUP}", f"--groups={FS_GROUP}", "--"]
        + list(command),
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        cwd="/",
    )


def apply_fs_group(volume: Path, gid: int) -> None:
    """What kubelet does to a volume whose driver manages ownership, for a pod's fsGroup."""
    for root, _folders, files in os.walk(volume):
        for path in [root, *(os.path.join(root, f) for f in files)]:
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                continue
            os.lchown(path, -1, gid)
            mask = 0o660 | (0o110 | stat.S_ISGID if stat.S_ISDIR(info.st_mode) else 0)
            os.chmod(path, stat.S_IMODE(info.st_mode) | mask)


def _check(name: str, exchange: Path) -> subprocess.CompletedProcess[str]:
    """The admin's check, run by that student with Debian's python3 (the image's is plain too)."""
    script = exchange.parent / "exchange_check.py"  # where every user can read it
    shutil.copy(HUB_DIR / "exchange_check.py", script)
    script.chmod(0o644)
    return in_pod(name, "/usr/bin/python3", "-I", str(script), str(exchange), COURSE_ID)


def test_the_init_container_makes_the_course_folder_without_root(accounts, scratch):
    exchange = scratch("cours-k8s-xch-") / "exchange"
    exchange.mkdir()  # a fresh volume as provisioned for a pod with fsGroup: root's, 2775
    os.chown(exchange, 0, FS_GROUP)
    exchange.chmod(0o2775)
    prof_uid = pwd.getpwnam(accounts["prof"]).pw_uid
    # the releasing uid cannot chown, nor make someone else's root 1777: the pod stops and
    # names the admin's one command; nothing is made
    refused = run_init_container(exchange, prof_uid)
    assert refused.returncode == 1, refused.stderr
    assert f"échange : {exchange} est en 2775 (uid 0), pas en 1777" in refused.stderr
    assert "chmod 1777 <dossier du volume>" in refused.stderr, refused.stderr
    assert list(exchange.iterdir()) == [] and stat.S_IMODE(exchange.stat().st_mode) == 0o2775
    # the container never runs as anyone but the releasing uid (the hook sets it)
    ana_uid = pwd.getpwnam(accounts["ana"]).pw_uid
    container = _init_container(prof_uid)
    env = {item["name"]: item["value"] for item in container["env"]}
    env.update(NBGRADER_EXCHANGE=str(exchange), COURSE_ID=COURSE_ID, PATH="/usr/bin:/bin")
    env["COURSE_EXCHANGE_OWNER_UID"] = str(prof_uid)
    other = subprocess.run(
        ["setpriv", f"--reuid={ana_uid}", f"--regid={FS_GROUP}", "--clear-groups", "--"]
        + container["command"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/",
    )
    assert other.returncode == 1 and f"tourne en uid {ana_uid}, pas en {prof_uid}" in other.stderr
    exchange.chmod(0o1777)  # the admin's one command, on the storage server
    made = run_init_container(exchange, prof_uid)
    assert made.returncode == 0, made.stderr
    course = exchange / COURSE_ID
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (exchange, course, *course.iterdir())}
    assert modes == {
        "exchange": 0o1777,
        COURSE_ID: 0o755,
        "outbound": 0o755,
        "inbound": 0o2733,
        "feedback": 0o711,
    }
    assert {p.stat().st_uid for p in (course, *course.iterdir())} == {prof_uid}
    ana = accounts["ana"]
    for what, command in {
        "remove": ["rm", "-rf", str(course)],
        "rename": ["mv", str(course), str(exchange / "ailleurs")],
        "release a fake": ["mkdir", str(course / "outbound" / "oublier")],
        "list submissions": ["ls", str(course / "inbound")],
    }.items():
        assert in_pod(ana, *command).returncode != 0, what
    # every later pod runs it again: nothing changes, a submission stays
    dropped = in_pod(ana, "mkdir", str(course / "inbound" / f"{ana}+oublier+x"))
    assert dropped.returncode == 0, dropped.stderr
    again = run_init_container(exchange, prof_uid)
    assert again.returncode == 0, again.stderr
    assert (course / "inbound" / f"{ana}+oublier+x").stat().st_uid == pwd.getpwnam(ana).pw_uid


def test_a_folder_a_student_made_first_stops_the_pod_and_stays(accounts, scratch):
    exchange = scratch("cours-k8s-squat-") / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)  # a volume left open by an older recipe
    ana = accounts["ana"]
    assert in_pod(ana, "mkdir", str(exchange / COURSE_ID)).returncode == 0
    refused = run_init_container(exchange, pwd.getpwnam(accounts["prof"]).pw_uid)
    ana_uid = pwd.getpwnam(ana).pw_uid
    assert refused.returncode != 0
    assert f"appartient à l'uid {ana_uid}" in refused.stderr, refused.stderr
    assert (exchange / COURSE_ID).stat().st_uid == ana_uid  # nothing moved, nothing changed
    assert not (exchange / COURSE_ID / "inbound").exists()
    # a link planted in the course's folder is refused too (chmod would follow it)
    exchange2 = scratch("cours-k8s-link-") / "exchange"
    exchange2.mkdir()
    exchange2.chmod(0o1777)  # the admin's one command
    prof_uid = pwd.getpwnam(accounts["prof"]).pw_uid
    assert run_init_container(exchange2, prof_uid).returncode == 0
    (exchange2 / COURSE_ID / "feedback").rmdir()
    (exchange2 / COURSE_ID / "feedback").symlink_to("/etc")
    linked = run_init_container(exchange2, prof_uid)
    assert linked.returncode != 0 and "n'est pas un dossier" in linked.stderr, linked.stderr
    assert Path("/etc").stat().st_uid == 0


def test_the_storage_check_finds_an_exchange_regrouped_by_fsgroup(accounts, scratch):
    exchange = scratch("cours-k8s-fsgroup-") / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)  # the admin's one command
    assert run_init_container(exchange, pwd.getpwnam(accounts["prof"]).pw_uid).returncode == 0
    ana, bob = accounts["ana"], accounts["bob"]
    inbound = exchange / COURSE_ID / "inbound"
    submission = inbound / f"{ana}+oublier+2026-12-01 09:00:00.000000 UTC+a1b2c3"
    made = in_pod(ana, "mkdir", str(submission))
    assert made.returncode == 0, made.stderr
    assert in_pod(ana, "cp", "/etc/hostname", str(submission / "oublier.ipynb")).returncode == 0

    # as the chart makes it: bob cannot list, the check passes
    assert in_pod(bob, "ls", str(inbound)).returncode != 0
    private = _check(bob, exchange)
    assert private.returncode == 0, private.stderr
    assert private.stdout.startswith("échange privé"), private.stdout

    # a storage driver that applies fsGroup: the hole is real, and the check names it
    apply_fs_group(exchange, FS_GROUP)
    listed = in_pod(bob, "ls", str(inbound))
    assert listed.returncode == 0 and submission.name in listed.stdout, listed
    regrouped = _check(bob, exchange)
    assert regrouped.returncode == 1, regrouped.stdout
    report = regrouped.stderr
    assert "échange NON privé" in report
    assert f"{inbound} est en 2773 (groupe {FS_GROUP})" in report, report
    assert f"cet élève liste {inbound}" in report, report
    assert f"cet élève écrit dans {exchange / COURSE_ID}" in report, report


def test_the_storage_check_refuses_to_run_as_root(scratch):
    exchange = scratch("cours-k8s-root-") / "exchange"
    exchange.mkdir()
    result = subprocess.run(
        [sys.executable, "-I", str(HUB_DIR / "exchange_check.py"), str(exchange), COURSE_ID],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "en élève" in result.stderr, result.stderr
