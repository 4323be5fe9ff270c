"""Reads a learner's own ``oublier`` cell from their saved TP notebook.

The ADK appendix checks the learner's function on a base written by google-adk 2.10 instead of
showing an erasure of its own: the TP's answer is the learner's to write. The notebook is the
learner's file (any content): every problem is a French sentence saying what to do, never a
traceback, and nothing of it runs here.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

__all__ = [
    "ANSWER_GRADE_ID",
    "TP_NOTEBOOK",
    "OublierCellNotFound",
    "cellule_oublier",
    "oublier_cell_source",
]

# Where the TP sits beside the lessons (notebooks/lecons and notebooks/oublier, or the folders
# nbgrader's fetch makes on a hub)
TP_NOTEBOOK = Path("..") / "oublier" / "oublier.ipynb"
# The nbgrader id of the TP's answer cell (its function's name): the one definition, which the
# grader (grading.nbgrader_ext.release, grading.samples, grading.nbgrader_ext.hooks) and the tests
# import.
ANSWER_GRADE_ID = "oublier"


class OublierCellNotFound(Exception):
    """No usable ``oublier`` in the notebook; the message says why, in French."""


class _TooDeep(Exception):
    """A cell Python's parser cannot read: nested too deeply (RecursionError, MemoryError)."""


def _defines_oublier(source: str) -> ast.AsyncFunctionDef | ast.FunctionDef | None:
    """The cell's top-level ``oublier``; None if it has none or does not parse; raises _TooDeep
    for a cell that breaks the parser itself (an expression nested thousands of times)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):  # ValueError: a null byte, on older Pythons
        return None
    except (RecursionError, MemoryError):
        raise _TooDeep from None
    for node in tree.body:
        if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef) and node.name == "oublier":
            return node
    return None


def _is_stub(function: ast.AsyncFunctionDef | ast.FunctionDef) -> bool:
    """The generated stub: the body raises NotImplementedError at its top level."""
    for statement in function.body:
        if isinstance(statement, ast.Raise) and statement.exc is not None:
            exc = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
            if isinstance(exc, ast.Name) and exc.id == "NotImplementedError":
                return True
    return False


def oublier_cell_source(notebook: str | os.PathLike[str] = TP_NOTEBOOK) -> str:
    """The source of the TP's ``oublier`` cell, as last saved; raises OublierCellNotFound."""
    path = Path(notebook)
    if not path.is_file():
        raise OublierCellNotFound(
            f"Votre TP est introuvable\u00a0: {path} n'existe pas (depuis le dossier "
            f"{Path.cwd().name}/). Le TP noté est oublier/oublier.ipynb, à côté du dossier des "
            "leçons\u00a0; sur le hub, récupérez-le d'abord (onglet Assignments)."
        )
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = []
        for cell in cells:
            if cell.get("cell_type") != "code":
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else str(source)
            grade_id = (cell.get("metadata") or {}).get("nbgrader", {}).get("grade_id")
            sources.append((grade_id == ANSWER_GRADE_ID, source))
    # RecursionError: JSON nested too deeply for Python's decoder
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise OublierCellNotFound(
            f"{path} n'est pas un notebook lisible ({type(exc).__name__})\u00a0: ouvrez-le dans "
            "JupyterLab et enregistrez-le."
        ) from None
    # the answer cell first (its nbgrader id), else any code cell that defines oublier
    too_deep = False
    for _answer, source in sorted(sources, key=lambda item: not item[0]):
        try:
            function = _defines_oublier(source)
        except _TooDeep:
            too_deep = too_deep or "oublier" in source
            continue
        if function is None:
            continue
        if _is_stub(function):
            raise OublierCellNotFound(
                f"Votre fonction oublier n'est pas encore écrite dans {path} (elle lève encore "
                "NotImplementedError)\u00a0: écrivez-la dans le TP, enregistrez le notebook, "
                "puis relancez cette cellule."
            )
        return source
    if too_deep:
        raise OublierCellNotFound(
            f"Votre cellule oublier de {path} est trop imbriquée pour que Python la lise (une "
            "expression imbriquée des milliers de fois)\u00a0: simplifiez-la dans le TP, "
            "enregistrez, puis relancez cette cellule."
        )
    raise OublierCellNotFound(
        f"Aucune cellule de {path} ne définit oublier (avec async def oublier(service, "
        "user_id)), ou elle contient une erreur de syntaxe\u00a0: corrigez-la dans le TP, "
        "enregistrez, puis relancez cette cellule."
    )


def cellule_oublier(notebook: str | os.PathLike[str] = TP_NOTEBOOK) -> str | None:
    """Le texte de votre cellule `oublier`, lu dans le TP enregistré (par défaut
    ../oublier/oublier.ipynb)\u00a0; None, avec la raison affichée, s'il n'y est pas encore."""
    try:
        return oublier_cell_source(notebook)
    except OublierCellNotFound as reason:
        print(f"✘ {reason}")
        return None
