"""The exchange is made by the installer before any student exists: nobody can squat it.

nbgrader's exchange root must stay writable by all (nbgrader checks it), so the course's own
folder is what matters: a student who created `exchange/<course>` before the first release
would own it, and the instructor's release would fail ("You don't own the directory"). The
shipped installer makes it, owned by the releasing account; real student accounts then try to
take, remove, rename or fill it. The whole class cycle (test_classroom_hub.py) runs on an
exchange made the same way.
"""

from __future__ import annotations

import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from classhub import COURSE_ID, INSTRUCTORS_GROUP, as_user, unix_users
from conftest import install_exchange

pytestmark = [pytest.mark.hub, pytest.mark.recette("machine")]


@pytest.fixture(scope="module")
def people(hub_requirements) -> Iterator[dict[str, str]]:
    tag = secrets.token_hex(2)
    names = {"prof": f"xch{tag}prof", "eve": f"xch{tag}eve"}
    with unix_users(list(names.values())):
        yield names


def test_the_course_folder_belongs_to_the_instructor_before_any_student(
    people, course_env, scratch
):
    exchange = scratch("cours-exchange-") / "exchange"
    made = install_exchange(exchange, people["prof"])
    assert made.returncode == 0, made.stderr
    course = exchange / COURSE_ID
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (exchange, course, *course.iterdir())}
    assert modes == {
        "exchange": 0o1777,  # nbgrader requires a writable root; sticky
        COURSE_ID: 0o755,
        "outbound": 0o755,
        "inbound": 0o2733,  # students drop, never list
        "feedback": 0o711,
    }
    assert {p.owner() for p in (course, *course.iterdir())} == {people["prof"]}
    assert course.group() == INSTRUCTORS_GROUP
    eve = people["eve"]
    attempts = {
        "create": ["mkdir", str(course)],
        "remove": ["rm", "-rf", str(course)],
        "rename": ["mv", str(course), str(exchange / "ailleurs")],
        "release a fake": ["mkdir", str(course / "outbound" / "oublier")],
        "list submissions": ["ls", str(course / "inbound")],
        "chmod": ["chmod", "777", str(course)],
    }
    for what, command in attempts.items():
        result = as_user(eve, *command)
        assert result.returncode != 0, (what, result.stdout)
    assert course.is_dir() and course.owner() == people["prof"]
    assert not (course / "outbound" / "oublier").exists()
    # a student may still drop a submission (what nbgrader submit does)
    dropped = as_user(eve, "mkdir", str(course / "inbound" / f"{eve}+oublier+x"))
    assert dropped.returncode == 0, dropped.stderr
    # re-running the installer keeps it (and what it holds)
    again = install_exchange(exchange, people["prof"])
    assert again.returncode == 0, again.stderr
    assert (course / "inbound" / f"{eve}+oublier+x").is_dir()


def test_a_folder_a_student_made_first_is_reported_not_taken(people, course_env, scratch):
    exchange = scratch("cours-exchange-squat-") / "exchange"
    exchange.mkdir()
    exchange.chmod(0o1777)  # an older install: the open root only
    squatted = as_user(people["eve"], "mkdir", str(exchange / COURSE_ID))
    assert squatted.returncode == 0, squatted.stderr
    refused = install_exchange(exchange, people["prof"])
    assert refused.returncode != 0
    assert f"appartient à « {people['eve']} »" in refused.stderr, refused.stderr
    assert Path(exchange / COURSE_ID).owner() == people["eve"]  # nothing moved or deleted
