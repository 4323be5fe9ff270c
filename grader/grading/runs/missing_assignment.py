"""Adding an assignment the gradebook lacks (a fresh clone): stock ``nbgrader
generate_assignment`` from its sources, into a throw-away release folder."""

from __future__ import annotations

import tempfile

from ..classroom.paths import CourseDirs
from ..french.system_reason import GradingError
from .nbgrader_run import run_quiet

__all__ = ["ensure_assignment"]


def ensure_assignment(dirs: CourseDirs, assignment: str) -> str | None:
    """Make sure the gradebook knows `assignment` and its notebooks (autograde needs them): from
    its sources, the release written into a throw-away folder (``notebooks/`` left alone), a due
    date already set kept; a French note when it added them."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(dirs.db_url) as gb:
        try:
            notebooks = len(gb.find_assignment(assignment).notebooks)
        except MissingEntry:
            notebooks = 0
    if notebooks:
        return None
    source = dirs.source / assignment
    command = f"cd {dirs.grader_dir} && nbgrader generate_assignment {assignment}"
    if not source.is_dir():
        raise GradingError(
            f"Le devoir « {assignment} » n'est pas dans le carnet de notes et ses sources "
            f"({source}) manquent\u00a0: lancez « {command} » là où ses sources se trouvent."
        )
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        args = [
            "generate_assignment",
            assignment,
            f"--CourseDirectory.release_directory={tmp}",
            "--log-level=WARN",
        ]
        run = run_quiet(dirs.grader_dir, args, dirs.log_file("generate_assignment"))
    if run.status != 0:
        raise GradingError(
            f"Le devoir « {assignment} » n'est pas dans le carnet de notes et nbgrader n'a pas "
            f"pu l'y ajouter ({run.last_error})\u00a0: lancez « {command} » pour voir l'erreur."
        )
    return (
        f"« {assignment} » manquait au carnet de notes\u00a0: ajouté depuis {source} "
        "(nbgrader generate_assignment, notebooks/ inchangé)."
    )
