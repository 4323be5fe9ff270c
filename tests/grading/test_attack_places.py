"""Attacks on where learners' data lives (``grading.classroom.class_places``, read by the
erasure): a learner's copy kept twice under one id in two Unicode forms, and a learner's own
copy that the collect set aside under a classmate's name. The small class of
``privacy/erase_scenes.py`` (planted as the tools leave it), the real erasure."""

from __future__ import annotations

import unicodedata
import zipfile

import pytest
from erase_scenes import _erase, petite_classe, petite_classe_template  # noqa: F401
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(300)]


def _chloe_twice(c) -> None:
    """chloé (an id kept from an older gradebook) with submitted/chloé in NFC (zip collect's)
    and submitted/chloe\\u0301 in NFD (copied from a Mac), each holding a different copy."""
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        gb.update_or_create_student("chloé", first_name="Chloé", last_name="Roux")
    for form in ("NFC", "NFD"):
        folder = c["grader"] / "submitted" / unicodedata.normalize(form, "chloé") / "oublier"
        folder.mkdir(parents=True)
        (folder / "oublier.ipynb").write_text(f'{{"copie": "{form}"}}')
    assert len(list((c["grader"] / "submitted").iterdir())) == 5  # the two forms are two folders


def test_her_folders_in_both_unicode_forms_are_both_erased(petite_classe):  # noqa: F811
    """chloé's copies in both Unicode forms: ``own_folders`` finds both in each place; the erasure
    must leave neither."""
    c = petite_classe
    _chloe_twice(c)
    _erase(c, "chloé")
    left = [
        p.name
        for p in (c["grader"] / "submitted").iterdir()
        if unicodedata.normalize("NFC", p.name) == "chloé"
    ]
    assert left == [], f"copie de chloé laissée dans submitted/ ({left!r})"
    assert (c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb").exists()


def test_her_copy_set_aside_under_a_classmates_name_is_erased(petite_classe):  # noqa: F811
    """ana deposited her notebook as ben's (``nbgrader submit --student ben``): the collect set
    it aside (owned by ana, not ben) into quarantaine/oublier/ben+oublier+…/. Erasing ana must
    remove her answers there too (erasing ben need not)."""
    c = petite_classe
    kept = c["grader"] / "quarantaine" / "oublier" / "ben+oublier+2026-12-01 10:00:00 UTC+x"
    kept.mkdir(parents=True)
    (kept / "oublier.ipynb").write_text('{"reponse": 42}')  # a notebook names nobody
    # what collect writes beside a set-aside copy: its files' owners in the exchange
    # (test_exchange_owner.py::test_copy_under_a_classmates_name_is_set_aside shows it does)
    (kept / "DEPOSE_PAR.txt").write_text("ana\n", encoding="utf-8")
    _erase(c, "ana")
    assert not (kept / "oublier.ipynb").exists(), "la copie d'ana mise de côté est restée"


def test_her_export_holds_her_copies_in_both_unicode_forms(petite_classe):  # noqa: F811
    """Her data export (``make donnees-eleve``) holds both copies, as her erasure removes both."""
    from grading.learner_export import export_learner

    c = petite_classe
    _chloe_twice(c)
    path, _ = export_learner("chloé", c["tmp"] / "exports", c["roster"], c["grader"])
    with zipfile.ZipFile(path) as zf:
        copies = [zf.read(n) for n in zf.namelist() if n.endswith("oublier.ipynb")]
    assert sorted(copies) == [b'{"copie": "NFC"}', b'{"copie": "NFD"}'], copies
