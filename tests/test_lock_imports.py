"""The lock holds what the code imports: every module imported at run time is installed by the
set of the environment that runs it, not by a test tool that happens to be beside it.

- course/, the lessons and the TPs (code cells of solutions/ and notebooks/), the instructor's
  grading (grader/grading, grader/nbgrader_config.py): the lab set (`make lab`, and what the
  instructor grades with);
- grader/hub, and all of the above (the class's kernels run there): the hub set
  (requirements/hub.txt, install-course-env.sh);
- tests/, and all of the above: the test set.

Read statically (every ``import`` in the source, those inside functions too; an import guarded by
``except ImportError`` is optional). A module maps to its distribution through the installed
metadata (the test environment holds every set). A need no ``import`` shows is declared in
INDIRECT: SQLAlchemy's asyncio engine needs SQLAlchemy's ``asyncio`` extra (greenlet), which
SQLAlchemy 2.1 no longer installs by itself; the check then asks for that extra's requirements.
The control: the same check on a copy of lab.txt without greenlet, or without asyncpg, fails.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import json
import re
import sys
from pathlib import Path

import pytest
from helpers import REPO
from lock_sets import parse_requirements
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# what runs where (folders and files relative to the repository) -> the set it installs
LAB = ("course", "solutions", "notebooks", "grader/grading", "grader/nbgrader_config.py")
SOURCES = {
    "lab.txt": LAB,
    # the hub's single-user servers run the lessons and the grading too
    "hub.txt": (*LAB, "grader/hub"),
    "test.txt": (*LAB, "grader/hub", "tests"),
}
# a module (or a name imported from it) that needs a distribution's extra at run time without
# importing it where the code shows: (module, imported name or None) -> (distribution, extra)
INDIRECT = {
    # ADK's DatabaseSessionService runs on SQLAlchemy's asyncio engine (create_async_engine),
    # which cannot start without greenlet (sqlalchemy[asyncio])
    ("google.adk.sessions.database_session_service", None): ("sqlalchemy", "asyncio"),
    ("google.adk.sessions", "DatabaseSessionService"): ("sqlalchemy", "asyncio"),
    ("sqlalchemy.ext.asyncio", None): ("sqlalchemy", "asyncio"),
}


def _first_party() -> set[str]:
    """Names the repository itself provides: packages and modules of course/, grader/, tests/."""
    names = {"course", "grading"}
    for folder in (REPO / "tests", REPO / "grader" / "hub", REPO / "grader" / "grading"):
        for path in folder.rglob("*.py"):
            names.add(path.stem)
        names |= {p.name for p in folder.rglob("*") if p.is_dir()}
    return names


def _optional(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    """Inside ``try:`` with an ``except ImportError`` (or ModuleNotFoundError) handler."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, ast.Try) and node in parent.body:
            for handler in parent.handlers:
                names = ast.unparse(handler.type) if handler.type else ""
                if "ImportError" in names or "ModuleNotFoundError" in names:
                    return True
        node = parent
    return False


def imports_of(source: str) -> set[tuple[str, str | None]]:
    """(module, imported name) of every absolute import that is not optional; (module, None)
    for ``import module``."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(tree):
        if _optional(node, parents):
            continue
        if isinstance(node, ast.Import):
            found |= {(alias.name, None) for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add((node.module, None))
            found |= {(node.module, alias.name) for alias in node.names}
    return found


def _cell_source(text: str) -> str:
    """A code cell as Python: IPython's magics and shell escapes left out."""
    return "\n".join("" if re.match(r"\s*[%!]", line) else line for line in text.splitlines())


def sources(where: tuple[str, ...]) -> dict[str, str]:
    """path -> Python source of every module and notebook code cell under ``where``."""
    found = {}
    for part in where:
        path = REPO / part
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        for file in files:
            if "__pycache__" in file.parts or not file.is_file():
                continue
            rel = file.relative_to(REPO).as_posix()
            if file.suffix == ".py":
                found[rel] = file.read_text(encoding="utf-8")
            elif file.suffix == ".ipynb":
                cells = json.loads(file.read_text(encoding="utf-8"))["cells"]
                for cell in cells:
                    if cell["cell_type"] == "code":
                        text = "".join(cell["source"])
                        found[f"{rel}#{cell.get('id')}"] = _cell_source(text)
    return found


@functools.cache
def _module_owners() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


