"""A submission of the TP as the release defines it: the instructor's cells, the student's answer.

A student can edit every cell and its metadata, add cells, copy-paste or move the answer cell:
nothing in the submitted file is trusted to say which cell is which. ``rebuild`` takes the release
notebook (else the source) and puts into it only two texts of the submission, the ``oublier``
answer (run in the sandbox) and the written answer (Markdown), neither run in nbgrader's kernel;
cells the student added are dropped.

The answer is found without parsing student code (a hostile text can crash a parser): a line
regex finds a top-level ``def oublier`` / ``async def oublier`` / ``oublier =``, the last such
code cell winning as "Exécuter tout" would leave it; else the release's answer cell (by cell id,
then nbgrader id) is taken as it is; with neither, the answer is empty and graded 0, with a
French reason.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from course.labo.evaluate import MAX_CELL_CHARS
from course.labo.tp_notebook import ANSWER_GRADE_ID

from ..french.french_format import french_integer

__all__ = [
    "TemplateMissing",
    "defines_answer",
    "find_answer",
    "nbgrader_meta",
    "rebuild",
    "read_template",
    "template_path",
]

MAX_NOTE = 500


class TemplateMissing(RuntimeError):
    """Neither the release notebook nor the source is there: grading this notebook is refused."""


@dataclass
class Rebuilt:
    """The notebook to grade, and how its answer was found (``find_answer``'s note)."""

    nb: NotebookNode
    answer_found: bool
    note: str
    dropped: int  # cells of the submission that are not the release's and were left out


def nbgrader_meta(cell: dict) -> dict:
    """A cell's nbgrader metadata, {} when missing or not a mapping."""
    meta = cell.get("metadata", {})
    value = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return value if isinstance(value, dict) else {}


def _text(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def defines_answer(source: str, function: str = ANSWER_GRADE_ID) -> bool:
    """True when `source` defines `function` at top level (a line regex: no parser)."""
    name = re.escape(function)
    pattern = rf"^(?:async[ \t]+)?def[ \t]+{name}\b|^{name}[ \t]*(?::[^=\n]*)?=(?!=)"
    return re.search(pattern, source, re.M) is not None


def template_path(root: Path, folders: tuple[str, ...], assignment: str, notebook: str) -> Path:
    """The first of ``<root>/<folder>/<assignment>/<notebook>.ipynb`` that exists."""
    paths = [Path(root, folder, assignment, f"{notebook}.ipynb") for folder in folders]
    if found := next((path for path in paths if path.is_file()), None):
        return found
    raise TemplateMissing(
        f"Notebook de référence introuvable ({', '.join(map(str, paths))})\u00a0: la notation "
        "refuse de noter un rendu sans la version distribuée («\u00a0make notebooks\u00a0» la "
        "régénère)."
    )


def _matching(cells: list[dict], cell_id: str | None, grade_id: str | None) -> list[int]:
    """Indices of the submission's cells that claim to be the release cell (id, then grade id)."""
    by_id = [k for k, c in enumerate(cells) if cell_id and c.get("id") == cell_id]
    return by_id or [
        k for k, c in enumerate(cells) if grade_id and nbgrader_meta(c).get("grade_id") == grade_id
    ]


def find_answer(cells: list[dict], cell_id: str | None, function: str) -> tuple[str | None, str]:
    """The text of the answer (its cell's grade id is `function`; None: no cell defines it nor
    claims its cell) and a French note on where it was found (empty: in its own cell, alone)."""
    code = [k for k, c in enumerate(cells) if c.get("cell_type") == "code"]
    defining = [k for k in code if defines_answer(_text(cells[k]), function)]
    claimed = [k for k in _matching(cells, cell_id, function) if k in code]
    if not defining and not claimed:
        return None, (
            f"Aucune cellule du rendu ne définit {function} (cellule supprimée ou vidée\u00a0?)"
            "\u00a0: 0 point pour le code."
        )
    chosen = (defining or claimed)[-1]
    note = ""
    if len(defining) > 1:
        where = ", ".join(str(k + 1) for k in defining)
        note = (
            f"{len(defining)} cellules définissent {function} (cellules {where})"
            f"\u00a0: la dernière (cellule {chosen + 1}) est notée."
        )
    elif defining and chosen not in claimed:
        note = (
            f"{function} est définie hors de la cellule prévue (cellule {chosen + 1})\u00a0: "
            "c'est cette définition qui est notée."
        )
    return _text(cells[chosen]), note


def _plain(text: str) -> str:
    """`text` as it reads: NFKC form, whitespace runs as one space (no-break ones too)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _written(cells: list[dict], template: NotebookNode, cell: NotebookNode) -> str:
    """The written answer: the last cell claiming its cell whose text is not the placeholder
    (as it reads) nor blank; else the Markdown or raw cells the student added (written below the
    placeholder, the answer was dropped unread). Added: an id not the release's (JupyterLab gives
    a new cell a new id; none before nbformat 4.5) and a text that is not blank, not a release
    cell's nor the student's copy of one (a statement edited, pasted, or fixed in the release
    since the submission is never an answer)."""
    claimed = [
        _text(cells[k])
        for k in _matching(cells, cell.get("id"), nbgrader_meta(cell).get("grade_id"))
    ]
    if answers := [t for t in claimed if _plain(t) not in ("", _plain(cell.source))]:
        return answers[-1]
    ids = {c.get("id") for c in template.cells} - {None}
    ours = [isinstance(c.get("id"), str) and c["id"] in ids for c in cells]
    copies = (_text(c) for c, own in zip(cells, ours, strict=True) if own)
    known = {"", *(_plain(t) for t in [*map(_text, template.cells), *copies])}
    added = [
        _text(c)
        for c, own in zip(cells, ours, strict=True)
        if not own and c.get("cell_type") in ("markdown", "raw") and _plain(_text(c)) not in known
    ]
    return "\n\n".join(added) if added else (claimed[-1] if claimed else cell.source)


def rebuild(
    submission: NotebookNode | dict, template: NotebookNode, function: str = ANSWER_GRADE_ID
) -> Rebuilt:
    """The release `template` with the answer (grade id `function`) and the written answer of
    `submission`; the template's other solution code cells keep their text, so that no submitted
    code reaches nbgrader's kernel through them."""
    raw = submission.get("cells", []) if isinstance(submission, dict) else []
    cells = [c for c in raw if isinstance(c, dict)]
    nb = copy.deepcopy(template)
    found, note = True, ""
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        if cell.cell_type == "code" and "outputs" in cell:
            cell.outputs = []
            cell.execution_count = None
        if not meta.get("solution"):
            continue
        if cell.cell_type == "code" and meta.get("grade_id") == function:
            source, note = find_answer(cells, cell.get("id"), function)
            found = source is not None
            cell.source = source or ""
        elif cell.cell_type == "markdown":
            cell.source = _written(cells, template, cell)
    used = {(c.cell_type, c.source) for c in nb.cells}
    dropped = sum(1 for c in cells if (c.get("cell_type"), _text(c)) not in used)
    for cell in (c for c in nb.cells if len(c.source) > MAX_CELL_CHARS):
        cell.source = _cut(cell.source, "# " if cell.cell_type == "code" else "")
    return Rebuilt(nb=nb, answer_found=found, note=note[:MAX_NOTE], dropped=dropped)


def _cut(source: str, comment: str) -> str:
    """A cell past the grading's limit (graded 0, « cellule trop longue »), as the graded copy
    keeps it: its start, still past the limit, so that a page an instructor opens stays light."""
    left = french_integer(len(source) - MAX_CELL_CHARS)
    cut = f"[… {left}\u00a0caractères coupés\u00a0: cellule trop longue]"
    return f"{source[:MAX_CELL_CHARS]}\n{comment}{cut}"


def read_template(path: Path) -> NotebookNode:
    return nbformat.read(path, as_version=4)
