"""A submission belongs to its submitter (issue 18, point 7): with nbgrader's exchange between
real Unix users, a copy dropped under a classmate's name (``nbgrader submit --student bob`` run by
eve) is set aside, named, and collect fails, while the classmate's own work is collected; a
student's own resubmission still replaces the earlier one. Stock ``nbgrader collect`` from
``grader/`` (what ``make collect`` runs) uses the course's collect class through
``nbgrader_config.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from exchange_class import (
    Student,
    answer_of,
    exchange_root,
    released_copy,
    sample_text,
    tag,
    unix_users,
)
from grading_course import generated_course, nbgrader

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _not_his(owner: str, student: str) -> str:
    return f"appartient à «\u00a0{owner}\u00a0», pas à «\u00a0{student}\u00a0»"


def _inbound(exchange: Path) -> Path:
    return exchange / "memoire-tuteur" / "inbound"


def _bob_and_a_copy_under_his_name(course, exchange, bob: str, eve: str) -> None:
    """The TP released; bob submits his answer, then eve submits the stub under bob's name."""
    released_copy(exchange)
    done = Student.account(bob).submit(course, exchange, "complete_vacuum")
    assert done.returncode == 0, done.stdout + done.stderr
    forged = Student.account(eve).submit(course, exchange, "ebauche", f"--student={bob}")
    assert forged.returncode == 0, forged.stdout + forged.stderr  # nbgrader accepts it


def test_copy_under_a_classmates_name_is_set_aside(course, tmp_path):
    """Stock ``nbgrader collect`` (what ``make collect`` runs) and formgrader's Collect (POST
    /formgrader/api/assignment/oublier/collect, what the button sends) in a real JupyterLab
    started in grader/ as `make formgrader` does, each from a course of its own on the same
    exchange (collecting copies from it, never changes it): bob's work is collected, eve's copy
    under his name is set aside and named, and the command (the button) reports a failure."""
    t = tag()
    bob, eve = f"h18{t}bob", f"h18{t}eve"
    with unix_users([bob, eve]), exchange_root() as exchange:
        _bob_and_a_copy_under_his_name(course, exchange, bob, eve)
        _formgrader_collects(generated_course(tmp_path / "bouton" / "cours"), exchange, bob, eve)

        copies = sorted(p.name for p in _inbound(exchange).iterdir())
        assert len(copies) == 2 and all(c.startswith(f"{bob}+oublier+") for c in copies)
        eves = [c for c in copies if (_inbound(exchange) / c).owner() == eve]
        assert len(eves) == 1, copies

        collected = nbgrader(course, "collect", "oublier", f"--Exchange.root={exchange}")
        out = collected.stdout + collected.stderr
        assert collected.returncode != 0, out
        assert eves[0] in out and _not_his(eve, bob) in out, out
        mine = course / "submitted" / bob / "oublier" / "oublier.ipynb"
        assert answer_of(mine) == sample_text("complete_vacuum")
        kept = course / "quarantaine" / "oublier" / eves[0] / "oublier.ipynb"
        assert answer_of(kept) == sample_text("ebauche")
        # whose copy it really is, for her erasure and her data export (class_places)
        depositors = (kept.parent / "DEPOSE_PAR.txt").read_text(encoding="utf-8")
        assert depositors.splitlines() == [eve], depositors

        # formgrader's Collect passes --update: eve's newer copy still never replaces bob's
        again = nbgrader(course, "collect", "--update", "oublier", f"--Exchange.root={exchange}")
        assert again.returncode != 0 and eves[0] in again.stdout + again.stderr
        assert answer_of(mine) == sample_text("complete_vacuum")

        # bob's own resubmission replaces his earlier one
        resubmitted = Student.account(bob).submit(course, exchange, "graine")
        assert resubmitted.returncode == 0, resubmitted.stdout + resubmitted.stderr
        update = nbgrader(course, "collect", "--update", "oublier", f"--Exchange.root={exchange}")
        assert update.returncode != 0  # eve's copy is still in the exchange, and still named
        assert answer_of(mine) == sample_text("graine")
        assert answer_of(kept) == sample_text("ebauche")


