"""`make paquet-eleve` (grading.student_package, issue 32 point 10): what students get holds the
generated lessons and TP, the `course` package and `make lab`, never solutions/, grader/ or a
hidden test; its scan finds no solution text, hidden-test line or hidden input in the built zip,
and the same scan finds them in the repository (positive control) and in a package where one is
slipped in (the build then refuses and keeps no zip); a learner installs it with `make setup`
offline, from the lab's locked set."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading.student_package import (
    ARCHIVE_NAME,
    STUDENT_MAKEFILE,
    TOP,
    build,
    read_archive,
    scan,
    secrets,
)
from helpers import REPO

OUBLIER_SOLUTION = 'conn.execute("PRAGMA foreign_keys = ON")'
HIDDEN_EMAIL = "maelle.girard@exemple.org"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    target, findings = build(tmp_path_factory.mktemp("paquet"), chosen=["oublier"])
    assert findings == [] and target is not None, findings
    return target


def test_the_package_holds_what_make_lab_needs_and_nothing_of_the_instructor(built):
    assert built.name == ARCHIVE_NAME
    with zipfile.ZipFile(built) as zf:
        names = zf.namelist()
    assert all(name.startswith(f"{TOP}/") for name in names), names
    files = read_archive(built)
    for needed in (
        "Makefile",
        "README.md",
        "pyproject.toml",
        "requirements/lab.txt",
        "requirements/uv.txt",
        "course/__init__.py",
        "course/save_hook.py",
        "course/labo/criteria.py",
        "course/jupyter-config/eleve/labconfig/page_config.json",
        "notebooks/lecons/00_commencer_ici.ipynb",
        "notebooks/oublier/oublier.ipynb",
    ):
        assert needed in files, needed
    tops = {name.split("/")[0] for name in files}
    assert tops == {
        "Makefile",
        "README.md",
        "pyproject.toml",
        "requirements",
        "course",
        "notebooks",
    }
    assert not [n for n in files if "hidden" in Path(n).name or "__pycache__" in n]
    assert not [n for n in files if n.startswith("notebooks/oublier_partage/")]  # not given
    # the same bytes as the generated student version
    for name in ("notebooks/oublier/oublier.ipynb", "course/labo/criteria.py"):
        assert files[name] == (REPO / name).read_bytes(), name


def test_the_built_package_holds_no_solution_hidden_test_or_hidden_input(built):
    found = secrets(chosen=["oublier"])
    assert scan(read_archive(built), found) == []
    text = b"\n".join(read_archive(built).values()).decode("utf-8", "replace")
    assert "### BEGIN SOLUTION" not in text and "### BEGIN HIDDEN TESTS" not in text


def test_the_default_package_with_both_tps_leaks_nothing(tmp_path):
    """`make paquet-eleve` with no TP= gives both: neither the lessons (lesson 7 comes before
    oublier_partage) nor the hint ladders (course/hints.py) may hold a line of either answer."""
    target, findings = build(tmp_path)
    assert findings == [] and target is not None, findings
    assert "notebooks/oublier_partage/oublier_partage.ipynb" in read_archive(target)


def test_positive_control_the_scan_finds_them_in_the_repository():
    found = secrets()
    origins = {s.origin for s in found}
    assert any("solution «\u00a0oublier\u00a0»" in o for o in origins), origins
    assert any("test caché «\u00a0test_fichier\u00a0»" in o for o in origins), origins
    texts = {s.text for s in found}
    assert OUBLIER_SOLUTION in texts and HIDDEN_EMAIL in texts and "margaux.kerbrat" in texts
    repository = {
        rel: (REPO / rel).read_bytes()
        for rel in (
            "solutions/oublier/oublier.ipynb",
            "grader/grading/nbgrader_ext/hidden.py",
            "grader/grading/nbgrader_ext/hidden_partage.py",
        )
    }
    findings = scan(repository, found)
    for expected in (
        f"solutions/oublier/oublier.ipynb\u00a0: solutions/oublier/oublier.ipynb, solution "
        f"«\u00a0oublier\u00a0»\u00a0: «\u00a0{OUBLIER_SOLUTION}",
        "solutions/oublier/oublier.ipynb\u00a0: solutions/oublier/oublier.ipynb, test caché "
        '«\u00a0test_fichier\u00a0»\u00a0: «\u00a0noter(oublier, "fichier")',
        "grader/grading/nbgrader_ext/hidden.py\u00a0: "
        f"grader/grading/nbgrader_ext/hidden.py, entrée cachée\u00a0: "
        f"«\u00a0{HIDDEN_EMAIL}",
        "grader/grading/nbgrader_ext/hidden_partage.py\u00a0: "
        "grader/grading/nbgrader_ext/hidden_partage.py, entrée "
        "cachée\u00a0: «\u00a0margaux.kerbrat",
    ):
        assert any(f.startswith(expected) for f in findings), (expected, findings)


@pytest.mark.parametrize(
    "notebook",
    [
        b'["SECRET-42"]',
        b'{"cells": "SECRET-42"}',
        b'{"cells": ["SECRET-42"]}',
        b'{"cells": [{"source": "x", "outputs": "SECRET-42"}]}',
        b'{"metadata": {"x": "SECRET-42"}}',
        b'{"cells": [{"source": "SECRET-42"}]}',
    ],
    ids=[
        "liste",
        "cellules-texte",
        "cellule-texte",
        "sorties-texte",
        "sans-cellules",
        "carnet-sain",
    ],
)
def test_a_notebook_of_any_shape_is_scanned_never_a_traceback(notebook):
    """A notebook that is JSON but not a notebook's shape stopped ``make paquet-eleve`` on an
    AttributeError (found by the shrink-collect helper): it is scanned as text, its secret found."""
    from grading.student_package import Secret

    found = [Secret("SECRET-42", "test")]
    assert scan({"lecons/x.ipynb": notebook}, found) == [
        "lecons/x.ipynb\u00a0: test\u00a0: «\u00a0SECRET-42\u00a0»"
    ]


def _copy_repo(dest: Path) -> Path:
    for part in ("notebooks", "course", "solutions"):
        shutil.copytree(REPO / part, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
    for part in ("pyproject.toml", "requirements/lab.txt", "requirements/uv.txt"):
        (dest / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / part, dest / part)
    return dest


def test_a_slipped_in_answer_refuses_the_package(tmp_path):
    repo = _copy_repo(tmp_path / "depot")
    # the instructor's answer pasted into the student's TP, a hidden e-mail into the package
    path = repo / "notebooks" / "oublier" / "oublier.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(f"Indice\u00a0: `{OUBLIER_SOLUTION}`"))
    nbformat.write(nb, path)
    with (repo / "course" / "app.py").open("a", encoding="utf-8") as fh:
        fh.write(f"\n# {HIDDEN_EMAIL}\n")
    out = tmp_path / "paquet"
    target, findings = build(out, repo=repo, chosen=["oublier"])
    assert target is None
    assert any(f.startswith("notebooks/oublier/oublier.ipynb\u00a0:") for f in findings), findings
    assert any(f.startswith("course/app.py\u00a0:") and HIDDEN_EMAIL in f for f in findings)
    assert list(out.iterdir()) == []  # no zip kept, not even a partial one
    # the untouched copy builds (the refusal came from the slipped-in text alone)
    assert build(
        tmp_path / "propre", repo=_copy_repo(tmp_path / "propre-depot"), chosen=["oublier"]
    )[0]


def _recipe(makefile: str, target: str) -> list[str]:
    """The recipe lines of `target` (tab-indented, continuation lines joined)."""
    text = makefile.replace("\\\n", " ")
    block = re.search(rf"^{re.escape(target)}:.*\n((?:\t.*\n)+)", text, flags=re.M)
    assert block, target
    return [line.strip() for line in block.group(1).splitlines()]


def test_the_student_makefile_installs_as_the_course_makefile_does():
    ours = STUDENT_MAKEFILE.read_text(encoding="utf-8")
    theirs = (REPO / "Makefile").read_text(encoding="utf-8")
    for target in ("$(VENV)/.stamp-venv", "$(VENV)/.stamp-runtime", "lab", "recommencer"):
        student = _recipe(ours, target)
        course = [line for line in _recipe(theirs, target) if not line.startswith("@#")]
        assert student == course, (target, student, course)
    define = re.search(r"^define install\n(.*?)^endef", theirs, flags=re.M | re.S)
    assert define and define.group(1) in ours


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_learner_installs_the_package_offline(built, tmp_path):
    """In a folder whose name holds a space, an accent and an apostrophe, with uv there too
    (as the uv `make setup` fetches into .venv when none is on PATH): every path is quoted."""
    unpacked = tmp_path / "mon cours d'Éloïse"
    with zipfile.ZipFile(built) as zf:
        zf.extractall(unpacked)
    folder = unpacked / TOP
    uv = unpacked / "uv"
    uv.symlink_to(shutil.which("uv") or REPO / ".venv" / "bin" / "uv")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "UV")}
    env["UV_OFFLINE"] = "1"  # the lab's locked set, from the machine's package cache only
    proc = subprocess.run(
        ["make", "--no-print-directory", "setup", f"UV={uv}"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "uv pip install --no-deps --require-hashes -r requirements/lab.txt" in proc.stdout
    python = folder / ".venv" / "bin" / "python"
    check = subprocess.run(
        [str(python), "-c", "import course, nbgrader, jupyterlab; print(course.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.strip() == str(folder / "course" / "__init__.py")
    lab = subprocess.run(
        [str(folder / ".venv" / "bin" / "jupyter"), "lab", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert lab.returncode == 0 and lab.stdout.strip().startswith("4."), lab.stdout + lab.stderr
    # the README's route without make (helper attack: it showed the formgrader): its
    # JUPYTER_CONFIG_PATH turns nbgrader's instructor tools off, as make lab does
    readme = (folder / "README.md").read_text(encoding="utf-8")
    (command,) = [line for line in readme.splitlines() if " .venv/bin/jupyter lab " in line]
    assignment = command.partition(" ")[0]
    assert assignment == 'JUPYTER_CONFIG_PATH="$PWD/course/jupyter-config/eleve"', command
    view = {**env, "JUPYTER_CONFIG_PATH": str(folder / "course" / "jupyter-config" / "eleve")}
    # what the server reads at start (jupyter_server's ExtensionConfigManager, over the same
    # config path): the formgrader and the course list off, the learner's list on
    read = (
        "from jupyter_core.paths import jupyter_config_path\n"
        "from jupyter_server.extension.config import ExtensionConfigManager\n"
        "found = ExtensionConfigManager(read_config_path=jupyter_config_path())\n"
        "print(sorted(k for k, on in found.get_jpserver_extensions().items() if on))\n"
    )
    listed = subprocess.run(
        [str(python), "-c", read], cwd=folder, env=view, capture_output=True, text=True, timeout=120
    )
    assert listed.returncode == 0, listed.stderr
    assert "nbgrader.server_extensions.assignment_list" in listed.stdout, listed.stdout
    assert "formgrader" not in listed.stdout and "course_list" not in listed.stdout
    # what the package lacks, the venv lacks: no grading tools, no hidden inputs importable
    missing = subprocess.run(
        [str(python), "-c", "import grading.nbgrader_ext.hidden"],
        cwd=folder,
        capture_output=True,
        timeout=60,
    )
    assert missing.returncode != 0
