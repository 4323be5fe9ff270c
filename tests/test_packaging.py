"""The project's packaging: pyproject.toml, the lock and its exports, and environment.yml agree.

uv.lock is solved from pyproject.toml (`make lock`); requirements/*.txt are its exports, the files
every set-up installs from (make, the hub installer, the image); environment.yml gives conda and
Binder users the same runtime versions.
"""

import importlib.metadata
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from helpers import REPO
from lock_sets import EXPORTS, PROJECT, lock, lock_closure, parse_export
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

# conda-forge packages whose name differs from PyPI's
CONDA_TO_PYPI: dict[str, str] = {}


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def dependency_groups() -> dict[str, list[str]]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return data.get("dependency-groups", {})


def pyproject_runtime() -> dict[str, Requirement]:
    reqs = [Requirement(r) for r in pyproject()["dependencies"]]
    return {canonicalize_name(r.name): r for r in reqs}


def all_pyproject_requirements() -> list[tuple[str, Requirement]]:
    """(where, requirement) for the dependencies, every extra and every dependency group."""
    found = [("dependencies", Requirement(r)) for r in pyproject()["dependencies"]]
    for extra, reqs in pyproject()["optional-dependencies"].items():
        found += [(f"extra {extra}", Requirement(r)) for r in reqs]
    for group, reqs in dependency_groups().items():
        found += [(f"group {group}", Requirement(r)) for r in reqs]
    return found


def locked_versions() -> dict[str, set[str]]:
    versions: dict[str, set[str]] = {}
    for package in lock()["package"]:
        versions.setdefault(package["name"], set()).add(package["version"])
    return versions


def test_lock_was_solved_from_this_pyproject() -> None:
    """A pyproject.toml edited without `make lock` fails here: uv.lock records what it solved."""
    metadata = next(p for p in lock()["package"] if p["name"] == PROJECT)["metadata"]

    def recorded(entry: dict) -> tuple:
        marker = entry.get("marker", "")
        return (
            entry["name"],
            tuple(sorted(entry.get("extras", []))),
            entry.get("specifier", ""),
            marker,
        )

    def declared(req: Requirement, extra: str | None = None) -> tuple:
        # a plain requirement's own marker, as uv records it (single quotes)
        marker = f"extra == '{extra}'" if extra else str(req.marker or "").replace('"', "'")
        spec = str(SpecifierSet(str(req.specifier))) if req.specifier else ""
        return (canonicalize_name(req.name), tuple(sorted(req.extras)), spec, marker)

    want = {declared(Requirement(r)) for r in pyproject()["dependencies"]}
    for extra, reqs in pyproject()["optional-dependencies"].items():
        want |= {declared(Requirement(r), extra) for r in reqs}
    got = {
        (name, extras, str(SpecifierSet(spec)) if spec else "", marker)
        for name, extras, spec, marker in map(recorded, metadata["requires-dist"])
    }
    assert got == want, "uv.lock ne correspond plus à pyproject.toml : lancez `make lock`"
    assert set(metadata["provides-extras"]) == set(pyproject()["optional-dependencies"])
    groups = {g: sorted(recorded(e)[::2] for e in v) for g, v in metadata["requires-dev"].items()}
    assert groups == {
        g: sorted(declared(Requirement(r))[::2] for r in v) for g, v in dependency_groups().items()
    }, "uv.lock ne correspond plus à pyproject.toml : lancez `make lock`"


def test_locked_versions_satisfy_every_range_of_pyproject() -> None:
    versions = locked_versions()
    for where, req in all_pyproject_requirements():
        name = canonicalize_name(req.name)
        if name == PROJECT:
            continue
        assert name in versions, f"{where}: {req} absent de uv.lock"
        for version in versions[name]:
            assert req.specifier.contains(version, prereleases=True), (where, str(req), version)


def bounds(specifier: SpecifierSet, operator: str) -> list[str]:
    return [spec.version for spec in specifier if spec.operator == operator]


