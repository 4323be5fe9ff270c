"""How she is named (learner_places ``mention_pattern``, ``Mentions``): whole words only (Anaïs,
Amélia are not Ana, Lia), never inside an output image's base64 but in a long path, not in the
released TP's text or a style sheet, never a classmate's own name; file and folder names; what
redaction (CAVIARDER=1) rewrites."""

from __future__ import annotations

import dataclasses
import re
import shutil
import zlib

import pytest
from erase_scenes import _copy_class, _enrol, _erase, _released_tp, _setup
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(300)]


def _bens_thanks_name(c, sid: str, name: str) -> bool:
    """Whether the class scan for `sid` finds Ben's notebook once it thanks « `name` »."""
    from grading.privacy.learner_places import scan

    notebook = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    notebook.write_text(f'{{"copie de": "ben", "merci": "{name}"}}', encoding="utf-8")
    return str(notebook) in {f.where for f in scan(sid, _setup(c)).found}


@pytest.mark.slow
def test_redaction_keeps_versioned_files_and_a_classmates_own_name(petite_classe):
    """DPO attack, item 3: CAVIARDER=1 rewrote the course's versioned files (README, ADMIN.md,
    grader.mk name example learners) and a classmate's own name: erasing « ana » turned
    classmate « Ana Roux » (id anne) into « [retiré] Roux ». Now the course's files as it ships
    them (course_files) are not searched, a file outside the class's data folders is named for
    the teacher, never rewritten, and a classmate's own id, name and e-mail stay."""
    from grading.erase_learner import ErasureError, erase
    from grading.privacy.learner_places import scan
    from helpers import REPO

    c = petite_classe
    grader = c["grader"]
    _enrol(c, "anne", "Ana", "Roux", "ana.roux@exemple.fr")
    docs, admin = grader / "README.md", grader / "hub" / "ADMIN.md"  # both name « ana »
    admin.parent.mkdir(exist_ok=True)
    for shipped in (docs, admin):
        shutil.copy(REPO / "grader" / shipped.relative_to(grader), shipped)
        assert re.search(rb"\bana\b", shipped.read_bytes())
    stray = grader / "notes-prof.txt"  # the teacher's own notes, not in a class folder
    stray.write_text("Ana Martin : à relancer.\n", encoding="utf-8")
    answer = grader / "submitted" / "cyr" / "oublier" / "binome.txt"
    answer.write_text(
        "Relu par Ana Roux (ana.roux@exemple.fr, anne) et par Ana.\n", encoding="utf-8"
    )
    versioned = {p: p.read_bytes() for p in (docs, admin)}

    found = scan("ana", _setup(c)).found
    where = {f.where: f.kind for f in found}
    assert str(docs) not in where and str(admin) not in where, where
    assert where.get(str(stray)) == "fichier hors des dossiers de la classe, à corriger à la main"
    assert where.get(str(answer)) == "mention dans le travail de «\u00a0cyr\u00a0»", where
    setup = dataclasses.replace(_setup(c), redact=True)
    with pytest.raises(ErasureError, match="notes-prof.txt"):
        erase("ana", setup, confirm=True, control="cyr")
    assert stray.read_bytes() == "Ana Martin : à relancer.\n".encode()
    stray.unlink()
    result = erase("ana", setup, confirm=True, control="cyr")
    assert not result.failures, result.failures
    assert answer.read_text(encoding="utf-8") == (
        "Relu par Ana Roux (ana.roux@exemple.fr, anne) et par [retiré].\n"
    )
    assert {p: p.read_bytes() for p in versioned} == versioned


