"""What the teacher made by hand in the class folder (the class list, submissions copied from
e-mails) made private, as the course's own files are: a spreadsheet or a shell saves at the usual
umask (0644), readable by every account of the machine."""

from __future__ import annotations

import os
import shlex
import stat
from pathlib import Path

from ..french.system_reason import french_reason

__all__ = ["make_private"]


def make_private(path: Path, holds: str) -> tuple[str | None, bool]:
    """Take the other accounts' rights away from the teacher's file or folder `path` (which
    `holds` personal data, said in French), as the class's umask does for what the course
    writes (its group keeps them, for a course shared by a group); (French line, or None when
    it was private already or is not there; whether it is private now)."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:  # no submission yet: nothing to close
        return None, True
    if not mode & 0o007:
        return None, True
    command = f"chmod o-rwx {shlex.quote(str(path))}"
    try:
        os.chmod(path, mode & ~0o007)
    except OSError as exc:
        return (
            f"✘ {path.name} est lisible par tous les comptes de la machine ({holds}) et "
            f"ses droits n'ont pas pu être changés ({french_reason(exc)})\u00a0: {command}.",
            False,
        )
    return (
        f"{path.name} était lisible par tous les comptes de la machine ({holds})\u00a0: droits "
        f"des autres comptes retirés ({mode:o} → {mode & ~0o007:o}, comme {command}).",
        True,
    )
