"""A class with accented and spaced ids, through zip collection and real grading (issue 18
point 8, issue 22 point 1): the NFD zip folder of the registered ``chloé`` and ``jean marc``
are graded under their ids and the summary agrees; a notebook dropped outside its folder is
named and the command exits 1; an unknown ``--student`` lists who did submit."""

from __future__ import annotations

import unicodedata

import pytest
from grading_course import grading, register
from helpers import tp_points
from test_zip_collect import _notebook, _zip

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
Q = "\u00a0"


def test_accents_and_spaces_graded_and_reported(course):
    register(course, "chloé", "jean marc", "lucas")
    nfd = unicodedata.normalize("NFD", "chloé")
    _zip(
        course / "downloaded" / "oublier" / "archive" / "ent.zip",
        {
            f"rendus/{nfd}/oublier.ipynb": _notebook(course, "complete_vacuum"),
            "rendus/jean marc/oublier.ipynb": _notebook(course, "complete_vacuum"),
        },
    )
    collected = grading(course, "zip_collect", "oublier")
    assert collected.returncode == 0, collected.stdout + collected.stderr
    stray = course / "submitted" / "lucas" / "oublier.ipynb"
    stray.parent.mkdir(parents=True)
    stray.write_text(_notebook(course, "graine"))

    graded = grading(course, "autograde", "oublier")
    out = graded.stdout + graded.stderr
    assert graded.returncode == 1, out
    assert f"oublier{Q}: 2 rendu(s) noté(s)" in out and "0 en échec" in out, out
    assert "pas traité" not in out, out
    assert f"lucas/oublier.ipynb{Q}: notebook hors du dossier" in out, out
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        ids = sorted(s.id for s in gb.students)
        scores = {s: gb.find_submission("oublier", s).score for s in ("chloé", "jean marc")}
    assert ids == ["chloé", "jean marc", "lucas"], ids  # no ghost
    assert scores == {"chloé": FULL, "jean marc": FULL}, scores

    unknown = grading(course, "autograde", "oublier", "--student=anais")
    out = unknown.stdout + unknown.stderr
    assert unknown.returncode == 2, out
    assert f"Rendus présents{Q}: chloé, jean marc." in out, out
