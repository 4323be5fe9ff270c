"""Makes the committed data of tests/upgrade/data with OLDER versions than the course's.

Not run by the tests: run it once in a throw-away venv holding the old versions, so that the
tests start from data those versions really wrote (their schema, their alembic revision):

    uv venv /tmp/old-nbgrader && uv pip install -p /tmp/old-nbgrader/bin/python \\
        "nbgrader==0.5.6" "sqlalchemy<1.4" "setuptools<70"
    PATH=/tmp/old-nbgrader/bin:$PATH /tmp/old-nbgrader/bin/python make_old_data.py gradebook
    uv venv /tmp/old-jupyterhub && uv pip install -p /tmp/old-jupyterhub/bin/python \\
        "jupyterhub==5.2.1"
    /tmp/old-jupyterhub/bin/python make_old_data.py hub

The grades and the hub's users, groups and tokens they hold are written next to them
(`*.expected.json`), read back by the old version itself.
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path

DATA = Path(__file__).parent / "data"
# ids as a French class has them (accents, hyphen), written in NFC
STUDENTS = {"chloé": ("Chloé", "Roux"), "jean-marc": ("Jean-Marc", "N'Diaye"), "zoé": ("Zoé", "")}
# (auto score of the SQL test, auto score of the file test, manual score of the written answer)
SCORES = {"chloé": (4.0, 3.0, 2.0), "jean-marc": (4.0, 0.0, 1.5), "zoé": (0.0, 0.0, None)}


def gradebook() -> None:
    import nbgrader
    from nbgrader.api import Gradebook

    path = DATA / f"gradebook-nbgrader-{nbgrader.__version__}.db"
    path.unlink(missing_ok=True)
    gb = Gradebook(f"sqlite:///{path}")
    gb.add_assignment("oublier", duedate=datetime(2025, 3, 14, 17, 0, 0))
    gb.add_notebook("oublier", "oublier")
    gb.add_solution_cell("reponse", "oublier", "oublier")
    gb.add_grade_cell("test_sql", "oublier", "oublier", max_score=4, cell_type="code")
    gb.add_grade_cell("test_fichier", "oublier", "oublier", max_score=3, cell_type="code")
    gb.add_solution_cell("ecrite", "oublier", "oublier")
    gb.add_grade_cell("ecrite", "oublier", "oublier", max_score=2, cell_type="markdown")
    for student, (first, last) in STUDENTS.items():
        gb.add_student(student, first_name=first, last_name=last)
        gb.add_submission("oublier", student)
        sql, fichier, manual = SCORES[student]
        for cell, score in (("test_sql", sql), ("test_fichier", fichier)):
            gb.find_grade(cell, "oublier", "oublier", student).auto_score = score
        written = gb.find_grade("ecrite", "oublier", "oublier", student)
        written.manual_score = manual
        gb.find_comment(
            "ecrite", "oublier", "oublier", student
        ).manual_comment = f"Relu à la main\u00a0: {student}"
    gb.db.commit()
    expected = {
        student: {
            "score": gb.find_submission("oublier", student).score,
            "comment": gb.find_comment("ecrite", "oublier", "oublier", student).manual_comment,
        }
        for student in STUDENTS
    }
    gb.close()
    (DATA / "gradebook.expected.json").write_text(
        json.dumps({"nbgrader": nbgrader.__version__, "grades": expected}, ensure_ascii=False,
                   indent=1, sort_keys=True) + "\n", encoding="utf-8")  # fmt: skip


def hub() -> None:
    import jupyterhub
    from jupyterhub import orm

    path = DATA / f"jupyterhub-{jupyterhub.__version__}.sqlite"
    path.unlink(missing_ok=True)
    db = orm.new_session_factory(f"sqlite:///{path}")()
    db.add(orm.OAuthClient(identifier="jupyterhub"))  # the hub's own client, which tokens name
    groups = {name: orm.Group(name=name) for name in ("instructors", "students")}
    db.add_all(groups.values())
    tokens = {}
    for name, group in (("prof", "instructors"), ("ana", "students"), ("bob", "students")):
        user = orm.User(name=name)
        db.add(user)
        db.commit()
        user.groups.append(groups[group])
        db.add(orm.Spawner(user_id=user.id, name="", state={"pid": 0}))
        tokens[name] = user.new_api_token(note=f"jeton de {name}")
    db.commit()
    expected = {
        "jupyterhub": jupyterhub.__version__,
        "users": sorted(u.name for u in db.query(orm.User)),
        "groups": {g.name: sorted(u.name for u in g.users) for g in db.query(orm.Group)},
        "tokens": tokens,
    }
    db.close()
    (DATA / "hub.expected.json").write_text(
        json.dumps(expected, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    {"gradebook": gradebook, "hub": hub}[sys.argv[1]]()
