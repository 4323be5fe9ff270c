"""A lesson's cells run in the order a learner clicks them (again, out of order), in one kernel:
the out-of-order tests of every lesson build their notebook here."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nbformat

__all__ = ["cells_in_order"]


def cells_in_order(
    source: Path, order: list[str], tmp_path: Path, run_notebook: Callable, **run
) -> tuple[nbformat.NotebookNode, list[list]]:
    """The cells of `source` whose ids are `order`, in that order, run by `run_notebook` (the
    lesson tests' fixture, with `run` passed on) in `tmp_path`; the executed notebook and each
    cell's error outputs."""
    by_id = {c.id: c.source for c in nbformat.read(source, as_version=4).cells}
    path = tmp_path / f"{source.stem}_dans_l_ordre_clique.ipynb"
    cells = [nbformat.v4.new_code_cell(by_id[i]) for i in order]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    nb, _seconds = run_notebook(path, tmp_path, **run)
    return nb, [[o for o in c.outputs if o.output_type == "error"] for c in nb.cells]
