"""One student cannot starve the class: each server runs in its own capped cgroup.

One real hub for the module (the shipped jupyterhub_config.py, its default caps), real Unix
users: an instructor and two students, each with a real kernel. Shown with the kernel's own
files, never a wall-clock threshold (the machine is shared): every process of each user sits
in that user's cgroup with the caps of their role; bob's runaway cell (1.5 GiB, past his 1 GiB)
kills his kernel alone (hub, servers and ana's kernel stay up and answer); bob's four busy loops
run inside his cgroup, of the same CPU weight as ana's, and the speed ratio of ana's loop (alone,
then beside them) is printed; stopping a server kills what it left behind (a detached process)
and removes its cgroup. A hub that cannot cap refuses to start, unless the caps are turned off.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from classhub import ClassHub, hub_settings, launch_hub, user_pids, write_roster
from conftest import HUB_DIR
from helpers import alive, command_line

pytestmark = [pytest.mark.hub, pytest.mark.slow, pytest.mark.recette("machine")]

FS = Path("/sys/fs/cgroup")
V2 = (FS / "cgroup.controllers").is_file()
PARENT = "jupyterhub-cours"
GIB = 2**30
# the defaults of capped_spawner.py: (memory, CPU weight, tasks)
STUDENT, INSTRUCTOR = (1 * GIB, 100, 512), (4 * GIB, 400, 2048)
LOOP = "import time\nt = time.perf_counter()\nfor _ in range({n}): pass\n" + (
    "print(time.perf_counter() - t)"
)


def _cgroups_of(pid: int) -> dict[str, str]:
    """{controller: path} of a live process ("" for cgroup v2), from /proc/<pid>/cgroup."""
    found = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _folders(pid: int) -> dict[str, Path]:
    """The cgroup folders holding `pid`, per capped controller."""
    paths = _cgroups_of(pid)
    if V2:
        return {"": FS / paths[""].lstrip("/")}
    return {c: FS / c / paths[c].lstrip("/") for c in ("memory", "cpu", "pids")}


def _limits(folders: dict[str, Path]) -> tuple[int, int, int]:
    """(memory cap, CPU weight on the v2 scale, task cap) read back from the kernel."""
    if V2:
        folder = folders[""]
        read = lambda name: (folder / name).read_text().strip()  # noqa: E731
        return int(read("memory.max")), int(read("cpu.weight")), int(read("pids.max"))
    memory = int((folders["memory"] / "memory.limit_in_bytes").read_text())
    shares = int((folders["cpu"] / "cpu.shares").read_text())
    return memory, shares * 100 // 1024, int((folders["pids"] / "pids.max").read_text())


def _oom_kills(folders: dict[str, Path]) -> int:
    if V2:
        events = (folders[""] / "memory.events").read_text().split()
        return int(events[events.index("oom_kill") + 1])
    control = (folders["memory"] / "memory.oom_control").read_text().split()
    if "oom_kill" in control:
        return int(control[control.index("oom_kill") + 1])
    return int((folders["memory"] / "memory.failcnt").read_text())


def _uid(name: str) -> int:
    import pwd

    return pwd.getpwnam(name).pw_uid


def _kernels(name: str) -> list[int]:
    return [pid for pid in user_pids(_uid(name)) if "ipykernel" in command_line(pid)]


@pytest.fixture(scope="module")
def running(class_hub: ClassHub, class_users: dict[str, str]) -> dict[str, str]:
    """The instructor's and two students' servers, each with one kernel: {user: kernel id}."""
    names = [class_users["prof"], class_users["complet"], class_users["partiel"]]
    for name in names:
        class_hub.start_server(name)
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        list(pool.map(class_hub.wait_ready, names))

    def kernel(name: str) -> str:
        response = class_hub.server(name, "POST", "/api/kernels", json={"name": "python3"})
        assert response.status_code == 201, (response.status_code, response.text[:500])
        return response.json()["id"]

    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        kernels = dict(zip(names, pool.map(kernel, names), strict=True))
    for name, kernel_id in kernels.items():  # each kernel is up (its process exists)
        assert class_hub.execute(name, kernel_id, "print(6 * 7)").strip() == "42"
    return kernels


def test_every_process_of_a_user_is_in_their_capped_cgroup(class_hub, class_users, running):
    for name, expected in (
        (class_users["prof"], INSTRUCTOR),
        (class_users["complet"], STUDENT),
        (class_users["partiel"], STUDENT),
    ):
        server = class_hub.server_pids[name]
        processes = user_pids(_uid(name))
        assert server in processes and _kernels(name), (name, processes)
        for pid in processes:  # the server, its kernel, anything they started
            for controller, folder in _folders(pid).items():
                assert folder.parts[-2:] == (PARENT, name), (name, pid, controller, folder)
        assert _limits(_folders(server)) == expected, name
        # the user cannot leave it: moving their own process to the parent cgroup is refused
        parent = next(iter(_folders(server).values())).parent / "cgroup.procs"
        escape = f"open({str(parent)!r}, 'w').write(str(__import__('os').getpid()))"
        with pytest.raises(AssertionError, match="PermissionError"):
            class_hub.execute(name, running[name], escape)
        # nor raise their own cap
        own = next(iter(_folders(server).values()))
        cap = own / ("memory.max" if V2 else "memory.limit_in_bytes")
        with pytest.raises(AssertionError, match="PermissionError"):
            class_hub.execute(name, running[name], f"open({str(cap)!r}, 'w').write('-1')")
        assert _limits(_folders(server)) == expected, name
        assert (
            Path(f"/proc/{server}/environ")
            .read_bytes()
            .count(f"MEM_LIMIT={expected[0]}\0".encode())
        )


def _admin_check(prefix: Path, *args: str) -> subprocess.CompletedProcess:
    """The check ADMIN.md gives the admin, as installed: the shared Python runs cgroup_caps.py."""
    return subprocess.run(
        [str(prefix / "env" / "bin" / "python"), str(prefix / "etc" / "cgroup_caps.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _gib(size: int) -> str:
    return f"{size / GIB:.1f}".replace(".", ",") + "\u00a0Gio"


def test_the_admins_check_prints_the_caps_the_kernel_applies(
    course_env, class_hub, class_users, running
):
    """`cgroup_caps.py <account>` reads back, for a running server, what the kernel applies:
    the same caps this module reads from the cgroup files; a process outside them is named."""
    for role, expected in (("prof", INSTRUCTOR), ("complet", STUDENT)):
        name = class_users[role]
        assert _limits(_folders(class_hub.server_pids[name])) == expected
        check = _admin_check(course_env, name)
        assert check.returncode == 0, check.stdout + check.stderr
        (line,) = check.stdout.splitlines()  # the server and its kernel share one cgroup
        memory, weight, tasks = expected
        assert f"/{PARENT}/{name} (cgroup v{2 if V2 else 1})" in line, line
        assert f"mémoire plafonnée à {_gib(memory)}" in line, line
        assert f"poids processeur {weight}, au plus {tasks} tâches" in line, line
    # no process: said; a process outside the course's cgroups (root's, here): named, exit 1
    idle = _admin_check(course_env, class_users["casse"])
    assert idle.returncode == 1 and "aucun processus" in idle.stdout, idle.stdout
    outside = _admin_check(course_env, "root")
    assert outside.returncode == 1 and "hors des cgroups du cours" in outside.stdout


def _cgroup2_mounts() -> list[Path]:
    """Every cgroup v2 hierarchy mounted on this machine (the unified one of a hybrid too)."""
    mounts = Path("/proc/self/mounts").read_text().splitlines()
    return [Path(line.split()[1]) for line in mounts if line.split()[2] == "cgroup2"]


def _cap_a_process_in_v2(fs: Path) -> None:
    """A real process of `nobody` joins a v2 cgroup between fork and exec, as a server does:
    its caps read back from the kernel, then it is killed and the cgroup removed."""
    import pwd

    from cgroup_caps import Caps, UserCgroup, effective_caps

    group = UserCgroup(f"essai-v2-{os.getpid()}", fs=fs)
    group.create(Caps(memory=256 * 2**20, cpu_weight=50, tasks=32))
    nobody = pwd.getpwnam("nobody")
    enter = group.enter_function()

    def demote() -> None:
        enter()
        os.setgid(nobody.pw_gid)
        os.setuid(nobody.pw_uid)

    child = subprocess.Popen(["sleep", "300"], preexec_fn=demote)
    try:
        assert group.pids() == {child.pid}
        caps = effective_caps(group.dirs)
        assert (caps["memory"], caps["cpu_weight"], caps["tasks"]) == (256 * 2**20, 50, 32)
    finally:
        assert group.remove()
        child.wait(timeout=10)
    assert not group.exists()


def test_the_cgroup_v2_path_as_far_as_this_kernel_allows():
    """cgroup v2, on the kernel here: where a v2 hierarchy offers memory, cpu and pids, a real
    process of a real user is capped in it and read back, then killed and removed; where the
    v1 hierarchies hold them (a hybrid machine, this one), the v2 hierarchy is refused with the
    controllers it lacks (the hub then refuses to start: test below)."""
    from cgroup_caps import cgroup_version, probe_problem

    mounts = _cgroup2_mounts()
    assert mounts, "aucune hiérarchie cgroup v2 montée"
    for fs in mounts:
        assert cgroup_version(fs) == 2, fs
        available = set((fs / "cgroup.controllers").read_text().split())
        if not {"memory", "cpu", "pids"} <= available:
            problem = probe_problem(fs)
            missing = [c for c in ("memory", "cpu", "pids") if c not in available]
            assert problem and f"absents du cgroup v2\u00a0: {', '.join(missing)}" in problem
            continue
        _cap_a_process_in_v2(fs)


def test_a_runaway_cell_is_stopped_alone(class_hub, class_users, running):
    ana, bob = class_users["complet"], class_users["partiel"]
    (bob_kernel,) = _kernels(bob)
    ana_kernels = _kernels(ana)
    folders = _folders(class_hub.server_pids[bob])
    kills_before = _oom_kills(folders)
    runaway = "x = bytearray(3 * 2**29)  # 1.5 GiB, past the 1 GiB cap\nprint('encore là')"
    assert class_hub.execute(bob, running[bob], runaway) == "died"
    deadline = time.monotonic() + 30
    while alive(bob_kernel):
        assert time.monotonic() < deadline, "le noyau de bob vit encore"
        time.sleep(0.2)
    assert _oom_kills(folders) > kills_before  # killed by his cgroup's cap, not by chance
    # everyone else is untouched: the hub, both servers, ana's kernel, which still computes
    assert class_hub.process.poll() is None
    assert all(alive(class_hub.server_pids[name]) for name in (ana, bob))
    assert _kernels(ana) == ana_kernels
    assert class_hub.execute(ana, running[ana], "print(sum(range(10)))").strip() == "45"
    assert class_hub.api("GET", f"/users/{bob}").json()["servers"][""]["ready"]


def test_busy_loops_share_the_cpu_by_cgroup_not_by_process(class_hub, class_users, running):
    ana, bob = class_users["complet"], class_users["partiel"]
    # bob's kernel was killed by the previous test (or not, run alone): a fresh one
    response = class_hub.server(bob, "POST", "/api/kernels", json={"name": "python3"})
    assert response.status_code == 201, response.text[:500]
    bob_kernel = response.json()["id"]
    loop = LOOP.format(n=25_000_000)
    alone = float(class_hub.execute(ana, running[ana], loop))
    start_loops = (
        "import subprocess, sys\n"
        "busy = 'import time\\nend = time.time() + 60\\nwhile time.time() < end: pass'\n"
        "loops = [subprocess.Popen([sys.executable, '-c', busy]) for _ in range(4)]\n"
        "print(' '.join(str(p.pid) for p in loops))"
    )
    loops = [int(pid) for pid in class_hub.execute(bob, bob_kernel, start_loops).split()]
    try:
        time.sleep(0.5)
        beside = float(class_hub.execute(ana, running[ana], loop))
        # the mechanism: bob's loops sit in bob's cgroup, whose weight equals ana's
        bob_folders = _folders(class_hub.server_pids[bob])
        ana_folders = _folders(class_hub.server_pids[ana])
        for pid in loops:
            assert _folders(pid) == bob_folders, pid
        assert _limits(bob_folders)[1] == _limits(ana_folders)[1] == STUDENT[1]
    finally:
        for pid in loops:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    cores = len(os.sched_getaffinity(0))
    print(
        f"\n--- boucle d'ana : seule {alone:.2f} s, à côté des 4 boucles de bob {beside:.2f} s, "
        f"rapport {beside / alone:.2f} ({cores} cœurs, charge {os.getloadavg()[0]:.1f} ; "
        f"sans plafond, 5 boucles sur {cores} cœurs donneraient environ {5 / cores:.1f})"
    )


def test_stopping_a_server_kills_its_leftovers_and_removes_its_cgroup(class_hub, class_users):
    names = [class_users["prof"], class_users["complet"], class_users["partiel"]]
    bob = class_users["partiel"]
    folders = {name: _folders(class_hub.server_pids[name]) for name in names}
    # bob leaves a detached process behind (new session, parent gone): the cgroup still holds it
    response = class_hub.server(bob, "POST", "/api/kernels", json={"name": "python3"})
    kernel = response.json()["id"]
    class_hub.execute(bob, kernel, "import os\nos.system('setsid sh -c \"sleep 600 &\"')")
    (leftover,) = [pid for pid in user_pids(_uid(bob)) if command_line(pid) == "sleep 600"]
    assert psutil.Process(leftover).ppid() != class_hub.server_pids[bob]
    for name in names:
        assert class_hub.api("DELETE", f"/users/{name}/server").status_code in (202, 204)
    deadline = time.monotonic() + 120  # for the whole class, as one stop of every server
    for name in names:
        class_hub.wait_stopped(name, timeout=max(0.0, deadline - time.monotonic()))
        class_hub.server_pids.pop(name)
        assert not any(folder.exists() for folder in folders[name].values()), name
        assert not user_pids(_uid(name)), name
    assert not alive(leftover)


def test_a_hub_that_cannot_cap_refuses_to_start_unless_caps_are_off(
    course_env, class_users, scratch
):
    from test_school_login import _start_refused

    workdir = scratch("cours-hub-caps-")
    no_cgroups = scratch("pas-de-cgroup-")
    text = _start_refused(course_env, workdir, "", COURSE_HUB_CGROUP_FS=str(no_cgroups))
    assert "il ne peut pas plafonner la mémoire et le processeur" in text, text[-2000:]
    assert "COURSE_HUB_CAPS=0" in text
    # turned off explicitly: the same hub starts
    workdir = scratch("cours-hub-caps-off-")
    roster = write_roster(workdir / "classe.csv", {class_users["casse"]: "student"})
    with launch_hub(
        prefix=course_env,
        workdir=workdir,
        roster=roster,
        exchange=workdir / "exchange",
        settings=hub_settings(
            COURSE_HUB_CULL_TIMEOUT="0",
            COURSE_HUB_CAPS="0",
            COURSE_HUB_CGROUP_FS=str(no_cgroups),
        ),
        hub_config=HUB_DIR / "jupyterhub_config.py",
    ) as hub:
        assert hub.api("GET", "/").status_code == 200
