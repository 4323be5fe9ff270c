"""A demoted instructor's own copy of the course, as cours-singleuser leaves it.

An instructor's first server copies the course template (solutions, the grader's hidden tests)
into their home; later their gradebook and the class's submissions live there too. The roster
sync takes a demoted instructor out of `instructors` and of the Unix group that reads the
template, and their next server starts as a student's (test_roster_sync.py). This test runs the
shipped cours-singleuser as a real Unix user, as the hub starts it: first as an instructor (the
copy made: the control), then, out of the group, as a student.
"""

from __future__ import annotations

import grp
import secrets
import subprocess
from pathlib import Path

import pytest
from classhub import INSTRUCTORS_GROUP, as_user, unix_users

pytestmark = pytest.mark.hub

SOLUTION = Path("cours-memoire-tuteur") / "solutions"


def _start(course_env: Path, name: str, role: str) -> subprocess.CompletedProcess[str]:
    """cours-singleuser as the hub runs it for `name` (`true` instead of the server)."""
    home = Path("/home") / name
    return as_user(
        name,
        "env",
        f"HOME={home}",
        f"COURSE_ROLE={role}",
        f"PATH={course_env / 'env' / 'bin'}:/usr/bin:/bin",
        str(course_env / "env" / "bin" / "cours-singleuser"),
        "true",
        cwd="/",
    )


@pytest.mark.xfail(
    strict=True,
    reason="a demoted instructor keeps the copy of the course their instructor server made in "
    "their home (solutions, hidden tests, and any gradebook and submissions they hold): "
    "cours-singleuser never removes instructor data, and the user owns the copy; the IT admin "
    "moves it by hand (grader/hub/ADMIN.md, demotion)",
)
def test_a_demoted_instructor_no_longer_reads_the_solutions(course_env):
    name = f"dem{secrets.token_hex(2)}prof"
    with unix_users([name]):
        home = Path("/home") / name
        subprocess.run(["gpasswd", "-a", name, INSTRUCTORS_GROUP], check=True, capture_output=True)
        started = _start(course_env, name, "instructors")
        assert started.returncode == 0, started.stderr
        # the control: the instructor's server made the copy, solutions readable
        assert as_user(name, "test", "-r", str(home / SOLUTION)).returncode == 0
        # the roster sync's demotion: out of the Unix group; the next server a student's
        subprocess.run(["gpasswd", "-d", name, INSTRUCTORS_GROUP], check=True, capture_output=True)
        assert name not in grp.getgrnam(INSTRUCTORS_GROUP).gr_mem
        started = _start(course_env, name, "students")
        assert started.returncode == 0, started.stderr
        assert as_user(name, "test", "-r", str(home / SOLUTION)).returncode != 0
