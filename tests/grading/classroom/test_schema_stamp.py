"""A new gradebook is stamped in the process (grading/classroom/schema_stamp.py) with what
nbgrader's own ``alembic heads`` command says, so ``nbgrader db upgrade`` knows where it is."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbgrader.api
from grading.classroom.schema_stamp import stamp_in_process
from nbgrader.api import Gradebook
from nbgrader.dbutil import _temp_alembic_ini

BIN = Path(sys.executable).parent


def test_a_new_gradebook_gets_the_version_alembic_heads_gives(tmp_path: Path) -> None:
    with _temp_alembic_ini(f"sqlite:///{tmp_path / 'vide.db'}") as ini:
        said = subprocess.run(
            [str(BIN / "alembic"), "-c", ini, "heads"], capture_output=True, text=True, check=True
        ).stdout
    head = said.split()[0]
    stamp_in_process()
    assert nbgrader.api.get_alembic_version() == head
    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
        gb.update_or_create_student("ana")
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(head,)]
    upgrade = [str(BIN / "nbgrader"), "db", "upgrade"]  # it runs `alembic` from PATH
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(upgrade, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
