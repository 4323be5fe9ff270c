"""Reading the learner's own ``oublier`` from a saved TP notebook (the ADK appendix's input):
any notebook, even a broken or hostile one, gives either the cell's text or one French sentence
saying what to do, never a traceback."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
import pytest
from helpers import REPO

from course.labo import cellule_oublier
from course.labo.tp_notebook import ANSWER_GRADE_ID, OublierCellNotFound, oublier_cell_source

SOLUTION = REPO / "solutions" / "oublier" / "oublier.ipynb"
RELEASED = REPO / "notebooks" / "oublier" / "oublier.ipynb"


def test_the_answer_cell_of_a_written_tp_is_read():
    source = oublier_cell_source(SOLUTION)
    assert source.startswith("async def oublier(service, user_id: str) -> None:")
    assert source == next(c.source for c in nbformat.read(SOLUTION, 4).cells if c.id == "oublier")


def test_the_released_stub_is_named_not_written():
    with pytest.raises(OublierCellNotFound, match="pas encore écrite"):
        oublier_cell_source(RELEASED)


def test_a_missing_tp_says_where_it_should_be(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cellule_oublier() is None
    out = capsys.readouterr().out
    assert out.startswith("✘ Votre TP est introuvable\u00a0: ../oublier/oublier.ipynb")


def cell(source, **metadata) -> dict:
    return {"cell_type": "code", "source": source, "metadata": metadata, "outputs": []}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{pas du json", "n'est pas un notebook lisible"),
        (json.dumps({"cells": 3}), "n'est pas un notebook lisible"),
        (json.dumps({"cells": ["texte"]}), "n'est pas un notebook lisible"),
        (json.dumps({"cells": [cell("x = 1", nbgrader=[1])]}), "n'est pas un notebook lisible"),
        (json.dumps({"cells": [cell("async def oublier(:\n    pass")]}), "Aucune cellule"),
        (json.dumps({"cells": [cell("verifier(oublier)")]}), "Aucune cellule"),
        (
            json.dumps(
                {"cells": [cell("async def oublier(s, u):\n    raise NotImplementedError")]}
            ),
            "pas encore écrite",
        ),
    ],
)
def test_a_broken_notebook_gives_one_french_sentence(tmp_path: Path, content: str, expected: str):
    path = tmp_path / "oublier.ipynb"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(OublierCellNotFound, match=expected):
        oublier_cell_source(path)


def test_the_answer_cell_wins_over_another_definition(tmp_path: Path):
    """A later cell that redefines oublier is not the answer: the nbgrader answer cell is."""
    answer = "async def oublier(service, user_id):\n    return None\n"
    other = "async def oublier(service, user_id):\n    raise NotImplementedError()\n"
    nb = {"cells": [cell(other), cell(answer, nbgrader={"grade_id": ANSWER_GRADE_ID})]}
    path = tmp_path / "oublier.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    assert oublier_cell_source(path) == answer
    nb["cells"][1]["metadata"] = {}  # without its id, the first definition is taken (control)
    path.write_text(json.dumps(nb), encoding="utf-8")
    with pytest.raises(OublierCellNotFound, match="pas encore écrite"):
        oublier_cell_source(path)


SUBMISSIONS = REPO / "grader" / "submissions"


@pytest.mark.parametrize("depth", [3000, 20000])
def test_a_cell_too_deep_for_the_parser_gives_one_french_sentence(tmp_path: Path, depth: int):
    """The answer cell holds an expression nested `depth` times (the attack's
    grader/submissions/expression_profonde.py, and deeper): Python's parser fails with a
    RecursionError or a MemoryError, not a SyntaxError; it was a traceback. A Python whose parser
    reads it (3.13, 3000 deep) gives the cell, which the learner's function then runs."""
    attack = (SUBMISSIONS / "expression_profonde.py").read_text(encoding="utf-8")
    source = attack.replace("-" * 3000, "-" * depth)
    assert "-" * depth in source
    nb = {"cells": [cell(source, nbgrader={"grade_id": ANSWER_GRADE_ID})]}
    path = tmp_path / "oublier.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    try:
        ast.parse(source)
    except (RecursionError, MemoryError):
        with pytest.raises(OublierCellNotFound, match="trop imbriquée pour que Python la lise"):
            oublier_cell_source(path)
    else:
        assert oublier_cell_source(path) == source


def test_a_notebook_too_deep_for_the_json_decoder_gives_one_french_sentence(tmp_path: Path):
    path = tmp_path / "oublier.ipynb"
    path.write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(OublierCellNotFound, match="n'est pas un notebook lisible"):
        oublier_cell_source(path)
