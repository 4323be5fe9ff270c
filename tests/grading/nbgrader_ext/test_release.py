"""Rebuilding a submission on the release (grading.nbgrader_ext.release), without grading it: which
text is the answer for each notebook-level attack, what is dropped, and that a notebook of the TP's
assignment without a release never falls back to the student's cells."""

from __future__ import annotations

import nbformat
import pytest
from grading.nbgrader_ext.hooks import RebuildFromRelease
from grading.nbgrader_ext.release import (
    TemplateMissing,
    defines_answer,
    nbgrader_meta,
    read_template,
    rebuild,
)
from grading.samples import build_carnet, build_submission, carnets, samples
from helpers import REPO

RELEASE = REPO / "notebooks" / "oublier" / "oublier.ipynb"
# carnet -> the sample whose text must end up in the answer cell (None: no answer)
ANSWER = {
    "carnet_cellule_dupliquee": "complete_vacuum",
    "carnet_fausse_cellule_notee": "ebauche",
    "carnet_id_change": "graine",
    "carnet_lecture_carnet_de_notes": "graine",
    "carnet_reponse_deplacee": "complete_vacuum",
    "carnet_sans_metadonnees": "triche",
    "carnet_sans_metadonnees_complete": "complete_vacuum",
    "carnet_sans_reponse": None,
    "carnet_variable_env": None,  # its own empty function: checked below
}


def test_every_carnet_is_listed_here():
    assert set(carnets(REPO)) == set(ANSWER)


@pytest.mark.parametrize("name", sorted(ANSWER))
def test_each_carnet_rebuilds_to_the_release_with_its_answer(name, tmp_path):
    canary = tmp_path / "canaris" / name
    nb = build_carnet(RELEASE, REPO, name, canary)
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)  # as nbgrader reads the file
    template = read_template(RELEASE)
    rebuilt = rebuild(nb, template)
    assert [c.id for c in rebuilt.nb.cells] == [c.id for c in template.cells]
    assert rebuilt.nb.metadata == template.metadata
    for cell, ref in zip(rebuilt.nb.cells, template.cells, strict=True):
        assert cell.metadata == ref.metadata
        if ref.id != "oublier":
            assert cell.source == ref.source, ref.id
    answer = next(c for c in rebuilt.nb.cells if c.id == "oublier").source
    assert str(canary) not in "".join(c.source for c in rebuilt.nb.cells if c.id != "oublier")
    sample = ANSWER[name]
    if sample:
        assert samples(REPO)[sample].rstrip("\n") in answer
    elif name == "carnet_sans_reponse":
        assert answer == "" and not rebuilt.answer_found
        assert rebuilt.note.startswith("Aucune cellule du rendu ne définit oublier")
    else:
        assert answer.endswith("    pass")


def test_a_written_answer_below_the_placeholder_is_the_one_graded():
    """Third attack: the placeholder left as released and the procedure written in a Markdown
    cell added below it; the graded copy showed only « VOTRE RÉPONSE ICI »."""
    template = read_template(RELEASE)
    nb = nbformat.reads(nbformat.writes(template), as_version=4)
    at = next(k for k, c in enumerate(nb.cells) if c.id == "documentation")
    procedure = "1. Chercher ses sessions.\n2. Les supprimer."
    nb.cells.insert(at + 1, nbformat.v4.new_markdown_cell(procedure))
    written = next(c for c in rebuild(nb, template).nb.cells if c.id == "documentation")
    assert written.source == procedure
    nb.cells[at].source = "Ma procédure, ici."  # written in its cell: that one, as before
    written = next(c for c in rebuild(nb, template).nb.cells if c.id == "documentation")
    assert written.source == "Ma procédure, ici."


def test_defines_answer_reads_lines_not_code():
    assert defines_answer("import os\n\nasync def oublier(s, u):\n    pass")
    assert defines_answer("def oublier(s, u): ...")
    assert defines_answer("oublier = autre")
    assert not defines_answer("class A:\n    def oublier(self): ...")
    assert not defines_answer("oublier == 3\nprint(oublier)")
    assert not defines_answer("(" * 5000 + ")" * 5000)  # never parsed