def test_floors_are_at_least_nbgrader_s_own() -> None:
    """nbgrader 0.9.6 needs jupyterlab>=4.2,<5, notebook>=7.2,<8...: the course asks no less."""
    from packaging.version import Version

    assert pyproject_runtime()["nbgrader"].specifier == SpecifierSet("==0.9.6")
    ours = {canonicalize_name(r.name): r.specifier for _, r in all_pyproject_requirements()}
    theirs = [Requirement(r) for r in importlib.metadata.requires("nbgrader") or []]
    checked = set()
    for req in theirs:
        name = canonicalize_name(req.name)
        if req.marker is not None or name not in ours:
            continue
        for floor in bounds(req.specifier, ">="):
            assert any(Version(f) >= Version(floor) for f in bounds(ours[name], ">=")), (
                name,
                str(ours[name]),
                str(req.specifier),
            )
            checked.add(name)
        for ceiling in bounds(req.specifier, "<"):
            assert any(Version(c) <= Version(ceiling) for c in bounds(ours[name], "<")), (
                name,
                str(ours[name]),
                str(req.specifier),
            )
    assert {"jupyterlab", "notebook", "ipywidgets", "pyyaml", "requests"} <= checked


@pytest.mark.parametrize("export", sorted(EXPORTS))
def test_each_requirements_file_is_exactly_its_set_of_the_lock(export: str) -> None:
    """Every package the set needs, at uv.lock's version, hash-checked; nothing else."""
    pins = parse_export(export)
    assert set(pins) == lock_closure(*EXPORTS[export]), f"{export} : lancez `make lock`"
    universal = {req.marker is not None for req in pins.values()}
    if export != "lint.txt":
        assert universal == {True, False}, "an export for every platform carries markers"


def test_lint_installs_ruff_alone_and_test_holds_everything() -> None:
    lint = {name for name, _ in parse_export("lint.txt")}
    assert lint == {"ruff"}
    lab, hub, test = (set(parse_export(n)) for n in ("lab.txt", "hub.txt", "test.txt"))
    assert lab < hub < test
    assert {("google-adk", "2.10.0")} <= lab  # the ADK appendix runs for every learner


def test_uv_bootstrap_is_pinned_and_hashed() -> None:
    (pin,) = parse_export("uv.txt")
    assert pin[0] == "uv"


def test_this_environment_is_the_locked_test_set() -> None:
    """`make setup-test` installed exactly the lock's versions (those whose markers apply here)."""
    wrong = {}
    for (name, version), req in parse_export("test.txt").items():
        if req.marker is not None and not req.marker.evaluate():
            continue
        installed = importlib.metadata.version(name)
        if installed != version:
            wrong[name] = (installed, version)
    assert not wrong, f"installé ≠ verrou (lancez `make setup-test`) : {wrong}"


def make_dry_run(target: str) -> str:
    """The commands `make TARGET` would run from scratch (-B: as if nothing were installed)."""
    out = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target, "INSTALLER=uv", "UV=/uv"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout


def test_make_installs_from_the_locks_only() -> None:
    """lint gets ruff alone, lab the runtime, test everything; always hash-checked locks, each
    complete by itself (--no-deps: pip would otherwise resolve, and refuse in hash mode, what
    the lock leaves out on purpose, rfc3987-syntax)."""
    installed = {}
    for target in ("lint", "lab", "test"):
        dry_run = make_dry_run(target)
        locks = re.findall(r"(--no-deps )?--require-hashes -r requirements/(\w+)\.txt", dry_run)
        assert locks and all(no_deps for no_deps, _ in locks), (target, locks)
        installed[target] = {name for _, name in locks}
        other = re.findall(
            r"pip install -q (?:--python \S+ )?+(?!--no-deps --require-hashes -r requirements/)"
            r"([^;|]*)",
            dry_run,
        )
        assert {o.strip() for o in other} <= {"--no-deps -e ."}, other
    assert installed["lint"] == {"uv", "lint"}
    assert installed["lab"] == {"uv", "lab"}
    assert installed["test"] == {"uv", "lab", "test", "lint"}
    assert "bash .ci/system-deps" in make_dry_run("test")


