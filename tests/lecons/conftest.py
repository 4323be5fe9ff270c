"""Lesson test fixtures: an ADK-format database, a network-free kernel, executed lessons."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "lecons"
STUDENT = ROOT / "notebooks" / "lecons"
SANS_RESEAU = Path(__file__).resolve().parent / "sans_reseau"

ADK_SCHEMA = """
CREATE TABLE app_states (app_name TEXT PRIMARY KEY, state TEXT NOT NULL,
    update_time REAL NOT NULL);
CREATE TABLE user_states (app_name TEXT NOT NULL, user_id TEXT NOT NULL, state TEXT NOT NULL,
    update_time REAL NOT NULL, PRIMARY KEY (app_name, user_id));
CREATE TABLE sessions (app_name TEXT NOT NULL, user_id TEXT NOT NULL, id TEXT NOT NULL,
    state TEXT NOT NULL, create_time REAL NOT NULL, update_time REAL NOT NULL,
    PRIMARY KEY (app_name, user_id, id));
CREATE TABLE events (id TEXT NOT NULL, app_name TEXT NOT NULL, user_id TEXT NOT NULL,
    session_id TEXT NOT NULL, invocation_id TEXT NOT NULL, timestamp REAL NOT NULL,
    event_data TEXT NOT NULL, PRIMARY KEY (app_name, user_id, session_id, id),
    FOREIGN KEY (app_name, user_id, session_id) REFERENCES sessions(app_name, user_id, id)
    ON DELETE CASCADE);
"""


def _event(author: str, parts: list[dict], delta: dict | None = None) -> dict:
    role = "user" if author == "user" else "model"
    data: dict = {"author": author, "content": {"role": role, "parts": parts}}
    if delta:
        data["actions"] = {"state_delta": delta}
    return data


ALICE_EVENTS = [
    _event("user", [{"text": "Bonjour ; je veux réviser #python <b>"}]),
    _event(
        "tuteur",
        [{"function_call": {"id": "c1", "name": "enregistrer_reponse", "args": {"juste": True}}}],
    ),
    _event(
        "tuteur",
        [
            {
                "function_response": {
                    "id": "c1",
                    "name": "enregistrer_reponse",
                    "response": {"niveau": 2},
                }
            }
        ],
        {"user:progression": {"python": {"niveau": 2}}},
    ),
    _event("tuteur", [{"text": "Bravo ! Vous passez au niveau 2."}]),
]


@pytest.fixture
def adk_format_db(tmp_path: Path) -> Path:
    """A real SQLite file in google-adk 2.10's format: alice (1 session, 4 events), bob (empty)."""
    path = tmp_path / "tuteur.db"
    conn = sqlite3.connect(path)
    conn.executescript(ADK_SCHEMA)
    conn.execute(
        "INSERT INTO user_states VALUES ('tuteur', 'alice', ?, 1.0)",
        (json.dumps({"progression": {"python": {"niveau": 2}}}),),
    )
    conn.execute("INSERT INTO sessions VALUES ('tuteur', 'alice', 's-alice', '{}', 1.0, 5.0)")
    conn.execute("INSERT INTO sessions VALUES ('tuteur', 'bob', 's-bob', '{}', 2.0, 2.0)")
    for i, ev in enumerate(ALICE_EVENTS, start=1):
        conn.execute(
            "INSERT INTO events VALUES (?, 'tuteur', 'alice', 's-alice', 'inv', ?, ?)",
            (f"e{i}", float(i), json.dumps(ev, ensure_ascii=False)),
        )
    conn.commit()
    conn.close()
    return path


def kernel_env() -> dict[str, str]:
    """Environment for a kernel with sockets blocked and the checkout's `course` importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SANS_RESEAU), str(ROOT), env.get("PYTHONPATH")) if p
    )
    env.pop("TUTEUR_DB", None)
    return env


def execute_notebook(
    path: Path, workdir: Path, *, allow_errors: bool = False, timeout: int = 60
) -> tuple[nbformat.NotebookNode, float]:
    """Run a notebook top to bottom in a fresh network-free kernel whose cwd is ``workdir``."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": workdir}},
    )
    start = time.perf_counter()
    try:
        client.execute(env=kernel_env(), cwd=str(workdir))
    except CellExecutionError as exc:
        raise AssertionError(f"{path.name} : {exc}") from None
    return nb, time.perf_counter() - start


@pytest.fixture
def network_free_env() -> dict[str, str]:
    """Environment whose Python processes cannot open a network connection."""
    return kernel_env()


@pytest.fixture
def run_notebook():
    """``run_notebook(path, workdir, allow_errors=False)`` -> (executed notebook, seconds)."""
    return execute_notebook


@pytest.fixture(scope="session")
def executed_lessons(tmp_path_factory) -> dict[str, tuple[nbformat.NotebookNode, float, Path]]:
    """Every solution lesson executed once (shared by the tests that read their outputs)."""

    def repo_files() -> set[Path]:
        return {p for tree in (SOLUTIONS, STUDENT) for p in tree.rglob("*") if p.is_file()}

    before = repo_files()
    results = {}
    for path in sorted(SOLUTIONS.glob("*.ipynb")):
        workdir = tmp_path_factory.mktemp(path.stem)
        nb, seconds = execute_notebook(path, workdir)
        results[path.name] = (nb, seconds, workdir)
    created = repo_files() - before
    assert not created, f"running the lessons wrote into the repository: {sorted(created)}"
    return results
