"""CONTRIBUTING's row « a class command », enforced: a module of grader/grading with a `main` is
a command. It sits at the package's top (`python -m grading.<module>`, as grader.mk and the
docs start it), its parser is `FrenchParser` (French usage, help and errors), and either a
`make` target of grader/grader.mk runs it, documented by a `## make <target>` line (what
`make help` shows) and named in grader/README.md, or it is one of the few tools started by
hand, named with its `python -m` line in grader/README.md."""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

from grading.classroom.class_lock import INTERRUPTED_AT_START
from grading_course import BIN, copy_course, run_tool, start_grading
from helpers import REPO

PACKAGE = REPO / "grader" / "grading"
MAKEFILE = REPO / "grader" / "grader.mk"
README = REPO / "grader" / "README.md"
# started by hand, not by make: the samples, a benchmark
BY_HAND = {"samples", "sandbox_bench"}
# FrenchParser, or the one helper that builds it for a command on one assignment
FRENCH_PARSERS = {"FrenchParser", "assignment_command"}


def commands(package: Path) -> dict[str, ast.Module]:
    """Every module of `package` that defines a top-level `main`, by dotted name."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
            found[".".join(path.relative_to(package).with_suffix("").parts)] = tree
    return found


def make_targets(makefile: Path) -> dict[str, str]:
    """module → the target whose recipe runs `$(GRADING)<module>` or `-m grading.<module>`."""
    targets: dict[str, str] = {}
    current = ""
    for line in makefile.read_text(encoding="utf-8").splitlines():
        rule = re.match(r"^([a-z][a-z-]*):(?!=)", line)
        if rule:
            current = rule.group(1)
        for module in re.findall(r"\$\(GRADING\)([a-z_.]+)|-m grading\.([a-z_.]+)", line):
            targets.setdefault(module[0] or module[1], current)
    return targets


def problems(package: Path, makefile: Path, readme: Path) -> list[str]:
    """What breaks the row, one line each."""
    out = []
    targets = make_targets(makefile)
    make_text = makefile.read_text(encoding="utf-8")
    readme_text = readme.read_text(encoding="utf-8")
    for name, tree in commands(package).items():
        if "." in name:
            out.append(f"grading.{name}: a command sits in a subfolder")
        calls = {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        if not calls & FRENCH_PARSERS:
            out.append(f"grading.{name}: its parser is not FrenchParser")
        if name in BY_HAND:
            if f"python -m grading.{name}" not in readme_text:
                out.append(f"grading.{name}: grader/README.md has no « python -m grading.{name} »")
            continue
        target = targets.get(name)
        if target is None:
            out.append(f"grading.{name}: no make target runs it")
            continue
        if not re.search(rf"^## make {re.escape(target)}\b", make_text, flags=re.M):
            out.append(f"make {target}: no « ## make {target} » line for make help")
        if f"make {target}" not in readme_text:
            out.append(f"make {target}: grader/README.md does not name it")
    return out


def test_every_command_follows_the_row():
    assert {"autograde", "backup", "erase_learner", "collect"} <= set(commands(PACKAGE))
    assert problems(PACKAGE, MAKEFILE, README) == []


def test_a_command_that_breaks_the_row_is_named(tmp_path):
    """Positive control: each way to break the row is found, on a package of three modules."""
    package = tmp_path / "grading"
    (package / "runs").mkdir(parents=True)
    parser = "from .french_args import FrenchParser\n\ndef main():\n    FrenchParser()\n"
    (package / "bien.py").write_text(parser)
    (package / "sans_cible.py").write_text(parser)
    (package / "anglais.py").write_text("import argparse\n\ndef main():\n    argparse.X()\n")
    (package / "runs" / "cachee.py").write_text(parser)
    makefile = tmp_path / "grader.mk"
    makefile.write_text(
        "## make bien : fait bien\nbien: setup\n\t$(GRADING)bien\n"
        "anglais: setup\n\t$(GRADING)anglais\n"
    )
    readme = tmp_path / "README.md"
    readme.write_text("`make bien`\n")
    assert sorted(problems(package, makefile, readme)) == [
        "grading.anglais: its parser is not FrenchParser",
        "grading.runs.cachee: a command sits in a subfolder",
        "grading.runs.cachee: no make target runs it",
        "grading.sans_cible: no make target runs it",
        "make anglais: grader/README.md does not name it",
        "make anglais: no « ## make anglais » line for make help",
    ]


def test_the_tests_mirror_the_package():
    """A test file named after a module of grader/grading sits in the same folder under
    tests/grading (`test_ids.py` for `classroom/ids.py`: `tests/grading/classroom/`)."""
    homes = {
        path.stem: path.parent.relative_to(PACKAGE)
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py"
    }
    tests = REPO / "tests" / "grading"
    misplaced = [
        f"{path.relative_to(tests)} (module in grading/{homes[path.stem[5:]]})"
        for path in tests.rglob("test_*.py")
        if path.stem[5:] in homes and path.parent.relative_to(tests) != homes[path.stem[5:]]
    ]
    assert misplaced == []
    assert {"classroom", "runs", "nbgrader_ext", "french"} <= {
        p.name for p in tests.iterdir() if p.is_dir()
    }


def test_the_report_module_started_as_a_command_names_the_one_that_makes_the_report():
    """``python -m grading.report`` had its own command beside ``make rapport`` (issue 35:
    one way for each); a teacher who still types it is told which one makes the report, rather
    than getting nothing back and no report."""
    done = subprocess.run(
        [sys.executable, "-m", "grading.report"],
        cwd=REPO / "grader",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and not done.stdout, done
    assert "make rapport (python -m grading.rapport" in done.stderr, done.stderr


def _files(folder: Path) -> set[str]:
    """What `folder` holds, but Python's compiled files."""
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if "__pycache__" not in p.parts}


