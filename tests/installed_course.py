"""A non-editable install of the course, as the hub installs it, in a folder any user can read.

Built once per test session: a venv from Debian's ``python3`` (the repository's own interpreter
may live under a folder other users cannot enter), the course installed by ``pip install .``
(not editable), and the few distributions grading imports, copied from the test environment.
Used to show what students can read (nothing hidden) and to grade as an unprivileged user.
"""

from __future__ import annotations

import atexit
import functools
import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from helpers import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = ["InstalledCourse", "copy_distributions", "installed_course"]

SYSTEM_PYTHON = Path("/usr/bin/python3")
# What grading imports beyond the standard library (course.sessions, the tutor, the runner).
GRADING_DISTRIBUTIONS = ("aiosqlite", "pydantic")


@dataclass(frozen=True)
class InstalledCourse:
    prefix: Path  # the venv
    python: Path
    site_packages: Path

    @property
    def package(self) -> Path:
        return self.site_packages / "course"


def _requirement_closure(
    names: tuple[str, ...], skip: frozenset[str] = frozenset()
) -> list[importlib.metadata.Distribution]:
    """The distributions `names` need here (markers evaluated), not entering those in `skip`."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    todo = list(names)
    while todo:
        requirement = Requirement(todo.pop())
        name = canonicalize_name(requirement.name)
        if name in seen or name in skip:
            continue
        if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
            continue
        dist = importlib.metadata.distribution(name)
        seen[name] = dist
        todo.extend(dist.requires or [])
    return list(seen.values())


def copy_distributions(names: tuple[str, ...], site: Path, skip: frozenset[str] = frozenset()):
    """Copy `names` and what they require from the test environment's site-packages into
    `site`, less the distributions named in `skip` (normalised names)."""
    ours = Path(sysconfig.get_paths()["purelib"])
    for dist in _requirement_closure(names, skip):
        for file in dist.files or []:
            origin = Path(dist.locate_file(file))
            try:
                relative = origin.relative_to(ours)
            except ValueError:
                continue  # scripts and data outside site-packages: not needed
            if origin.is_file():
                (site / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(origin, site / relative)


def _make_readable(folder: Path) -> None:
    for parent, _dirs, files in os.walk(folder):
        os.chmod(parent, 0o755)
        for name in files:
            path = os.path.join(parent, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o444)


@functools.cache
def installed_course() -> InstalledCourse:
    """Build the install once per session, in a new folder of /tmp that every user can enter
    (pytest's own temporary folders are private to root), removed when the session ends."""
    base = Path(tempfile.mkdtemp(prefix="cours-installe-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    version = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == str(sys.version_info[:2]), (
        f"{SYSTEM_PYTHON} est en {version}, l'environnement de test en {sys.version_info[:2]} : "
        "les paquets compilés copiés ne s'y chargeraient pas"
    )
    source = base / "source"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source)
    shutil.copytree(
        REPO / "course", source / "course", ignore=shutil.ignore_patterns("__pycache__")
    )
    prefix = base / "venv"
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--without-pip", str(prefix)], check=True)
    python = prefix / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q"]
        + [str(source)],
        check=True,
        capture_output=True,
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    copy_distributions(GRADING_DISTRIBUTIONS, site)
    shutil.rmtree(source)
    _make_readable(base)
    return InstalledCourse(prefix, python, site)
