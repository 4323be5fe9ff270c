"""Grades one ``oublier`` source: runner process with a time limit, then checker process.

Nothing here runs student code in the calling process, so a notebook kernel that a submission
has tampered with can at worst fool its own copy of this module, never the grade written by
nbgrader (see ``course.labo.nbgrader_hooks``, which calls this from nbgrader's process).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .criteria import TESTS, Verdict, verdicts
from .fixture import fixture_bytes

__all__ = ["DEFAULT_TIMEOUT", "Evaluation", "evaluate_source", "extract_source"]

DEFAULT_TIMEOUT = float(os.environ.get("COURSE_LABO_TIMEOUT", "10"))

# Captured at import: later monkeypatching of these modules does not reach the grader.
_Popen = subprocess.Popen
_killpg = getattr(os, "killpg", None)  # POSIX; elsewhere only the runner itself is killed
_executable = sys.executable

_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Evaluation:
    verdicts: dict[str, Verdict]
    load_error: str | None
    seconds: float
    timed_out: bool
    first_error: str | None = None  # exception type of the first call, if it raised

    @property
    def score(self) -> int:
        return sum(TESTS[t].points for t, v in self.verdicts.items() if v.ok)

    @property
    def not_written(self) -> bool:
        """The untouched stub: the first call raised NotImplementedError."""
        return self.first_error == "NotImplementedError"


def _plain_python(cell_source: str) -> str:
    """The cell as plain Python (IPython magics become calls, then dropped below)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # pragma: no cover - IPython is a dependency of the course
        return cell_source
    try:
        return TransformerManager().transform_cell(cell_source)
    except Exception:  # noqa: BLE001 - a broken cell is reported by the runner
        return cell_source


def extract_source(cell_source: str) -> str:
    """Definitions and imports of the student's cell, without its top-level actions.

    Calls such as ``await oublier(...)`` on the student's own database, or monkeypatching at top
    level, are left out: only what ``oublier`` needs to exist is kept. A cell that does not parse
    is returned unchanged, so the runner reports its SyntaxError.
    """
    source = _plain_python(cell_source)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    kept = []
    for node in tree.body:
        if isinstance(node, _KEPT):
            kept.append(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if all(isinstance(t, ast.Name) for t in targets):
                kept.append(node)
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def _load_error(entry: dict) -> str:
    kind, message = entry.get("type"), entry.get("message", "")
    if kind == "Absente":
        return "aucune fonction oublier n'est définie dans la cellule prévue."
    if kind == "SyntaxError":
        return f"la cellule de oublier ne se lit pas (SyntaxError) : {message}"
    return f"la cellule de oublier lève {kind} avant même d'appeler oublier : {message}"


def _stop_group(proc: subprocess.Popen) -> None:
    """Kill the runner and everything it started (its own process group)."""
    try:
        if _killpg is not None:
            _killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - Windows
            proc.kill()
    except (ProcessLookupError, PermissionError):
        pass


def evaluate_source(source: str, timeout: float | None = None) -> Evaluation:
    """Run `source` (a cell defining ``oublier``) against copies of the fixture and judge it."""
    timeout = DEFAULT_TIMEOUT if timeout is None else timeout
    start = time.monotonic()
    # In memory, built by this process: a submission that rewrites files cannot change it.
    fixture, digest = fixture_bytes()
    work = Path(tempfile.mkdtemp(prefix="labo-oublier-"))
    try:
        for db in ("a.db", "c.db", "d.db"):
            (work / db).write_bytes(fixture)
        (work / "soumission.py").write_text(extract_source(source), encoding="utf-8")
        timed_out = False
        with open(work / "sortie.txt", "wb") as out:
            proc = _Popen(
                [_executable, "-I", "-m", "course.labo.runner", str(work)],
                cwd=work,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _stop_group(proc)
                proc.wait()
        journal: dict[str, dict] = {}
        load_error = None
        journal_path = work / "journal.jsonl"
        lines = []
        if journal_path.exists():
            lines = journal_path.read_text(encoding="utf-8").splitlines()
        for line in lines:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if "chargement" in entry:
                load_error = _load_error(entry["chargement"])
            elif "appel" in entry:
                journal[entry["appel"]] = entry
        if not lines and not timed_out and proc.returncode != 0:
            tail = (work / "sortie.txt").read_text(errors="replace")[-300:]
            load_error = f"le processus qui exécute oublier s'est arrêté : {tail}"
        # The reference goes to the checker through its stdin, never through a file.
        checker = _Popen(
            [_executable, "-I", "-m", "course.labo.checker", str(work), digest],
            cwd=work,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            stdout, stderr = checker.communicate(input=fixture, timeout=120)
        finally:
            checker.kill()
            checker.wait()
        if checker.returncode != 0:
            raise RuntimeError(
                "le contrôle de la base a échoué :\n" + stderr.decode(errors="replace")[-2000:]
            )
        facts = json.loads(stdout)
        return Evaluation(
            verdicts=verdicts(load_error, journal, facts, timeout),
            load_error=load_error,
            seconds=time.monotonic() - start,
            timed_out=timed_out,
            first_error=((journal.get("A1") or {}).get("erreur") or {}).get("type"),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
