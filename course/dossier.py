"""The lesson's folder must be writable: said once, in French, with what to do.

A course folder others installed (a hub's shared copy, a read-only mount, a folder of another
account) lets a lesson open but not write its database: SQLite's « unable to open database
file » came several cells later, then a NameError in every cell after it. A lesson's first cell
calls ``verifier_dossier()``: it tries a nameless file in the folder (the real test: permissions,
ACLs, a read-only mount, even for root), and if that fails it raises ``DossierEnLectureSeule``,
shown as its French message alone (no traceback), which stops « Exécuter tout » there; cells
run one by one afterwards each print one line, except the quizzes, the score and the hints.
"""

from __future__ import annotations

import os
import shlex
import tempfile
from pathlib import Path

from course.readable_error import ReadableError, errors_in_french
from course.skipping import skip_cells, stop_skipping
from course.system_reason import french_reason
from course.unawaited import say_unawaited

__all__ = [
    "DossierEnLectureSeule",
    "SKIPPED",
    "copy_advice",
    "folder_write_error",
    "verifier_dossier",
]

SKIPPED = (
    "Cellule passée\u00a0: la leçon ne peut pas écrire dans ce dossier (la première cellule "
    "dit quoi faire)."
)
_COPY = "~/cours-memoire-tuteur"  # where the message's command copies the course
# what runs anyway: it writes nothing in the folder (the progress file is in the home)
_KEEP = ("verifier_dossier(", "Quiz(", "bilan(", "indice(", "mon_parcours(")


class DossierEnLectureSeule(ReadableError, PermissionError):
    """Le dossier de la leçon n'accepte pas d'écriture\u00a0: le message dit quoi faire."""


def _skipped(source: str) -> bool:
    return not any(marker in source for marker in _KEEP)


def folder_write_error(folder: Path) -> OSError | None:
    """Why nothing can be written in ``folder``, or None: a nameless file is tried there (the
    real test: permissions, ACLs, a read-only mount, even for root)."""
    try:
        with tempfile.TemporaryFile(dir=folder):  # nameless where the system allows it
            pass
    except OSError as err:
        return err
    return None


def copy_advice(folder: Path) -> str:
    """What a learner does when the lesson's ``folder`` cannot be written (one text, for the
    first cell and for the session service when the folder turns read-only later)."""
    copy = folder.parent if folder.name == "lecons" else folder  # the notebooks' folder
    # cp -r keeps the modes: a folder made read-only by chmod gives a read-only copy
    return (
        f"Copiez le cours dans un dossier à vous, par exemple dans un terminal\u00a0: "
        f"cp -r {shlex.quote(str(copy))} {_COPY} && chmod -R u+w {_COPY}, puis ouvrez ce "
        "notebook dans la copie."
    )


def verifier_dossier(dossier: str | os.PathLike[str] = ".") -> Path:
    """Vérifie que la leçon peut écrire ses fichiers dans ``dossier`` (celui du notebook)\u00a0;
    sinon lève ``DossierEnLectureSeule``, qui dit quoi faire. Renvoie le dossier."""
    errors_in_french()  # the lesson's first cell: where the lesson sets its kernel up
    say_unawaited()
    folder = Path(dossier).resolve()
    err = folder_write_error(folder)
    if err is not None:
        skip_cells(_skipped, SKIPPED)
        raise DossierEnLectureSeule(
            f"La leçon ne peut pas écrire ses fichiers dans son dossier, {folder} "
            f"({french_reason(err)}). {copy_advice(folder)} D'ici là, les cellules suivantes "
            "sont passées, sauf les quiz, le bilan et les indices."
        )
    stop_skipping(SKIPPED)  # run again once the folder is writable: every cell runs
    return folder
