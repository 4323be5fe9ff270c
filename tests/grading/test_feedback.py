"""Feedback pages in French end to end, on a class graded with the course's tools: criterion
titles instead of grade ids, no English label of nbgrader's template, no literal Markdown, the
late penalty said; `make feedback` rewrites the pages a regrade made stale."""

from __future__ import annotations

import re
from html import unescape

import nbformat
import pytest
from grading.nbgrader_ext.criterion_titles import criterion_number, criterion_title
from grading.runs.autograde_summary import DISAGREE
from grading_course import grading, register, submit
from helpers import REPO

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
ENGLISH = ["Score", "Grade cell", "Test cell", "Student's answer", "Comments", "(Top)", "Late"]


def _text(page: str) -> str:
    """What a reader sees: no tags, no style or script."""
    visible = re.sub(r"<(style|script)\b.*?</\1>", " ", page, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", visible))


def _test_cells() -> list[str]:
    nb = nbformat.read(REPO / "solutions" / "oublier" / "oublier.ipynb", as_version=4)
    return [
        c.metadata.nbgrader["grade_id"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")
    ]


def test_feedback_pages_speak_french(graded_class):
    assert "3 page(s) de retour écrite(s), 0 déjà à jour, 0 en échec" in graded_class.feedback_out
    titles = {criterion_title(g) for g in _test_cells()}
    for student in ("ana", "ben", "cyr"):
        page = graded_class.feedback_page(student).read_text(encoding="utf-8")
        text = _text(page)
        assert '<html lang="fr">' in page
        for word in ENGLISH:
            assert word not in text, (student, word)
        outputs = " ".join(re.findall(r'<div class="output_subarea[^"]*">(.*?)</div>', page, re.S))
        assert "`" not in _text(outputs), student  # messages: code spans rendered as code
        for title in titles:  # numbered as the TP statement numbers them
            assert f"Critère {criterion_number(title)}\u00a0: {title}" in text, (student, title)
        assert not re.search(r"\btest_\w+", text)  # no grade id shown
        assert "note\u00a0:" in text
    ben = _text(graded_class.feedback_page("ben").read_text(encoding="utf-8"))
    assert "Pénalité de retard\u00a0: −2" in ben  # a day and a half late: two started days
    cyr = graded_class.feedback_page("cyr").read_text(encoding="utf-8")
    assert "«\u00a0raise NotImplementedError()\u00a0»" in _text(cyr)  # the stub's message
    # the page names its student; nbgrader's automatic « No response. » on the stub left as it
    # was is no teacher's comment
    assert "Retour pour Cyr Petit (cyr)" in _text(cyr)
    assert "No response" not in cyr and "Commentaire de l'enseignant" not in cyr
    assert re.search(r"Pas de réponse\u00a0:\s+cette cellule est restée telle", _text(cyr))
    assert "Retour pour Ana Martin (ana)" in _text(graded_class.feedback_page("ana").read_text())


def test_feedback_follows_a_regrade(course):
    register(course, "ana")
    submit(course, "ana", "ebauche")
    assert grading(course, "autograde", "oublier").returncode == 0
    older = (course / "gradebook.db").read_bytes()  # ana's 0 points, for the attack below
    first = grading(course, "feedback", "oublier")
    assert first.returncode == 0 and "1 page(s) de retour écrite(s)" in first.stdout
    page = course / "feedback" / "ana" / "oublier" / "oublier.html"
    # out of 12: 10 for the tests, 2 for the written answer (not graded by hand yet)
    assert "note\u00a0: 0 / 12" in _text(page.read_text(encoding="utf-8"))
    again = grading(course, "feedback", "oublier")
    assert again.returncode == 0 and "0 page(s) de retour écrite(s), 1 déjà à jour" in again.stdout
    submit(course, "ana", "complete_vacuum")
    assert grading(course, "autograde", "oublier", "--force").returncode == 0
    after = grading(course, "feedback", "oublier")
    assert after.returncode == 0, after.stdout + after.stderr
    assert "1 page(s) de retour écrite(s)" in after.stdout
    assert (
        "Pages plus anciennes que la copie notée ou que le carnet de notes, réécrites\u00a0: ana."
        in after.stdout
    )
    assert "note\u00a0: 10 / 12" in _text(page.read_text(encoding="utf-8"))
    # Third attack: an older gradebook put back (the first grading's, 0 points): make grade
    # skipped ana as « déjà noté », and feedback showed 0 beside her new, whole answer
    shown, newer = page.read_bytes(), (course / "gradebook.db").read_bytes()
    (course / "gradebook.db").write_bytes(older)
    skipped = grading(course, "autograde", "oublier")
    assert skipped.returncode == 1, skipped.stdout + skipped.stderr
    assert f"  - ana\u00a0: {DISAGREE}" in skipped.stdout, skipped.stdout
    refused = grading(course, "feedback", "oublier", "--force")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"de «\u00a0oublier\u00a0» (ana)\u00a0: {DISAGREE}." in refused.stderr
    assert page.read_bytes() == shown
    (course / "gradebook.db").write_bytes(newer)
    # Attack: the gradebook replaced (lost, then the class enrolled again): nbgrader would empty
    # every page's folder, then fail on copies it does not know; refused, every page kept
    shown = page.read_bytes()
    (course / "gradebook.db").rename(course.parent / "carnet-mis-de-cote.db")
    register(course, "ana")
    refused = grading(course, "feedback", "oublier")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "(ana)\u00a0: aucune note au carnet de notes (a-t-il été remplacé\u00a0?)" in (
        refused.stderr
    )
    assert page.read_bytes() == shown


def test_a_page_made_before_the_hand_grading_says_its_grade_is_provisional(course):
    """Teacher's walk, stop 56: ``make feedback`` before the written answer was graded in
    formgrader gave ana « Réponse écrite (0 / 2) » and « note : 10 / 12 », a grade that looked
    final, and said nothing. Her page says « à noter » and « note provisoire », the command
    names her; once graded by hand (as formgrader does), her page gives the grade."""
    from nbgrader.api import Gradebook

    register(course, "ana")
    folder = submit(course, "ana", "complete_vacuum")
    nb = nbformat.read(folder / "oublier.ipynb", as_version=4)
    next(c for c in nb.cells if c.get("id") == "documentation").source = "Sessions, puis VACUUM."
    nbformat.write(nb, folder / "oublier.ipynb")
    assert grading(course, "autograde", "oublier").returncode == 0
    first = grading(course, "feedback", "oublier")
    page = course / "feedback" / "ana" / "oublier" / "oublier.html"
    text = re.sub(r"[ \n]+", " ", _text(page.read_text(encoding="utf-8")))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Note(s) provisoire(s), une réponse à noter à la main" in first.stdout, first.stdout
    assert "note provisoire\u00a0: 10 / 12" in text and "Réponse écrite (à noter / 2)" in text
    assert "1 réponse(s) pas encore notée(s) à la main" in text
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade("documentation", "oublier", "oublier", "ana")
        grade.manual_score, grade.needs_manual_grade = 1.5, False  # as formgrader saves it
        gb.db.commit()
    again = grading(course, "feedback", "oublier")
    text = re.sub(r"[ \n]+", " ", _text(page.read_text(encoding="utf-8")))
    assert again.returncode == 0 and "provisoire" not in again.stdout, again.stdout
    assert "note\u00a0: 11,5 / 12" in text and "Réponse écrite (1,5 / 2)" in text, text[:2000]
    assert "à noter" not in text


def test_a_typo_in_the_student_asked_for_is_named_with_the_closest_graded_one(graded_class_copy):
    """Teacher's walk, stop 56: ``make feedback ARGS=--student=chlo`` said « Aucune copie
    notée… lancez d'abord make grade », as if nothing were graded; ``make grade`` already
    answered such a typo with the closest id."""
    proc = grading(graded_class_copy.grader, "feedback", "oublier", "--student=an")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Vouliez-vous dire «\u00a0ana\u00a0»\u00a0?" in proc.stderr, proc.stderr
    assert "lancez d'abord make grade" not in proc.stderr