def test_honest_class_collects_with_status_zero(course):
    t = tag()
    ana, bob = f"h18{t}ana", f"h18{t}bob"
    with unix_users([ana, bob]), exchange_root() as exchange:
        released_copy(exchange)
        for user, sample in ((ana, "complete_vacuum"), (bob, "graine")):
            done = Student.account(user).submit(course, exchange, sample)
            assert done.returncode == 0, done.stdout + done.stderr
        collected = nbgrader(course, "collect", "oublier", f"--Exchange.root={exchange}")
        assert collected.returncode == 0, collected.stdout + collected.stderr
        for user, sample in ((ana, "complete_vacuum"), (bob, "graine")):
            notebook = course / "submitted" / user / "oublier" / "oublier.ipynb"
            assert answer_of(notebook) == sample_text(sample)
        assert not (course / "quarantaine").exists()


def test_link_and_unparsable_name_in_the_exchange(course):
    """bob links his exchange folder to ana's home copy (the instructor's collect would follow
    it); he also drops a folder whose name nbgrader cannot parse (stock collect then stops for
    the whole class). Both are set aside; ana is collected."""
    t = tag()
    ana, bob = f"h18{t}ana", f"h18{t}bob"
    with unix_users([ana, bob]), exchange_root() as exchange:
        released_copy(exchange)
        done = Student.account(ana).submit(course, exchange, "complete_vacuum")
        assert done.returncode == 0, done.stdout + done.stderr
        inbound = _inbound(exchange)
        link = f"{bob}+oublier+2099-01-01 00:00:00.000000 UTC+abc"
        target = os.path.expanduser(f"~{ana}/oublier")
        made = Student.account(bob).run("ln", "-s", target, str(inbound / link))
        assert made.returncode == 0, made.stderr
        bad = f"{bob}+oublier+pas-une-date+xyz"
        made = Student.account(bob).run("mkdir", str(inbound / bad))
        assert made.returncode == 0, made.stderr
        collected = nbgrader(course, "collect", "oublier", f"--Exchange.root={exchange}")
        out = collected.stdout + collected.stderr
        assert collected.returncode != 0, out
        assert link in out and "lien symbolique" in out, out
        assert bad in out and "nom de dépôt illisible" in out, out
        assert (course / "submitted" / ana / "oublier" / "oublier.ipynb").is_file()
        assert not (course / "submitted" / bob).exists()


def _free_uids(count: int) -> list[int]:
    import pwd
    import secrets

    uids: list[int] = []
    while len(uids) < count:
        uid = 20000 + secrets.randbelow(9000)
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if uid not in uids:
                uids.append(uid)
    return uids


