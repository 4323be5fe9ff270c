"""Spawner mixin: each user's server runs in its own cgroup, capped (cgroup_caps.py).

Why: one student must not starve the class. Defaults come from the measured class rush
(tests/hub/test_class_rush.py: about 196 MiB per student for server and kernel, 6.95 GiB at the
peak for 30 students on a 24 GiB machine): a student gets 1 GiB (five times the measure: several
lessons open at once still fit; 30 runaways at once could not take more than the machine has
beyond the system), an equal CPU share (weight 100, whatever the number of processes) and 512
tasks (threads count: a fork bomb stops there); an instructor, who grades from their server
(nbgrader, the sandbox, --jobs 2), gets 4 GiB, weight 400 and 2048 tasks.

Secure by default: a hub whose servers cannot be capped refuses to start (`install`), unless the
configuration turns the caps off explicitly (`cgroup_caps = False`, COURSE_HUB_CAPS=0).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cgroup_caps import PARENT, Caps, UserCgroup, probe_problem
from jupyterhub.traitlets import ByteSpecification
from traitlets import Bool, Integer, Unicode
from traitlets.config import LoggingConfigurable

__all__ = ["CgroupCapsMixin", "install"]


class CgroupCapsMixin(LoggingConfigurable):
    """Put before LocalProcessSpawner in the bases: caps at start, cleanup at stop."""

    cgroup_caps = Bool(
        True,
        config=True,
        help="Cap each server's memory, CPU share and tasks with a cgroup. False turns the caps "
        "off: the hub otherwise refuses to start where no cgroup is writable.",
    )
    cgroup_fs = Unicode("/sys/fs/cgroup", config=True, help="Where the cgroup filesystems live.")
    cgroup_parent = Unicode(
        PARENT, config=True, help="Folder holding the users' cgroups (see cgroup_caps.py)."
    )
    student_memory = ByteSpecification(
        "1G", config=True, help="Memory cap of a student's server and kernels (beyond: killed)."
    )
    instructor_memory = ByteSpecification(
        "4G", config=True, help="Memory cap of an instructor's server (grading runs there)."
    )
    student_cpu_weight = Integer(
        100,
        config=True,
        help="CPU weight of a student's server (cgroup v2 scale 1-10000; v1 cpu.shares = "
        "weight x 10.24). Equal weights: a busy CPU is shared equally between servers.",
    )
    instructor_cpu_weight = Integer(400, config=True, help="CPU weight of an instructor's server.")
    student_tasks = Integer(512, config=True, help="Most processes and threads of a student.")
    instructor_tasks = Integer(
        2048, config=True, help="Most processes and threads of an instructor."
    )

    _cgroup: UserCgroup | None = None

    def cgroup_limits(self) -> Caps:
        """The caps of this user's role (COURSE_ROLE, set by the hub's pre-spawn hook)."""
        if self.environment.get("COURSE_ROLE") == "instructors":
            return Caps(self.instructor_memory, self.instructor_cpu_weight, self.instructor_tasks)
        return Caps(self.student_memory, self.student_cpu_weight, self.student_tasks)

    def user_cgroup(self) -> UserCgroup:
        return UserCgroup(self.user.name, fs=Path(self.cgroup_fs), parent=self.cgroup_parent)

    async def start(self):
        if not self.cgroup_caps:
            return await super().start()
        caps = self.cgroup_limits()
        cgroup = self.user_cgroup()
        await asyncio.to_thread(cgroup.create, caps)
        self._cgroup = cgroup
        self.mem_limit = caps.memory  # MEM_LIMIT in the server's environment (resource displays)
        try:
            return await super().start()
        except BaseException:
            self._cgroup = None
            await asyncio.to_thread(cgroup.remove)
            raise

    def make_preexec_fn(self, name):
        drop_privileges = super().make_preexec_fn(name)
        if self._cgroup is None:
            return drop_privileges
        enter = self._cgroup.enter_function()

        def preexec() -> None:
            enter()  # as root, before the user's uid: the server and its children are capped
            drop_privileges()

        return preexec

    async def stop(self, now=False):
        await super().stop(now=now)
        if not self.cgroup_caps:
            return
        self._cgroup = None
        cgroup = self.user_cgroup()  # also after a hub restart (the path is the user's)
        if not await asyncio.to_thread(cgroup.remove):
            self.log.error("cgroup of %s not removed: %s", self.user.name, sorted(cgroup.pids()))


def install(app) -> None:
    """Refuse to start `app` (the JupyterHub) when its spawner's caps are on but cannot work."""
    load_users = app.init_users

    async def init_users_if_capped() -> None:
        spawner = app.spawner_class(config=app.config)
        if isinstance(spawner, CgroupCapsMixin) and spawner.cgroup_caps:
            problem = probe_problem(Path(spawner.cgroup_fs), spawner.cgroup_parent)
            if problem:
                app.exit(
                    "Le hub de la classe refuse de démarrer\u00a0: il ne peut pas plafonner la "
                    f"mémoire et le processeur de chaque élève ({problem})\u00a0; lancez-le en "
                    "root sur une machine aux cgroups montés, ou désactivez explicitement les "
                    "plafonds avec COURSE_HUB_CAPS=0 (grader/hub/ADMIN.md, «\u00a0Un élève ne "
                    "peut pas affamer la classe\u00a0»)."
                )
                return
        await load_users()

    app.init_users = init_users_if_capped
