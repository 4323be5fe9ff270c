"""The tutor app's identity: its name in the session tables and where its database lives.

Dependency-free so that any process (the lab's submission runner included) imports it for
free; the tutor, the inspector, the diagrams and the lab's checker all read these names here.
"""

from __future__ import annotations

import os

__all__ = ["APP_NAME", "DB_ENV_VAR", "DEFAULT_DB", "default_db_path"]

APP_NAME = "tuteur"  # app_name of every row the tutor writes
DEFAULT_DB = "tuteur.db"
DB_ENV_VAR = "TUTEUR_DB"  # the environment variable that moves the database


def default_db_path() -> str:
    """The tutor's database: ``$TUTEUR_DB`` if set and not empty, else ``tuteur.db``."""
    return os.environ.get(DB_ENV_VAR) or DEFAULT_DB