def _collect(course: Path, exchange: Path, env: dict[str, str], *args: str):
    import subprocess

    from grading_course import BIN, tool_env

    return subprocess.run(
        [str(BIN / "nbgrader"), "collect", *args, "oublier", f"--Exchange.root={exchange}"],
        cwd=course,
        env={**tool_env(), **env},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_kubernetes_uids_without_passwd_entry(course):
    """Kubernetes conditions (tests/hub/test_kubernetes_conditions.py): each student's server
    runs under a bare uid, named only by nss_wrapper inside its pod (cours-singleuser); the
    instructor's pod names the class's uids from COURSE_HUB_PASSWD. Owners are checked there
    too, and an owner nobody can name is never taken for the student."""
    t = tag()
    bob, eve = f"k{t}bob", f"k{t}eve"
    bob_uid, eve_uid = _free_uids(2)
    with exchange_root() as exchange:
        released_copy(exchange)
        pods = {n: Student.pod(n, u, exchange.parent) for n, u in ((bob, bob_uid), (eve, eve_uid))}
        done = pods[bob].submit(course, exchange, "complete_vacuum")
        assert done.returncode == 0, done.stdout + done.stderr
        forged = pods[eve].submit(course, exchange, "ebauche", f"--student={bob}")
        assert forged.returncode == 0, forged.stdout + forged.stderr
        inbound = _inbound(exchange)
        owners = {p.name: p.stat().st_uid for p in inbound.iterdir()}
        assert sorted(owners.values()) == sorted([bob_uid, eve_uid]), owners
        (eves,) = [name for name, uid in owners.items() if uid == eve_uid]
        (bobs,) = [name for name, uid in owners.items() if uid == bob_uid]
        mine = course / "submitted" / bob / "oublier" / "oublier.ipynb"

        # an instructor's pod started before the class had uids: nobody can be named
        unnamed = _collect(course, exchange, {"COURSE_HUB_PASSWD": ""})
        out = unnamed.stdout + unnamed.stderr
        assert unnamed.returncode != 0, out
        assert f"l'uid {bob_uid}, sans nom" in out and f"l'uid {eve_uid}, sans nom" in out, out
        assert not mine.exists()

        # the hook's COURSE_HUB_PASSWD (without nss_wrapper): bob's own copy is collected
        named = _collect(
            course, exchange, {"COURSE_HUB_PASSWD": f"{bob}:{bob_uid},{eve}:{eve_uid}"}
        )
        out = named.stdout + named.stderr
        assert named.returncode != 0 and eves in out and bobs not in out, out
        assert _not_his(eve, bob) in out, out
        assert answer_of(mine) == sample_text("complete_vacuum")

        # nss_wrapper names them, as cours-singleuser does in the instructor's pod
        passwd = exchange.parent / "passwd"
        passwd.write_text(
            Path("/etc/passwd").read_text()
            + f"{bob}:x:{bob_uid}:100::/nonexistent:/usr/sbin/nologin\n"
            + f"{eve}:x:{eve_uid}:100::/nonexistent:/usr/sbin/nologin\n"
        )
        (lib,) = Path("/usr/lib").glob("*/libnss_wrapper.so")
        wrapped = {
            "LD_PRELOAD": str(lib),
            "NSS_WRAPPER_PASSWD": str(passwd),
            "NSS_WRAPPER_GROUP": "/etc/group",
            "COURSE_HUB_PASSWD": "",
        }
        update = _collect(course, exchange, wrapped, "--update")
        out = update.stdout + update.stderr
        assert update.returncode != 0 and eves in out, out
        assert _not_his(eve, bob) in out, out
        assert answer_of(mine) == sample_text("complete_vacuum")
        kept = course / "quarantaine" / "oublier" / eves / "oublier.ipynb"
        assert answer_of(kept) == sample_text("ebauche")


def _formgrader_collects(course: Path, exchange: Path, bob: str, eve: str) -> None:
    """formgrader's Collect pressed in a real JupyterLab on `course` (its grader/ folder), eve's
    copy under bob's name already in `exchange`: bob's work collected, eve's copy set aside,
    the button reporting a failure."""
    import json
    import urllib.request

    from grading_course import BIN, tool_env
    from helpers import free_port, http_server

    token = "jeton-collecte"
    tmp_path = course.parent.parent  # the button's course's own folder
    config = tmp_path / "config"
    config.mkdir()
    (config / "nbgrader_config.py").write_text(f"c.Exchange.root = {str(exchange)!r}\n")
    port = free_port()
    env = {
        **tool_env(),
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    cmd = [str(BIN / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}"]
    cmd += [f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={course.parent}"]
    cmd += ["--allow-root"] if os.geteuid() == 0 else []
    url, log = f"http://127.0.0.1:{port}", tmp_path / "lab.log"
    headers = {"Authorization": f"token {token}"}
    with http_server(cmd, course, env, log, f"{url}/api/status", "JupyterLab", headers):
        req = urllib.request.Request(
            f"{url}/formgrader/api/assignment/oublier/collect",
            data=b"",
            headers=headers,
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - localhost
            result = json.loads(resp.read())
    assert result["success"] is False, result
    assert _not_his(eve, bob) in result["log"], result
    mine = course / "submitted" / bob / "oublier" / "oublier.ipynb"
    assert answer_of(mine) == sample_text("complete_vacuum")
    (kept,) = (course / "quarantaine" / "oublier").iterdir()
    assert answer_of(kept / "oublier.ipynb") == sample_text("ebauche")
