"""One hub per course: a second course id is refused with a clear message, at start.

The hub's groups are global, with one course id, one roster and one exchange folder: a hub whose
base already holds another course's groups (the same hub restarted with another COURSE_ID for a
second class) stops before it loads anyone, naming the course it already serves; so does a
COURSE_ID that names two courses. Every other hub test restarts or starts a hub with its own
course's groups: the control that one course alone starts.
"""

from __future__ import annotations

import sys

import pytest
from classhub import COURSE_ID
from conftest import HUB_DIR
from test_school_login import _start_refused

pytestmark = [pytest.mark.hub, pytest.mark.recette("machine")]

sys.path.insert(0, str(HUB_DIR))
from one_course import course_id_problem, other_courses  # noqa: E402


def test_a_course_id_names_one_course():
    assert course_id_problem(COURSE_ID) is None
    for two in ("memoire-tuteur,autre-cours", "memoire-tuteur autre", "../autre", ""):
        problem = course_id_problem(two)
        assert problem and "un hub par cours" in problem, two
    groups = ["instructors", "students", f"nbgrader-{COURSE_ID}", f"formgrade-{COURSE_ID}"]
    assert other_courses(groups, COURSE_ID) == []
    assert other_courses([*groups, "nbgrader-autre-cours"], COURSE_ID) == ["autre-cours"]


def test_a_hub_that_serves_another_course_refuses_to_start(course_env, scratch):
    from jupyterhub import orm

    workdir = scratch("cours-hub-one-course-")
    # the base of a hub that served "autre-cours" before (its groups, as the roster made them)
    db = orm.new_session_factory(f"sqlite:///{workdir / 'jupyterhub.sqlite'}")()
    for name in ("instructors", "students", "nbgrader-autre-cours", "formgrade-autre-cours"):
        db.add(orm.Group(name=name))
    db.commit()
    db.close()
    text = _start_refused(course_env, workdir, "")
    assert "ce hub sert déjà le cours «\u00a0autre-cours\u00a0»" in text, text[-3000:]
    assert "un hub par cours" in text
    assert f"pas «\u00a0{COURSE_ID}\u00a0»" in text