@functools.cache
def _files_of(dist: str) -> frozenset[str]:
    return frozenset(str(f) for f in importlib.metadata.distribution(dist).files or [])


@functools.cache
def owners_of(module: str) -> list[str]:
    """The distributions that install ``module``: for a namespace shared by several (``google``),
    those holding its longest installed prefix (``google/adk``)."""
    owners = _module_owners().get(module.split(".", 1)[0], [])
    parts = module.split(".")
    for depth in range(len(parts), 1, -1):
        prefix = "/".join(parts[:depth])
        holding = [
            owner
            for owner in owners
            if any(f == f"{prefix}.py" or f.startswith(f"{prefix}/") for f in _files_of(owner))
        ]
        if holding:
            return holding
    return owners


@functools.cache
def _needs(imported: frozenset[tuple[str, str | None]]) -> dict[str, str]:
    """distribution -> the module whose import needs it (third-party imports and INDIRECT)."""
    first_party = _first_party()
    needs: dict[str, str] = {}
    for module, name in sorted(imported, key=lambda item: (item[0], item[1] or "")):
        top = module.split(".", 1)[0]
        if top in sys.stdlib_module_names or top in first_party or top == "__future__":
            continue
        if name is None:
            owners = owners_of(module)
            assert owners, f"«\u00a0import {module}\u00a0» : aucun paquet installé ne le fournit"
            for owner in owners:
                needs.setdefault(canonicalize_name(owner), module)
        for prefix, wanted in INDIRECT:
            if (module == prefix or module.startswith(prefix + ".")) and wanted in (None, name):
                dist, extra = INDIRECT[(prefix, wanted)]
                for req in map(Requirement, importlib.metadata.requires(dist) or []):
                    if req.marker is not None and req.marker.evaluate({"extra": extra}):
                        needs.setdefault(canonicalize_name(req.name), module)
    return needs


def missing_from(export: Path, where: tuple[str, ...]) -> dict[str, str]:
    """distribution -> the import that needs it, for what ``export`` does not install."""
    installed = {name for name, _version in parse_requirements(export)}
    imported = imports_under(where)
    first_file: dict[str, str] = {}
    for (module, _name), path in imported.items():
        first_file.setdefault(module, path)
    return {
        dist: f"{module} ({first_file[module]})"
        for dist, module in _needs(frozenset(imported)).items()
        if dist not in installed
    }


@functools.cache
def imports_under(where: tuple[str, ...]) -> dict[tuple[str, str | None], str]:
    """(module, name) -> the first file (or notebook cell) importing it, under ``where``."""
    imported: dict[tuple[str, str | None], str] = {}
    for path, text in sources(where).items():
        try:
            found = imports_of(text)
        except SyntaxError:
            # a student version's stub cell may not parse; its solution cell is read instead
            assert "notebooks/" in path, f"{path} ne se lit pas en Python"
            continue
        for item in found:
            imported.setdefault(item, path)
    return imported


@pytest.mark.parametrize("export", sorted(SOURCES))
def test_every_runtime_import_is_in_the_set_that_runs_it(export: str):
    missing = missing_from(REPO / "requirements" / export, SOURCES[export])
    assert not missing, f"{export} n'installe pas ce qu'importe le code : {missing}"


def test_the_lab_set_brings_greenlet_for_adk_s_database_service():
    """The need no import shows is found: ADK's DatabaseSessionService, imported by the course and
    lesson 7, asks for SQLAlchemy's asyncio extra."""
    needs = _needs(frozenset(imports_of("from google.adk.sessions import DatabaseSessionService")))
    assert needs == {"google-adk": "google.adk.sessions", "greenlet": "google.adk.sessions"}


@pytest.mark.parametrize("removed", ["greenlet", "asyncpg"])
def test_the_check_fails_on_a_lab_set_without_a_needed_package(removed: str, tmp_path: Path):
    """The control: lab.txt with one package taken out (its lines, hashes included)."""
    text = (REPO / "requirements" / "lab.txt").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    kept, skipping = [], False
    for line in lines:
        if re.match(rf"{removed}==", line):
            skipping = True
        elif skipping and not line.startswith(" "):
            skipping = False
        if not skipping:
            kept.append(line)
    assert len(kept) < len(lines)
    copy = tmp_path / "lab.txt"
    copy.write_text("".join(kept), encoding="utf-8")
    missing = missing_from(copy, SOURCES["lab.txt"])
    assert set(missing) == {removed}, missing
