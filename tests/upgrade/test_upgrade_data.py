"""Issue 22, point 10: upgrades keep grades. Data written by OLDER versions than the course's
(tests/upgrade/data, made by make_old_data.py with nbgrader 0.5.6 and JupyterHub 5.2.1) goes
through the upgrade path ADMIN.md gives, with the course's own nbgrader and JupyterHub:

- a gradebook: `nbgrader db upgrade` from the course's grader/ folder, then every grade, manual
  score and comment is the one the old nbgrader read back;
- a hub database: the new JupyterHub refuses to start on it (`upgrade_db` is False), then
  `jupyterhub upgrade-db` migrates it (keeping a dated copy) and every user, group and token is
  there.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from grading_course import BIN, copy_course, nbgrader

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"


def _revision(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT version_num FROM alembic_version").fetchone()[0]


def test_a_gradebook_of_an_older_nbgrader_keeps_every_grade(tmp_path):
    from nbgrader.api import Gradebook

    expected = json.loads((DATA / "gradebook.expected.json").read_text(encoding="utf-8"))
    grader = copy_course(tmp_path / "cours")
    gradebook = grader / "gradebook.db"
    shutil.copy(DATA / f"gradebook-nbgrader-{expected['nbgrader']}.db", gradebook)
    old_revision = _revision(gradebook)

    upgrade = nbgrader(grader, "db", "upgrade")
    assert upgrade.returncode == 0, upgrade.stdout[-3000:] + upgrade.stderr[-3000:]
    assert _revision(gradebook) != old_revision

    export = nbgrader(grader, "export", "--to", str(tmp_path / "grades.csv"))
    assert export.returncode == 0, export.stdout[-3000:] + export.stderr[-3000:]
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as fh:
        scores = {row["student_id"]: float(row["score"]) for row in csv.DictReader(fh)}
    assert scores == {student: g["score"] for student, g in expected["grades"].items()}
    with Gradebook(f"sqlite:///{gradebook}") as gb:
        for student, grade in expected["grades"].items():
            comment = gb.find_comment("ecrite", "oublier", "oublier", student)
            assert comment.manual_comment == grade["comment"]
        assert gb.find_student("chloé").first_name == "Chloé"


def _hub(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`jupyterhub …` as ADMIN.md writes it: the environment's bin/ first on PATH (upgrade-db
    runs `alembic` from PATH; measured: without it, FileNotFoundError)."""
    return subprocess.run(
        [str(BIN / "jupyterhub"), *args],
        cwd=cwd,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_a_hub_database_of_an_older_jupyterhub_keeps_users_groups_and_tokens(tmp_path):
    import jupyterhub
    from jupyterhub import orm
    from sqlalchemy import create_engine

    expected = json.loads((DATA / "hub.expected.json").read_text(encoding="utf-8"))
    assert expected["jupyterhub"].split(".")[0] != jupyterhub.__version__.split(".")[0]
    db_file = tmp_path / "jupyterhub.sqlite"
    shutil.copy(DATA / f"jupyterhub-{expected['jupyterhub']}.sqlite", db_file)
    db_url = f"sqlite:///{db_file}"
    old_revision = _revision(db_file)

    # the new hub does not start on it: its schema is older (upgrade_db is False)
    start = _hub(f"--db={db_url}", "--JupyterHub.authenticator_class=dummy", cwd=tmp_path)
    assert start.returncode != 0
    assert "upgrade-db" in start.stdout + start.stderr
    with pytest.raises(orm.DatabaseSchemaMismatch):
        orm.check_db_revision(create_engine(db_url))

    upgrade = _hub("upgrade-db", f"--db={db_url}", cwd=tmp_path)
    assert upgrade.returncode == 0, upgrade.stdout[-3000:] + upgrade.stderr[-3000:]
    copies = [p for p in tmp_path.iterdir() if p.name.startswith("jupyterhub.sqlite.")]
    assert len(copies) == 1 and _revision(copies[0]) == old_revision  # the dated copy
    assert _revision(db_file) != old_revision

    db = orm.new_session_factory(db_url)()  # checks the revision: raises if still old
    try:
        assert sorted(u.name for u in db.query(orm.User)) == expected["users"]
        groups = {g.name: sorted(u.name for u in g.users) for g in db.query(orm.Group)}
        assert groups == expected["groups"]
        for name, token in expected["tokens"].items():
            found = orm.APIToken.find(db, token)
            assert found is not None and found.user.name == name
    finally:
        db.close()