def test_a_notebook_of_the_lab_without_a_release_is_refused(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import os")])
    resources = {"nbgrader": {"assignment": "oublier", "notebook": "autre", "student": "x"}}
    config = {"CourseDirectory": {"root": str(tmp_path)}}
    from traitlets.config import Config

    with pytest.raises(TemplateMissing, match="Notebook de référence introuvable"):
        RebuildFromRelease(config=Config(config)).preprocess(nb, resources)


def test_a_cell_past_the_grading_s_limit_is_cut_in_the_graded_copy_and_still_refused():
    """Attack round 10: a 6.4 MB answer cell, kept whole, made make feedback take 100 s and
    formgrader's page 120 s. Its start is kept, still past the limit: graded 0 all the same."""
    from course.labo.evaluate import MAX_CELL_CHARS, _analyse

    answer = samples(REPO)["complete_vacuum"] + "\nDONNEES = [\n" + "    1,\n" * 400_000 + "]\n"
    nb = nbformat.reads(nbformat.writes(build_submission(RELEASE, answer)), as_version=4)
    cell = next(c for c in rebuild(nb, read_template(RELEASE)).nb.cells if c.id == "oublier")
    assert MAX_CELL_CHARS < len(cell.source) < MAX_CELL_CHARS + 200
    assert cell.source.startswith(answer[:MAX_CELL_CHARS])
    whole = next(c for c in nb.cells if c.id == "oublier").source
    left = f"{len(whole) - MAX_CELL_CHARS:,}".replace(",", "\u00a0")
    assert cell.source.endswith(f"# [… {left}\u00a0caractères coupés\u00a0: cellule trop longue]")
    assert _analyse(cell.source)[1].error.message == "cellule trop longue"


PROCEDURE = "1. Chercher ses sessions.\n2. Les supprimer."


def _submission(template, placeholder=None, added=None):
    """The release as a student hands it back: the placeholder replaced by `placeholder` (None:
    left as released) and the cell `added` (None: none) inserted below it."""
    nb = nbformat.reads(nbformat.writes(template), as_version=4)
    at = next(k for k, c in enumerate(nb.cells) if c.id == "documentation")
    if placeholder is not None:
        nb.cells[at].source = placeholder
    if added is not None:
        nb.cells.insert(at + 1, added)
    return nbformat.reads(nbformat.writes(nb), as_version=4)  # as nbgrader reads the file


def _graded_written(nb, template) -> str:
    return next(c for c in rebuild(nb, template).nb.cells if c.id == "documentation").source


def _edited(template, cell_id: str):
    """`template` with one statement cell changed by a double space (a typo fixed, say)."""
    nb = nbformat.reads(nbformat.writes(template), as_version=4)
    cell = next(c for c in nb.cells if c.id == cell_id)
    cell.source = cell.source.replace(" ", "  ", 1)
    return nb


def test_an_emptied_placeholder_is_left_for_the_answer_below():
    """Attack: the placeholder emptied, the answer written below it; '' was graded."""
    template = read_template(RELEASE)
    for empty in ("", " \n\t"):
        nb = _submission(template, empty, nbformat.v4.new_markdown_cell(PROCEDURE))
        assert _graded_written(nb, template) == PROCEDURE
        older = nbformat.from_dict({**nb, "nbformat_minor": 4})  # no cell ids: the text rule
        for c in older.cells:
            del c["id"]
        assert _graded_written(nbformat.reads(nbformat.writes(older), 4), template) == PROCEDURE


def test_a_placeholder_with_another_space_or_unicode_form_is_still_the_placeholder():
    """Attack: « VOTRE RÉPONSE ICI » with a no-break space, or its accent decomposed (NFD)."""
    template = read_template(RELEASE)
    for placeholder in (
        "VOTRE\u00a0RÉPONSE ICI",
        "VOTRE RE\u0301PONSE ICI",
        " VOTRE  RÉPONSE ICI\n",
    ):
        nb = _submission(template, placeholder, nbformat.v4.new_markdown_cell(PROCEDURE))
        assert _graded_written(nb, template) == PROCEDURE, placeholder


def test_a_written_answer_in_a_raw_cell_below_the_placeholder_is_graded():
    template = read_template(RELEASE)
    nb = _submission(template, added=nbformat.v4.new_raw_cell(PROCEDURE))
    assert _graded_written(nb, template) == PROCEDURE


def test_a_statement_cell_the_student_edited_is_never_the_answer():
    """Attack: one statement cell edited (its id kept), the placeholder left: the whole
    statement was graded as the answer."""
    template = read_template(RELEASE)
    nb = _submission(template)
    next(c for c in nb.cells if c.id == "documenter-md").source += "\n\nJ'ai lu."
    assert _graded_written(nb, template) == template.cells[-1].source == "VOTRE RÉPONSE ICI"
    nb.cells.append(nbformat.v4.new_markdown_cell(PROCEDURE))
    assert _graded_written(nb, template) == PROCEDURE


def _answers(nb, template) -> list[str]:
    return [c.source for c in rebuild(nb, template).nb.cells if nbgrader_meta(c).get("solution")]


def test_a_statement_fixed_in_the_release_after_submission_changes_no_answer():
    """Attack: a double space fixed in a statement cell of the release after the submissions;
    every untouched placeholder was graded as the old statement (and « rendu modifié »)."""
    template = read_template(RELEASE)
    for cell_id in ("enonce", "documenter-md", "rappels"):
        fixed = _edited(template, cell_id)
        for nb in (
            _submission(template),
            _submission(template, added=nbformat.v4.new_markdown_cell(PROCEDURE)),
            _submission(template, "Ma procédure, ici."),
        ):
            assert _answers(nb, fixed) == _answers(nb, template), cell_id
        assert _graded_written(_submission(template), fixed) == "VOTRE RÉPONSE ICI"


def test_a_copied_statement_cell_is_never_the_answer():
    """A statement cell pasted twice (nbformat gives the copy a new id), then the statement fixed
    in the release: the copy is the student's copy of the statement, not an answer."""
    template = read_template(RELEASE)
    nb = _submission(template)
    at = next(k for k, c in enumerate(nb.cells) if c.id == "documenter-md")
    nb.cells.insert(at + 1, nbformat.v4.new_markdown_cell(nb.cells[at].source))
    fixed = _edited(template, "documenter-md")
    assert _graded_written(nb, fixed) == _graded_written(nb, template) == "VOTRE RÉPONSE ICI"
    # the answer cell copied (the same id twice, as a dict) and written in the first copy
    raw = nbformat.from_dict(nb)
    doc = next(c for c in raw.cells if c.id == "documentation")
    raw.cells.insert(raw.cells.index(doc), nbformat.from_dict({**doc, "source": PROCEDURE}))
    assert _graded_written(raw, fixed) == PROCEDURE