def test_the_venv_and_the_course_are_compiled_to_bytecode() -> None:
    """Where the environment sets PYTHONDONTWRITEBYTECODE (this machine does), no process writes
    bytecode: every nbgrader, kernel or server start would compile what it imports from source,
    every time. So the set-up compiles the venv (pip by default, uv told by UV_COMPILE_BYTECODE)
    and the test targets compile the course's own modules first."""
    site = Path(sysconfig.get_path("purelib"))
    sources = [p for p in site.rglob("*.py") if "__pycache__" not in p.parts]
    assert len(sources) > 1000, len(sources)  # nbgrader, jupyter_server, sqlalchemy…
    missing = [p for p in sources if not Path(importlib.util.cache_from_source(str(p))).exists()]
    assert not missing, (
        f"{len(missing)} module(s) sans bytecode, dont {missing[:5]} (un .venv fait avant\u00a0: "
        "`rm -rf .venv && make setup-test` le refait compilé)"
    )
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^export UV_COMPILE_BYTECODE := 1$", makefile, re.M)
    for target in ("test", "test-fast", "test-browser", "test-hub", "test-classe"):
        dry_run = make_dry_run(target)
        assert "-m compileall -q -j 0 course grader/grading grader/hub tests" in dry_run, target
        assert dry_run.index("compileall") < dry_run.index("pytest"), target


def test_hub_installer_and_image_install_from_the_lock() -> None:
    installer = (REPO / "grader" / "hub" / "install-course-env.sh").read_text(encoding="utf-8")
    # complete sets: nothing resolved, so nothing the lock leaves out is fetched unhashed
    assert '--no-deps --require-hashes -r "$REPO/requirements/hub.txt"' in installer
    assert '--no-deps "$build" "$JUPYTERHUB_SPEC" "$CULLER_SPEC"' in installer
    dockerfile = (REPO / "grader" / "hub" / "z2jh" / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^COPY requirements /tmp/cours/requirements$", dockerfile, re.M)


def test_the_slow_iri_checker_is_left_out_of_every_set() -> None:
    """rfc3987-syntax costs about 2 s of CPU in every Jupyter server and nbgrader command
    (pyproject.toml's [tool.uv] says why): no set installs it, nor lark, which only it needs."""
    for path in sorted((REPO / "requirements").glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.match(r"(rfc3987-syntax|lark)==", line):
                assert "sys_platform == 'never'" in line, (path.name, line)


def environment() -> dict:
    return yaml.safe_load((REPO / "environment.yml").read_text(encoding="utf-8"))


def environment_pins() -> dict[str, str]:
    """Name -> pinned version from environment.yml (conda section and its pip section)."""
    env = environment()
    assert "conda-forge" in env["channels"]
    pins: dict[str, str] = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for line in dep["pip"]:
                if line == ".":
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


def test_environment_installs_the_course_with_its_data_files() -> None:
    """Not editable: an editable install gets no data file, so the quiz save hook would be off."""
    (pip,) = [d["pip"] for d in environment()["dependencies"] if isinstance(d, dict)]
    assert "." in pip
    assert not [line for line in pip if line.startswith(("-e", "--editable"))]


def test_environment_names_the_same_runtime_set_as_pyproject() -> None:
    assert set(environment_pins()) == set(pyproject_runtime())


def test_environment_pins_are_the_locked_runtime_versions() -> None:
    runtime = pyproject_runtime()
    lab = {name: version for name, version in parse_export("lab.txt")}
    for name, version in environment_pins().items():
        assert runtime[name].specifier.contains(version, prereleases=True), (name, version)
        assert version == lab[name], f"environment.yml {name}={version}, verrou {lab[name]}"


def test_environment_python_matches_requires_python() -> None:
    python = next(
        d for d in environment()["dependencies"] if isinstance(d, str) and d.startswith("python=")
    )
    assert pyproject()["requires-python"] == ">=3.11"
    assert python == "python=3.11"


def test_adk_reference_is_in_the_runtime_set() -> None:
    """The ADK appendix needs google-adk in what `make lab`, the hub and conda install: a
    learner offline cannot install it later (and the course is no published package)."""
    assert str(pyproject_runtime()["google-adk"]) == "google-adk==2.10.0"
    assert "adk" not in pyproject()["optional-dependencies"]
    assert environment_pins()["google-adk"] == "2.10.0"
    assert f"{PROJECT}[hub]" in pyproject()["optional-dependencies"]["test"]


def test_a_built_wheel_carries_every_data_file(tmp_path: Path) -> None:
    """What conda, Binder and the hub install (not editable) holds the Jupyter config files."""
    source = tmp_path / "source"
    source.mkdir()
    for part in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / part, source)
    shutil.copytree(
        REPO / "course", source / "course", ignore=shutil.ignore_patterns("__pycache__")
    )
    build = "from setuptools import build_meta as b; print(b.build_wheel(sys.argv[1]))"
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; {build}", str(tmp_path / "dist")],
        cwd=source,
        capture_output=True,
        text=True,
        check=True,
    )
    wheel = tmp_path / "dist" / out.stdout.strip().splitlines()[-1]
    names = set(zipfile.ZipFile(wheel).namelist())
    data_files = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["data-files"]
    assert data_files
    for destination, files in data_files.items():
        for file in files:
            wanted = f"course_memoire_tuteur-0.1.0.data/data/{destination}/{Path(file).name}"
            assert wanted in names, wanted


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
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test" in readme and "make lab" in readme
    assert re.search(r"^exec make test$", ci, re.M)


