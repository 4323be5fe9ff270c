"""The ADK appendix without google-adk (every cell runs, one sentence says how to install it)
and on the learner's own tuteur.db (a copy is used; the learner's file is left as it was)."""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import time
from pathlib import Path

import nbformat
from helpers import REPO as ROOT
from nbclient import NotebookClient

from course.sessions import SqliteSessionService
from course.tuteur import demo

APPENDIX = ROOT / "solutions" / "lecons" / "06_annexe_adk.ipynb"
STUDENT_APPENDIX = ROOT / "notebooks" / "lecons" / "06_annexe_adk.ipynb"
NBSP = "\u00a0"
INSTALL = (
    "google-adk n'est pas installé : installez-le avec pip install "
    "\"course-memoire-tuteur[adk]\" (dans le dépôt du cours : .venv/bin/pip install -e '.[adk]'), "
    "puis redémarrez le noyau."
)


def run(path: Path, workdir: Path, env: dict[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True)
    client.execute(env=env, cwd=str(workdir))
    return nb


def printed(nb) -> dict[str, str]:
    return {
        c.id: "".join(o.get("text", "") for o in c.outputs).replace(NBSP, " ")
        for c in nb.cells
        if c.cell_type == "code"
    }


def errors(nb) -> list[tuple[str, str]]:
    return [
        (c.id, o.ename) for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"
    ]


def without_adk(base: dict[str, str], folder: Path) -> dict[str, str]:
    """A kernel environment where ``import google.adk`` fails, as when the extra is missing."""
    package = folder / "google" / "adk"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        'raise ImportError("google-adk absent (simulé par les tests)")\n'
    )
    env = dict(base)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), env["PYTHONPATH"]])
    return env


def test_the_missing_extra_is_simulated_faithfully(tmp_path: Path, network_free_env):
    import subprocess
    import sys

    env = without_adk(network_free_env, tmp_path / "sans_adk")
    probe = "import google.adk.sessions.sqlite_session_service"
    missing = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert missing.returncode != 0 and "ImportError" in missing.stderr
    present = subprocess.run([sys.executable, "-c", probe], env=network_free_env)
    assert present.returncode == 0  # control: the same import works in the normal kernel


def test_without_adk_every_cell_runs_and_says_how_to_install_it(tmp_path: Path, network_free_env):
    for path in (APPENDIX, STUDENT_APPENDIX):
        workdir = tmp_path / path.parent.parent.name
        workdir.mkdir()
        env = without_adk(network_free_env, workdir / "sans_adk")
        nb = run(path, workdir, env)
        assert errors(nb) == []
        out = printed(nb)
        assert INSTALL in out["l6-c02"]
        skipped = [cid for cid, text in out.items() if "Étape ADK sautée" in text]
        assert skipped == ["l6-c06", "l6-c09", "l6-c14", "l6-c16", "l6-c19"]
        assert "annexe_adk.db : la démonstration du cours" in out["l6-c04"]
        quizzes = [c for c in nb.cells if "quiz" in c.metadata.get("tags", [])]
        assert all(c.outputs for c in quizzes) and "Bilan\\xa0:" in str(nb.cells[-1].outputs)
    markdown = "\n".join(
        c.source for c in nbformat.read(APPENDIX, as_version=4).cells if c.cell_type == "markdown"
    )
    assert 'pip install "course-memoire-tuteur[adk]"' in markdown


def test_on_the_learners_own_file_it_works_on_a_copy(tmp_path: Path, network_free_env):
    """With a tuteur.db of the learner's (named by TUTEUR_DB), the appendix copies it, erases
    alice in the copy only, and leaves the learner's file byte for byte as it was."""
    own = tmp_path / "mes_donnees.db"

    async def write_demo() -> None:
        async with SqliteSessionService(own) as service:
            await demo(service)

    asyncio.run(write_demo())
    before = hashlib.sha256(own.read_bytes()).hexdigest()
    workdir = tmp_path / "dossier"
    workdir.mkdir()
    env = dict(network_free_env, TUTEUR_DB=str(own))
    started = time.perf_counter()
    nb = run(APPENDIX, workdir, env)
    assert time.perf_counter() - started < 60
    assert errors(nb) == []
    out = printed(nb)
    assert f"annexe_adk.db : une copie de votre {own}." in out["l6-c04"]
    assert re.search(r"après  : « alice » \{'fichier': 0, '-wal': 0\}", out["l6-c16"])
    assert hashlib.sha256(own.read_bytes()).hexdigest() == before
    assert not list(tmp_path.glob("mes_donnees.db-*")), "no -wal or -shm left beside it"
