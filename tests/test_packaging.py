"""The project's packaging: pyproject.toml and environment.yml name the same runtime set."""

import re
import subprocess
import sys
import tomllib

import yaml
from helpers import REPO as ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# conda-forge packages whose name differs from PyPI's
CONDA_TO_PYPI: dict[str, str] = {}


def pyproject_runtime() -> dict[str, Requirement]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    reqs = [Requirement(r) for r in data["project"]["dependencies"]]
    return {canonicalize_name(r.name): r for r in reqs}


def environment_pins() -> dict[str, str]:
    """Name -> pinned version from environment.yml (conda section and its pip section)."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert "conda-forge" in env["channels"]
    pins: dict[str, str] = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for line in dep["pip"]:
                if line.startswith("-e"):
                    assert line.split()[-1] == ".", "the course is installed with `-e .`"
                    continue
                name, _, version = line.partition("==")
                assert version, f"pip entry not pinned: {line}"
                pins[canonicalize_name(name)] = version
            continue
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)=([0-9][^=\s]*)", dep) or re.fullmatch(
            r"([A-Za-z0-9_.-]+)", dep
        )
        assert match, f"malformed conda entry: {dep}"
        name = CONDA_TO_PYPI.get(match.group(1), match.group(1))
        if name in ("python", "pip"):
            continue
        assert match.lastindex == 2, f"conda entry not pinned: {dep}"
        pins[canonicalize_name(name)] = match.group(2)
    return pins


def test_environment_names_the_same_runtime_set_as_pyproject() -> None:
    assert set(environment_pins()) == set(pyproject_runtime())


def test_environment_pins_satisfy_pyproject_ranges() -> None:
    runtime = pyproject_runtime()
    for name, version in environment_pins().items():
        assert runtime[name].specifier.contains(version, prereleases=True), (name, version)


def test_environment_python_matches_requires_python() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["requires-python"] == ">=3.11"
    assert python == "python=3.11"


def test_test_extra_pins_adk_reference() -> None:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "google-adk==2.10.0" in data["project"]["optional-dependencies"]["test"]


PUBLIC_MODULES = [
    "course",
    "course.events",
    "course.sessions",
    "course.tuteur",
    "course.inspecter",
    "course.quiz",
    "course.diagrammes",
    "course.labo",
]


def test_import_course_does_no_io() -> None:
    """Importing the course's modules opens no socket and no file but installed packages' metadata.

    pydantic scans entry points for its plugins when the first model class is built: reading
    installed metadata is part of importing, not the course's own I/O.
    """
    probe = (
        "import sys\n"
        "seen = []\n"
        "def hook(event, args):\n"
        "    if event.startswith(('socket.', 'sqlite3.connect', 'subprocess.')):\n"
        "        seen.append(event)\n"
        "    elif event == 'open' and isinstance(args[0], str):\n"
        "        name, mode = args[0], args[1] or 'r'\n"
        "        code = name.endswith(('.py', '.pyc', '.so', '.pth', '.zip'))\n"
        "        metadata = '.dist-info/' in name or '.egg-info/' in name\n"
        "        if 'w' in mode or 'a' in mode or '+' in mode or not (code or metadata):\n"
        "            seen.append((name, mode))\n"
        "import importlib\n"
        "sys.addaudithook(hook)\n"
        f"for m in {PUBLIC_MODULES!r}: importlib.import_module(m)\n"
        "print(seen)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make lab" in readme
    assert re.search(r"^exec make test$", ci, re.M)
