"""The lock and its exported sets, read as the installers read them: one home for the tests that
check what each set installs (tests/test_packaging.py, test_wheel_matrix.py, test_lock_imports.py).

uv.lock is solved from pyproject.toml (`make lock`); requirements/*.txt are its exports, the files
every set-up installs from: lab.txt (`make lab`), hub.txt (the hub's installer), test.txt.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from helpers import REPO
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = [
    "EXPORTS",
    "PROJECT",
    "lock",
    "lock_closure",
    "locked_wheels",
    "parse_export",
    "parse_requirements",
    "selected",
]

PROJECT = "course-memoire-tuteur"
# each exported set: (with the course's runtime dependencies?, extras, dependency groups)
EXPORTS: dict[str, tuple[bool, tuple[str, ...], tuple[str, ...]]] = {
    "lab.txt": (True, (), ()),
    "hub.txt": (True, ("hub",), ()),
    "test.txt": (True, ("test",), ("lint",)),
    "lint.txt": (False, (), ("lint",)),
}


@functools.cache
def lock() -> dict:
    """uv.lock, read once per process (callers only read it)."""
    return tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))


def parse_requirements(path: Path) -> dict[tuple[str, str], Requirement]:
    """(name, version) -> requirement (and its marker) of a requirements file; each is hashed."""
    text = path.read_text(encoding="utf-8").replace("\\\n", " ")
    pins: dict[tuple[str, str], Requirement] = {}
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        spec, *hashes = line.split(" --hash=")
        assert hashes and all(h.startswith("sha256:") for h in hashes), f"{path}: {line[:60]}"
        req = Requirement(spec)
        (pin,) = req.specifier
        assert pin.operator == "==", f"{path}: not pinned: {spec}"
        pins[(canonicalize_name(req.name), pin.version)] = req
    return pins


def parse_export(name: str) -> dict[tuple[str, str], Requirement]:
    """A set of requirements/ (``lab.txt``…) as :func:`parse_requirements` reads it."""
    return parse_requirements(REPO / "requirements" / name)


def selected(
    pins: dict[tuple[str, str], Requirement], environment: dict[str, str] | None = None
) -> dict[str, str]:
    """name -> version of the pins whose marker holds in ``environment`` (pip's choice; this
    interpreter's when None)."""
    return {
        name: version
        for (name, version), req in pins.items()
        if req.marker is None or req.marker.evaluate(environment)
    }


def locked_wheels(name: str, version: str) -> list[str]:
    """The file names of every wheel uv.lock records for ``name`` ``version`` (the registry's)."""
    return list(_wheels()[(name, version)])


@functools.cache
def _wheels() -> dict[tuple[str, str], tuple[str, ...]]:
    return {
        (package["name"], package["version"]): tuple(
            w["url"].rsplit("/", 1)[-1] for w in package.get("wheels", [])
        )
        for package in lock()["package"]
    }


def lock_closure(runtime: bool, extras: tuple[str, ...], groups: tuple[str, ...]) -> set:
    """Every (name, version) of uv.lock that the course's set (with these extras/groups) needs."""
    packages = lock()["package"]
    by_name: dict[str, list[dict]] = {}
    for package in packages:
        by_name.setdefault(package["name"], []).append(package)
    root = next(p for p in packages if p["name"] == PROJECT)
    todo = list(root.get("dependencies", [])) if runtime else []
    for extra in extras:
        todo += root["optional-dependencies"][extra]
    for group in groups:
        todo += root["dev-dependencies"][group]
    seen: set[tuple[str, str]] = set()
    seen_extras: set[tuple[str, str, str]] = set()
    while todo:
        dep = todo.pop()
        if dep["name"] == PROJECT:
            continue
        candidates = by_name[dep["name"]]
        if "version" in dep:
            candidates = [p for p in candidates if p["version"] == dep["version"]]
        assert len(candidates) == 1, dep
        package = candidates[0]
        key = (package["name"], package["version"])
        if key not in seen:
            seen.add(key)
            todo += package.get("dependencies", [])
        for extra in dep.get("extra", []):
            if (*key, extra) not in seen_extras:
                seen_extras.add((*key, extra))
                todo += package.get("optional-dependencies", {}).get(extra, [])
    return seen
