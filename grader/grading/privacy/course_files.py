"""The course's own files in grader/, by content: how the erasure tells them from a teacher's.

A file the course ships as it ships it (the README names « ana » as an example) is no mention
of a learner; a file beside it (a class list in hub/, a script), a course file the teacher
changed (committed or not, with or without git: a course downloaded as a zip) or Jupyter's
checkpoint of a class list is searched. ``course_files.txt`` lists the SHA-256 of every file
git tracks in grader/ (line ends as LF: a Windows checkout gives the same digests);
``make course-files`` writes it again, and test_erase_course_files checks it against git.

The course's own git history (the checkout this code runs from, when it is one) is not the
class's either: a clone of the course in grader/ (the next version, to compare) holds it.
"""

from __future__ import annotations

import hashlib
import subprocess
import tempfile
from functools import cache
from pathlib import Path, PurePosixPath

__all__ = [
    "LIST",
    "course_digests",
    "course_folders",
    "course_history",
    "course_names",
    "digest",
    "git_templates",
    "listing",
]

LIST = Path(__file__).with_name("course_files.txt")


def digest(data: bytes) -> str:
    """The SHA-256 of `data`, its CRLF line ends read as LF."""
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def course_digests() -> set[str]:
    """The digests the list holds (``<sha256>  <path>`` per line; the path is for people)."""
    lines = LIST.read_text(encoding="utf-8").splitlines()
    return {line.split()[0] for line in lines if line.strip()}


@cache
def git_templates() -> frozenset[str]:
    """The digests of what ``git init`` writes (its sample hooks, description, info/exclude),
    made by this machine's git once per process (an erasure scans four times): git's English
    words, never a mention (a learner « an » was named in every repository of grader/). None
    without git."""
    with tempfile.TemporaryDirectory() as folder:
        try:
            subprocess.run(["git", "init", "-q", folder], capture_output=True, check=True)
        except (OSError, subprocess.CalledProcessError):
            return frozenset()
        files = Path(folder, ".git").rglob("*")
        return frozenset(digest(p.read_bytes()) for p in files if p.is_file())


def course_names() -> set[str]:
    """The names of the course's files and folders in grader/ (« hub », « grading »…): a
    learner whose id is one of them is not named by the course's own layout."""
    lines = LIST.read_text(encoding="utf-8").splitlines()
    return {part for line in lines if line.strip() for part in line.split("  ", 1)[1].split("/")}


def course_folders() -> set[str]:
    """The folders below grader/ that hold the course's modules (« grading/privacy »…): a
    module compiled there whose source an update moved is the course's."""
    lines = LIST.read_text(encoding="utf-8").splitlines()
    paths = [PurePosixPath(line.split("  ", 1)[1]) for line in lines if line.strip()]
    return {str(path.parent) for path in paths if path.suffix == ".py"} - {"."}


def listing(grader: Path) -> str:
    """The list's text for what git tracks in `grader` (the list itself left out)."""
    names = subprocess.run(
        ["git", "ls-files", "-z"], cwd=grader, capture_output=True, check=True
    ).stdout.decode("utf-8", errors="surrogateescape")
    mine = LIST.resolve()
    files = sorted(n for n in names.split("\0") if n and (grader / n).resolve() != mine)
    return "".join(f"{digest((grader / n).read_bytes())}  {n}\n" for n in files)


def course_history() -> tuple[frozenset[bytes], frozenset[bytes]]:
    """(the commits, every object) reachable from the refs of the course's own git repository
    (none when the course is not a git checkout): what the erasure names as not searched, in
    that repository and in its clones in grader/. Only what a branch or a tag holds: a file git
    keeps after ``git add`` then ``git reset`` is no history of the course."""
    checkout = LIST.parents[3]
    if not (checkout / ".git").exists():  # not the repository of a folder above (a home's)
        return frozenset(), frozenset()
    git = ["git", "-c", "safe.directory=*", "-C", str(checkout), "rev-list", "--all"]
    commits = subprocess.run(git, capture_output=True, timeout=600)
    objects = subprocess.run([*git, "--objects"], capture_output=True, timeout=600)
    if commits.returncode or objects.returncode:
        return frozenset(), frozenset()
    every = frozenset(line.split(b" ", 1)[0] for line in objects.stdout.splitlines())
    return frozenset(commits.stdout.split()), every
