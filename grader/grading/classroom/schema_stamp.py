"""How a new gradebook gets its schema version: nbgrader runs the ``alembic heads`` command for
it (about 1 s of CPU each time, and a failure when ``alembic`` is not on PATH: a teacher's
shell outside the venv); read here from nbgrader's own migrations, in the process (0.08 s)."""

from __future__ import annotations

import nbgrader.api

__all__ = ["stamp_in_process"]


def _schema_version() -> str:
    """What ``alembic heads`` says of nbgrader's migrations (its first head)."""
    # alembic's script reader (0.08 s): only when a gradebook is created
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    return ScriptDirectory(ALEMBIC_DIR).get_heads()[0]


def stamp_in_process() -> None:
    """Every gradebook this process creates is stamped without a command."""
    nbgrader.api.get_alembic_version = _schema_version