# folder names a checkout may have: a ", a ', a space, a $( that the shell would run
HOSTILE_NAMES = ['mon "cours"', "cours $(touch canari)", 'l\'élève $(touch canari) "x"']
# paths a teacher gives on the command line, relative (make expands a $( in a command-line value
# itself): the checkout's absolute path leads them, and each holds a ' and a "
GIVEN_PATHS = {
    "ELEVES": 'grader/l\'é"x".csv',
    "DOSSIER": 'sauve\'"x"',
    "SAUVEGARDE": 'sauve\'"x"/s.tar.gz',
    "HUB_DB": 'hub\'"x".sqlite',
    "REGISTRE": 'reg\'"x"',
    "ECHANGE": 'echange\'"x"',
    "HOMES": 'homes\'"x"',
    "MOTS_DE_PASSE": 'mdp\'"x".dbm',
    "JUNIT": 'junit\'"x".xml',
}
# what the targets that need them are given (`make help` names them)
OTHER_VALUES = {"LECON": "04", "DATE": "2025-03-14 18:00:00 Europe/Paris", "ID": "chloé"}
# the targets whose commands hold no absolute path (the venv's tools by their relative path)
RELATIVE_ONLY = {
    "help",
    "setup",
    "setup-test",
    "lock",
    "system-deps",
    "test",
    "test-units",
    "course-files",
    "test-fast",
    "test-browser",
    "test-hub",
    "test-classe",
    "lint",
    "bench",
    "bench-setup",
    "clean",
}


def _quoted(path: Path) -> str:
    """`path` opening a word of the Makefiles' `$(call q,…)`: in single quotes, each ' as '\\''."""
    return "'" + str(path).replace("'", "'\\''")


def _make_lines(folder: Path, env: dict[str, str], *args: str) -> list[str]:
    """The commands `make -n -B ARGS` prints in `folder`, each a logical line (a recipe line's
    backslash-newlines joined, as the shell reads them)."""
    dry_run = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dry_run.returncode == 0, (args, dry_run.stdout, dry_run.stderr)
    return [line for line in dry_run.stdout.replace("\\\n", " ").splitlines() if line.strip()]


