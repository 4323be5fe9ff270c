"""The storage check an admin runs after deploying: is the exchange still private for a student?

Why: nbgrader keeps submissions apart with Unix modes only (inbound/ 2733: a student drops a
submission but cannot list the others). Some storage drivers apply the pods' `fsGroup` to a
volume: every file gets the group and g+rw, every folder g+rwx and setgid. All students share
that group on Kubernetes (gid 100), so inbound/ and feedback/ become readable and the course's
folder writable by every student. Whether a cluster's driver does it cannot be read from the
chart: run this, as a student (in a student's pod), once after deploying and after any storage
change:

    kubectl exec -n cours jupyter-<élève> -- \
        python -I /opt/cours-memoire-tuteur/etc/exchange_check.py

`-I`: the student's own files (user site, sitecustomize) cannot change what it reports.
It reads the folders' modes and tries what a student would (list inbound/ and feedback/, write in
the course's folder); exit status 0 and « échange privé » when nothing is open, else 1 and each
hole named. Only the standard library: it runs with any Python of the image.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

__all__ = ["exchange_problems", "main"]

# folder -> (mode bits that must be clear, what a set bit would let every student do)
_CLOSED = {
    "": (0o022, "créer, renommer ou supprimer les dossiers du cours"),
    "outbound": (0o022, "publier ou remplacer un devoir"),
    "inbound": (0o044, "lister les rendus des autres élèves"),
    "feedback": (0o044, "lister les retours des autres élèves"),
}


def _denied(action) -> bool:
    try:
        action()
    except PermissionError:
        return True
    return False


def _try_write(folder: Path) -> None:
    descriptor, name = tempfile.mkstemp(dir=folder, prefix=".verif-")
    os.close(descriptor)
    os.unlink(name)


def exchange_problems(exchange: Path, course_id: str) -> list[str]:
    """What a student (the caller) could do in the course's exchange folder that they must not."""
    if os.geteuid() == 0:
        return ["lancez la vérification en élève (dans le pod d'un élève), pas en root"]
    course = exchange / course_id
    if not course.is_dir():
        return [f"{course} n'existe pas\u00a0: il doit être créé avant tout élève"]
    problems = []
    root_mode = stat.S_IMODE(exchange.stat().st_mode)
    if root_mode & 0o1777 != 0o1777:
        problems.append(f"{exchange} est en {root_mode:04o}, pas 1777 (nbgrader l'exige)")
    for name, (closed, harm) in _CLOSED.items():
        folder = course / name if name else course
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode):
            problems.append(f"{folder} n'est pas un dossier")
            continue
        if info.st_uid == os.geteuid():
            problems.append(f"{folder} appartient à l'élève qui vérifie (uid {info.st_uid})")
        mode = stat.S_IMODE(info.st_mode)
        if mode & closed:
            problems.append(
                f"{folder} est en {mode:04o} (groupe {info.st_gid})\u00a0: tout élève pourrait "
                f"{harm}"
            )
    for name in ("inbound", "feedback"):
        if not _denied(lambda n=name: os.listdir(course / n)):
            problems.append(f"cet élève liste {course / name}")
    for name in ("", "outbound"):
        folder = course / name if name else course
        if not _denied(lambda f=folder: _try_write(f)):
            problems.append(f"cet élève écrit dans {folder}")
    inbound = stat.S_IMODE((course / "inbound").stat().st_mode)
    if inbound & 0o003 != 0o003:
        problems.append(f"{course / 'inbound'} en {inbound:04o}\u00a0: les élèves ne rendent plus")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    default = os.environ.get("NBGRADER_EXCHANGE", "/srv/nbgrader/exchange")
    exchange = Path(args[0] if args else default)
    course_id = args[1] if len(args) > 1 else os.environ.get("COURSE_ID", "memoire-tuteur")
    problems = exchange_problems(exchange, course_id)
    if problems:
        print("échange NON privé\u00a0:\n- " + "\n- ".join(problems), file=sys.stderr)
        print("(grader/hub/ADMIN.md, «\u00a0Le stockage de l'échange\u00a0»)", file=sys.stderr)
        return 1
    print(f"échange privé\u00a0: {exchange / course_id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