@pytest.mark.slow
def test_the_released_text_and_a_style_sheet_are_not_mentions(petite_classe):
    """DPO attack, item 3: the TP uses a sample learner's id as data (« alice »), so erasing
    the real alice counted the TP's own text in every classmate's copy as « mentions » and
    rewrote it; a feedback page's CSS (``max-width``) was a mention of « max ». A line of the
    released notebooks, and a style sheet, are the course's text: neither counted nor
    rewritten; what the classmate wrote about her is."""
    import json

    from grading.erase_learner import erase
    from grading.privacy.learner_places import scan

    c = petite_classe
    grader = c["grader"]
    given, cell, nb = _released_tp(c)
    written = "Relu avec Ana."
    mine = {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": [written]}
    copy = grader / "submitted" / "cyr" / "oublier" / "oublier.ipynb"
    copy.write_text(json.dumps({**nb, "cells": [cell, mine]}, indent=1), encoding="utf-8")
    page = grader / "feedback" / "cyr" / "oublier" / "oublier.html"
    page.parent.mkdir(parents=True)
    style = "<style>\n.ana-x, .y { max-width: 10px }\n</style>"
    hidden = "<style>/* Ana Martin */</style>"  # a name hidden in a style sheet is still found
    # the TP's line as nbconvert renders it in a feedback page
    shown = "Les tests utilisent la base de <code>ana</code> (son <code>user_id</code>) et de "
    shown += "<code>bob</code>."
    page.write_text(f"<html>{style}<p>{shown}</p><p>Bravo Ana</p>{hidden}</html>", encoding="utf-8")

    found = {f.where: f.detail for f in scan("ana", _setup(c)).found}
    assert found[str(copy)] == "1 mention(s), cellule 2", found
    assert found[str(page)] == "2 mention(s)", found  # neither its CSS nor the TP's line
    setup = dataclasses.replace(_setup(c), redact=True)
    result = erase("ana", setup, confirm=True, control="cyr")
    assert not result.failures, result.failures
    cells = json.loads(copy.read_text(encoding="utf-8"))["cells"]
    assert [x["source"] for x in cells] == [[given + "\n"], ["Relu avec [retiré]."]]
    text = page.read_text(encoding="utf-8")
    assert style in text and shown in text and "Bravo [retiré]" in text
    assert "<style>/* [retiré] */</style>" in text


@pytest.mark.slow
def test_a_file_named_after_the_learner_in_grader_is_named(petite_classe):
    """Review4: the class scan reads every file's bytes, never its name (an archive member's
    name is searched, a file's is not). The teacher's follow-up notes, one file per learner
    beside the hub's recipes (grader/hub/suivi/ana-martin.txt: « tiers-temps, 12/20 »), keep
    Ana's grade and accommodation under her name, and the erasure says « Preuve faite ».
    Control: the same note naming her inside is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    folder = c["grader"] / "hub" / "suivi"
    folder.mkdir(parents=True)
    note = folder / "notes.txt"
    note.write_text("ana-martin : tiers-temps, 12/20\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="notes.txt"):  # control: her name inside, named
        _erase(c, "ana")
    note.rename(folder / "ana-martin.txt")
    (folder / "ana-martin.txt").write_text("tiers-temps, 12/20\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="ana-martin.txt"):
        _erase(c, "ana")


def test_another_name_that_starts_with_hers_is_no_mention(petite_classe):
    """Review4: a mention is « a whole word », the boundary being an ASCII letter, digit or
    « _ » only: in « Anaïs » (UTF-8, the « ï » is two bytes that are not ASCII) the scan finds
    « Ana ». Ben's notebook thanks « Anaïs », a girl of another class: erasing « ana » names
    his file as a mention of her, and ``CAVIARDER=1`` would turn it into « [retiré]ïs ».
    Control: « Ana » herself in the same sentence is found."""

    c = petite_classe
    for name, hers in (("Ana", True), ("Anaïs", False), ("Anaëlle", False)):
        assert _bens_thanks_name(c, "ana", name) is hers, name


def test_a_name_that_ends_with_hers_after_an_accented_letter_is_no_mention(petite_classe):
    """Review5: review4's « Anaïs » is fixed on the right of a mention only. A byte that starts
    a UTF-8 letter now counts as a letter, but the byte before her id in « Amélia » is the
    second byte of « é » (a continuation byte), which counts as a boundary: erasing « lia »
    (Lia Moreau) names Ben's notebook that thanks « Amélia », a girl of another class, as a
    mention of her, and ``CAVIARDER=1`` would turn it into « Amé[retiré] ». Control: « Lia »
    herself in the same sentence is found."""

    c = petite_classe
    roster = c["roster"]
    roster.write_text(
        roster.read_text(encoding="utf-8") + "lia;Lia;Moreau;lia.moreau@exemple.fr\n",
        encoding="utf-8",
    )
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        gb.update_or_create_student("lia", first_name="Lia", last_name="Moreau")
    for name, hers in (("Lia", True), ("Amélia", False), ("Célia", False)):
        assert _bens_thanks_name(c, "lia", name) is hers, name


def _png_whose_base64_holds(word: bytes) -> str:
    """A real PNG (64×64 pixels of noise, a plot's texture) whose base64 text, as a notebook
    stores an output image, holds `word` between two of base64's « + » and « / »: about one
    image in two thousand does, for three letters."""
    import base64
    import random
    import struct

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    found = re.compile(rb"[+/]" + word + rb"[+/]", re.I)
    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0))
    for seed in range(200_000):
        noise = random.Random(seed).randbytes(64 * 193)
        rows = b"".join(b"\0" + noise[r * 193 : r * 193 + 192] for r in range(64))
        png = b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", zlib.compress(rows))
        png += chunk(b"IEND", b"")
        text = base64.b64encode(png)
        if found.search(text):
            return text.decode()
    raise AssertionError("aucune image trouvée")


@pytest.mark.slow
def test_a_classmates_plot_is_no_mention_of_a_short_id(petite_classe):
    """Review5: a notebook's output image is base64 text, whose « + » and « / » are word
    boundaries for the mention pattern: a three-letter id (« ana ») stands between them in
    about one 64×64 plot in two thousand, one per 30 MB of images, so a class's notebooks
    and feedback pages (copied in submitted/, autograded/, feedback/ and, since review4,
    searched in the exchange too) hold such a false mention. Erasing ana then names Ben's
    notebook « mention dans le travail de ben » (refused, the teacher looks for her name in
    his notebook and finds none), and ``CAVIARDER=1`` writes « [retiré] » into his image.
    Control: « Ana » in his notebook's text is found."""
    import json

    from grading.privacy.learner_places import scan

    c = petite_classe
    image = _png_whose_base64_holds(b"ana")
    notebook = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    for text, hers in (("merci Ana", True), ("ma courbe", False)):
        cell = {
            "cell_type": "code",
            "source": "tracer()",
            "outputs": [{"output_type": "display_data", "data": {"image/png": image}}],
        }
        note = {"cell_type": "markdown", "source": text}
        notebook.write_text(json.dumps({"cells": [note, cell]}), encoding="utf-8")
        found = {f.where for f in scan("ana", _setup(c)).found}
        assert (str(notebook) in found) is hers, (text, found)


@pytest.mark.slow
def test_her_folder_in_a_long_path_the_teacher_noted_is_named(petite_classe):
    """Review6: since f62fe1b a run of 76 or more characters of base64's alphabet
    (``_BASE64``: letters, digits, « / » and « + ») is taken for an output image and no
    mention inside it counts. A path with no « - », « _ », « . » or space is such a run once
    it is long: the teacher notes in grader/hub/a-revoir.txt the notebook she must reread,
    ``/home/enseignant/Documents/Enseignement/NSI2024/coursIA/grader/submitted/ana/oublier/
    oublier.ipynb`` (as her terminal printed it), and the erasure of ana says « Preuve faite »
    with her id still there. Control: the same note with the path from grader/ is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    note = c["grader"] / "hub" / "a-revoir.txt"
    short = "À relire : grader/submitted/ana/oublier/oublier.ipynb\n"
    note.write_text(short, encoding="utf-8")
    with pytest.raises(ErasureError, match="a-revoir.txt"):  # control, on a copy
        _erase(_copy_class(c), "ana")
    prefix = "/home/enseignant/Documents/Enseignement/NSI2024/coursIA/"
    note.write_text(short.replace("grader/", prefix + "grader/"), encoding="utf-8")
    with pytest.raises(ErasureError, match="a-revoir.txt"):
        _erase(c, "ana")


@pytest.mark.slow
def test_her_name_in_windows_1252_is_named(petite_classe):
    """Attack, stop 56: her name was searched in UTF-8 only; a class list saved as Excel's
    « CSV » (Windows-1252: « Félix » is F, 0xE9, lix), which the docs expect, and a gzip whose
    Latin-1 file name is hers, left « Preuve faite ». Control: the same files naming a
    namesake who is not in the class."""
    import gzip
    import io

    from erase_scenes import _assert_proved
    from grading.erase_learner import ErasureError

    c = petite_classe
    _enrol(c, "felix", "Félix", "Ormond")
    control = _copy_class(c)
    for course, last in ((control, "Dupont"), (c, "Ormond")):
        hub = course["grader"] / "hub"
        (hub / "suivi.csv").write_bytes(f"Félix {last};absent\r\n".encode("cp1252"))
        packed = io.BytesIO()
        with gzip.GzipFile(f"Félix {last}.csv".encode("latin-1"), "wb", fileobj=packed) as gz:
            gz.write(b"absent\n")
        (hub / "archive.gz").write_bytes(packed.getvalue())
    _assert_proved(control, "felix", "un homonyme")
    with pytest.raises(ErasureError, match="suivi.csv") as refused:
        _erase(c, "felix")
    assert "archive.gz" in str(refused.value)


@pytest.mark.slow
def test_her_name_written_as_a_login_is_named(petite_classe):
    """Attack, stop 56: « lina.ibrahimova-semaine2.txt » (her first and last names joined by a
    dot, as a login or a file name writes them), here a gzip's file name, was no mention of
    « Lina Ibrahimova » (id « li »). Control: « nina.ibrahimova » is someone else."""
    import gzip
    import io

    from erase_scenes import _assert_proved
    from grading.erase_learner import ErasureError

    c = petite_classe
    _enrol(c, "li", "Lina", "Ibrahimova")
    control = _copy_class(c)
    for course, first in ((control, "nina"), (c, "lina")):
        packed = io.BytesIO()
        with gzip.GzipFile(f"{first}.ibrahimova-semaine2.txt", "wb", fileobj=packed) as gz:
            gz.write(b"notes de la semaine 2\n")
        (course["grader"] / "hub" / "notes.gz").write_bytes(packed.getvalue())
    _assert_proved(control, "li", "un autre nom")
    with pytest.raises(ErasureError, match="notes.gz"):
        _erase(c, "li")


@pytest.mark.slow
def test_html_s_own_names_are_never_a_short_id(petite_classe):
    """DPO attack, stop 57: erasing « li » counted 147 mentions in every classmate's feedback
    page, its style sheet's « .dropdown-menu>li>a », and CAVIARDER=1 rewrote them all; the same
    for « em », « td », « ul »… An element selector in a <style> and a tag's own name (« <li> »)
    are HTML's words; her id written in the page's text is hers (the control)."""
    from grading.privacy.learner_places import scan

    c = petite_classe
    _enrol(c, "li", "Lina", "Ibrahimova")
    page = c["grader"] / "feedback" / "cyr" / "oublier" / "oublier.html"
    page.parent.mkdir(parents=True)
    style = "<style>.dropdown-menu>li>a{padding:0}\n.carousel-indicators li,ul li{margin:0}</style>"
    body = "<ul><li>Réponse</li></ul><table><tr><td>1</td></tr></table>"
    page.write_text(f"<html>{style}<body>{body}</body></html>", encoding="utf-8")
    assert str(page) not in {f.where for f in scan("li", _setup(c)).found}
    page.write_text(f"<html>{style}<body>{body}<p>Relu avec li</p></body></html>", "utf-8")
    found = {f.where: f.detail for f in scan("li", _setup(c)).found}
    assert found[str(page)] == "1 mention(s)", found