def _interrupted_at_start(grader: Path, name: str) -> tuple[int, str, str, bool]:
    """``python -m grading.<name>`` in `grader`, Ctrl-C to its group as soon as Python has
    located the command (its compiled file appears: runpy imports `grading`, compiles the
    command, only then runs it); its status, output, errors, and whether it wrote anything."""
    for cache in list((grader / "grading").rglob("__pycache__")):
        shutil.rmtree(cache)
    before = _files(grader)
    located = Path(importlib.util.cache_from_source(str(grader / "grading" / f"{name}.py")))
    proc = start_grading(grader, name)
    try:
        deadline = time.monotonic() + 60
        while not located.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)  # not a busy loop: that core is the command's on a loaded machine
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return proc.returncode, out, err, _files(grader) != before


def test_ctrl_c_while_a_command_starts_is_one_french_line(tmp_path, monkeypatch):
    """Ctrl-C in the first second of a class command, while Python still imports it (before its
    main and its class lock): one French line and status 130, nothing written; it was Python's
    English traceback. Every command, started as make starts it in a copy of the course (without
    __pycache__, Python allowed to write them, as a teacher's), interrupted as soon as Python
    has located it. A Ctrl-C that a busy machine delivered only once the command's main ran (a
    light command imports for a few milliseconds) proves nothing here: tried again, 5 times
    at most."""
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    grader = copy_course(tmp_path)
    said = {}
    for name in commands(PACKAGE):
        for _ in range(5):
            status, out, err, wrote = _interrupted_at_start(grader, name)
            said[name] = (status, out, err, wrote)
            french = err == f"✘ {INTERRUPTED_AT_START}\n"
            traceback = err.endswith("KeyboardInterrupt\n") and ", in main\n" not in err
            if french or traceback:  # before its main, as this test means
                break
    expected = (130, "", f"✘ {INTERRUPTED_AT_START}\n", False)
    assert {name: got for name, got in said.items() if got != expected} == {}
    # nbgrader's own processes import `grading` too (nbgrader_config.py), never by -m: their
    # Ctrl-C stays theirs
    hook = "import grading, sys; print(sys.excepthook is sys.__excepthook__)"
    assert run_tool(grader, str(BIN / "python"), "-c", hook).stdout == "True\n"
