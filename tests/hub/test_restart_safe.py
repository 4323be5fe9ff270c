"""A hub restart (roster, certificate, upgrade) keeps every student's server and kernel.

A real hub (the shipped jupyterhub_config.py), a real student and their server; a variable is
set in a real kernel. The hub's own process is stopped alone, as the shipped systemd unit's
KillMode=process does, and started again on the same database: the same server and kernel
processes still run, the student reaches them through the hub again, the variable is still
there. The unit and the TLJH drop-in are checked to keep that behaviour.
"""

from __future__ import annotations

import configparser
import secrets
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from classhub import hub_settings, launch_hub, unix_users, write_roster
from conftest import HUB_DIR
from helpers import alive

pytestmark = [pytest.mark.hub, pytest.mark.recette("machine")]


def _cgroup_folders(pid: int) -> list[Path]:
    """The capped cgroup folders of a process (memory, cpu, pids for v1; the one for v2)."""
    fs, folders = Path("/sys/fs/cgroup"), []
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "/jupyterhub-cours/" in path:
            hierarchy = fs / controllers.split(",")[0] if controllers else fs
            folders.append(hierarchy / path.lstrip("/"))
    return sorted(set(folders))


@pytest.fixture(scope="module")
def student() -> Iterator[str]:
    name = f"rst{secrets.token_hex(2)}ana"
    with unix_users([name]):
        yield name


def test_a_hub_restart_keeps_the_students_server_and_kernel(course_env, student, scratch):
    workdir = scratch("cours-hub-restart-")
    roster = write_roster(workdir / "classe.csv", {student: "student"})
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=roster,
        exchange=workdir / "exchange",
        settings=hub_settings(COURSE_HUB_CULL_TIMEOUT="0"),
        hub_config=HUB_DIR / "jupyterhub_config.py",
    ) as hub:
        hub.start_server(student)
        hub.wait_ready(student)
        server_pid = hub.server_pids[student]
        created = hub.server(student, "POST", "/api/kernels", json={"name": "python3"})
        assert created.status_code == 201, created.text
        kernel = created.json()["id"]
        assert hub.execute(student, kernel, "x = 41\nprint('avant')") == "avant\n"
        kernels = [p.pid for p in psutil.Process(server_pid).children(recursive=True)]
        assert kernels, "pas de processus noyau"
        old_hub = hub.process.pid
        cgroups = _cgroup_folders(server_pid)  # its capped cgroup (test_student_caps.py)
        assert cgroups and all(folder.parts[-1] == student for folder in cgroups)

        hub.restart()

        assert hub.process.pid != old_hub and not alive(old_hub)
        assert alive(server_pid) and all(alive(pid) for pid in kernels)
        server = hub.wait_ready(student)
        assert hub.server_pids[student] == server_pid  # the same server, found again
        listed = hub.server(student, "GET", "/api/kernels")
        assert listed.status_code == 200 and kernel in {k["id"] for k in listed.json()}
        assert hub.execute(student, kernel, "print(x + 1)") == "42\n"
        assert server["ready"]
        # still in its cgroup; the restarted hub stops it and removes that cgroup all the same
        assert _cgroup_folders(server_pid) == cgroups
        assert hub.api("DELETE", f"/users/{student}/server").status_code in (202, 204)
        hub.wait_stopped(student, timeout=60)
        hub.server_pids.pop(student)
        assert not any(folder.exists() for folder in cgroups)


def test_the_shipped_unit_stops_the_hub_alone():
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str
    unit.read_string((HUB_DIR / "jupyterhub-cours.service").read_text(encoding="utf-8"))
    service = unit["Service"]
    assert service["KillMode"] == "process"  # the default, control-group, kills the class
    assert service["UMask"] == "0077"  # the hub's database is no other user's to read
    assert "/etc/jupyterhub_config.py" in service["ExecStart"]
    # the configuration leaves servers running (TLJH's drop-in: test_admin_files.py)
    assert "KillMode=process" in (HUB_DIR / "ADMIN.md").read_text(encoding="utf-8")