def _targets(folder: Path, env: dict[str, str]) -> list[str]:
    """Every target `make help` names (run for real: it only reads the Makefiles)."""
    shown = subprocess.run(
        ["make", "--no-print-directory", "help"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return re.findall(r"^make ([a-z][a-z-]*)", shown, flags=re.M)


def _check_commands(commands: list[str], checkout: Path, target: str) -> bool:
    """Each command is valid shell and holds the checkout's path only as the start of a
    single-quoted word (where the shell runs nothing); whether it holds it at all."""
    quoted = _quoted(checkout)
    for command in commands:
        syntax = subprocess.run(["bash", "-n", "-c", command], capture_output=True, text=True)
        assert syntax.returncode == 0, (target, command, syntax.stderr)
        assert str(checkout.parent) not in command.replace(quoted, ""), (target, command)
    return any(quoted in command for command in commands)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_no_make_target_hands_the_shell_a_path_it_could_run(tmp_path: Path, name: str) -> None:
    """A checkout whose folder name holds a ", a ', a space or a $( (without uv on PATH, the
    learner's usual case), and teacher-given paths holding a ' and a ": every target `make help`
    names (the course's Makefile with grader/grader.mk, then the student package's own
    Makefile) prints commands that are valid shell, in which each absolute path is one
    single-quoted word (a " inside "…" was a syntax error, a $( inside "…" ran: `make notebooks`
    failed with error 127), and nothing ran."""
    checkout = tmp_path / name
    (checkout / "course").mkdir(parents=True)
    (checkout / "grader" / "grading").mkdir(parents=True)  # else: a French refusal (grader.mk)
    shutil.copy(REPO / "Makefile", checkout / "Makefile")
    shutil.copy(REPO / "grader" / "grader.mk", checkout / "grader" / "grader.mk")
    (checkout / "requirements").symlink_to(REPO / "requirements")
    (checkout / "pyproject.toml").symlink_to(REPO / "pyproject.toml")
    (checkout / "course" / "save_hook.py").symlink_to(REPO / "course" / "save_hook.py")
    env = {k: v for k, v in os.environ.items() if k not in ("UV", "VIRTUAL_ENV")}
    env["PATH"] = "/usr/bin:/bin"  # no uv: the Makefile's own, in .venv
    assert not shutil.which("uv", path=env["PATH"])
    values = [f"{k}={v}" for k, v in {**GIVEN_PATHS, **OTHER_VALUES}.items()]
    targets = _targets(checkout, env)
    # the control: the learner's and the teacher's targets are all there
    assert {"setup", "lab", "recommencer", "notebooks", "grade", "collect", "students"} <= set(
        targets
    ), targets
    assert {"sauvegarde", "restauration", "export", "oublier-eleve", "paquet-eleve"} <= set(
        targets
    ), targets
    with_paths = set()
    for target in targets:
        commands = _make_lines(checkout, env, target, *values)
        if _check_commands(commands, checkout, target):
            with_paths.add(target)
        if target == "setup":  # the control: uv's test, by its relative path
            assert any("-x '.venv/bin/uv'" in c for c in commands), commands
    assert with_paths == set(targets) - RELATIVE_ONLY
    # a given path reaches its tool as one word, led by the checkout's path
    erase = _make_lines(checkout, env, "oublier-eleve", *values)[-1]
    assert f"--eleves {_quoted(checkout / 'grader')}/l'\\''é\"x\".csv' " in erase, erase

    # from grader/ (the teacher's other way): its Makefile hands each goal over to the root's,
    # the paths given made absolute, which then hold the checkout's path (this hand-over runs
    # even under -n: unquoted, it ran what the name holds)
    shutil.copy(REPO / "grader" / "Makefile", checkout / "grader" / "Makefile")
    from_grader = [f"{k}={v}" for k, v in GIVEN_PATHS.items() if k != "JUNIT"]
    for target in ("notebooks", "students", "grade", "sauvegarde", "restauration"):
        handover, *commands = _make_lines(checkout / "grader", env, target, *from_grader)
        words = shlex.split(handover)
        assert words[:4] == ["make", "--no-print-directory", "-C", str(checkout)], handover
        # each given path as make text read once (:=), its $ doubled: make keeps it as is
        made_text = f"ELEVES:={checkout / 'grader' / GIVEN_PATHS['ELEVES']}".replace("$", "$$")
        assert made_text in words, handover
        assert _check_commands(commands, checkout, target)
        if target in ("students", "sauvegarde", "restauration"):  # ELEVES, given from grader/
            roster = _quoted(checkout / "grader" / GIVEN_PATHS["ELEVES"]) + "'"
            assert any(f" {roster}" in c for c in commands), (target, commands)

    # the student package: its own Makefile, alone in the learners' folder
    package = checkout / "paquet"
    (package / "course").mkdir(parents=True)
    shutil.copy(REPO / "grader" / "grading" / "student_package.mk", package / "Makefile")
    for part in ("requirements", "pyproject.toml", "course/save_hook.py"):
        (package / part).symlink_to(REPO / part)
    student_targets = _targets(package, env)
    assert student_targets == ["help", "setup", "lab", "recommencer"]
    for target in student_targets:
        commands = _make_lines(package, env, target, "LECON=04")
        assert _check_commands(commands, package, target) == (target in ("lab", "recommencer"))

    # nothing ran; the control: the old quoting, "…", runs what the name holds
    assert not list(tmp_path.rglob("canari"))
    subprocess.run(["bash", "-c", f'true "{checkout}"'], cwd=tmp_path, capture_output=True)
    assert (tmp_path / "canari").exists() == ("$(touch canari)" in name)
