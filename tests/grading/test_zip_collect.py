"""Submissions gathered outside a hub (`make zip-collect`, ``grading.zip_collect``): a zip of
several students (one folder per student, as the grading guide says) goes into
grader/submitted/; one bad member is skipped and named while everyone else is collected; ids are
read in NFC and matched against the registered class, never guessed; a later archive adds its
new students and newer copies and loses nothing already collected (issue 18 point 8, issue 22
points 1 and 3)."""

from __future__ import annotations

import unicodedata
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading.samples import build_submission
from grading_course import grading, nbgrader

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

Q = "\u00a0"


def _notebook(course: Path, sample: str) -> str:
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
    return nbformat.writes(build_submission(release, text))


def _zip(path: Path, members: dict[str, str], date=(2025, 3, 14, 17, 0, 0)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=date), text)


def _answer(course: Path, student: str) -> str:
    path = course / "submitted" / student / "oublier" / "oublier.ipynb"
    cell = next(
        c
        for c in nbformat.read(path, as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "oublier"
    )
    return cell.source


def _sample(course: Path, sample: str) -> str:
    return (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8").rstrip("\n")


def test_zip_with_a_traversal_member_collects_everyone_else(course):
    archive = course / "downloaded" / "oublier" / "archive"
    answers = {"ana": "complete_vacuum", "ben_2": "graine", "jean marc": "ebauche"}
    members = {f"rendus/{s}/oublier.ipynb": _notebook(course, a) for s, a in answers.items()}
    members["rendus/../../../evade/oublier.ipynb"] = _notebook(course, "ebauche")
    members["__MACOSX/rendus/ana/._oublier.ipynb"] = "\x00\x05\x16\x07"
    _zip(archive / "rendus-ent.zip", members)
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"rendus/../../../evade/oublier.ipynb{Q}: chemin qui sort du dossier" in out, out
    for student, sample in answers.items():
        assert _answer(course, student) == _sample(course, sample), student
    root = course.parent.parent
    assert not list(root.rglob("evade")), "un membre est sorti du dossier"
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(answers)


def test_ids_matched_not_guessed(course):
    for student in ("chloé", "zoé", "lucas", "ana"):
        added = nbgrader(course, "db", "student", "add", student)
        assert added.returncode == 0, added.stdout + added.stderr
    nfd = unicodedata.normalize("NFD", "chloé")
    assert nfd != "chloé"
    archive = course / "downloaded" / "oublier" / "archive"
    _zip(
        archive / "mac.zip",
        {
            f"rendus/{nfd}/oublier.ipynb": _notebook(course, "complete_vacuum"),
            "rendus/zoe/oublier.ipynb": _notebook(course, "graine"),
            "rendus/lucas/oublier (1).ipynb": _notebook(course, "graine"),
            "rendus/ana/oublier.ipynb": _notebook(course, "ebauche"),
        },
    )
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ana", "chloé"]
    assert _answer(course, "chloé") == _sample(course, "complete_vacuum")
    assert (
        f"«{Q}zoe{Q}» n'est pas un élève inscrit{Q}; le plus proche inscrit est «{Q}zoé{Q}»" in out
    )
    assert f"«{Q}oublier (1).ipynb{Q}» n'est pas un notebook" in out, out
    assert f"attendu{Q}: «{Q}oublier.ipynb{Q}»" in out, out


def test_later_archive_adds_and_keeps_what_was_collected(course):
    archive = course / "downloaded" / "oublier" / "archive"
    first = {
        "rendus/ana/oublier.ipynb": _notebook(course, "ebauche"),
        "rendus/ben/oublier.ipynb": _notebook(course, "graine"),
    }
    _zip(archive / "premier.zip", first, date=(2025, 3, 14, 17, 0, 0))
    proc = grading(course, "zip_collect", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the instructor writes ben's submission time by hand (he handed it in late, by e-mail)
    stamp = course / "submitted" / "ben" / "oublier" / "timestamp.txt"
    stamp.write_text("2025-03-16 06:00:00")
    ben_before = (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").read_bytes()

    # the LMS's second download holds everyone: ben unchanged, ana's newer copy, cyr late
    _zip(archive / "premier.zip", first, date=(2025, 3, 14, 17, 0, 0))
    second = {
        "rendus/ana/oublier.ipynb": _notebook(course, "complete_vacuum"),
        "rendus/ben/oublier.ipynb": first["rendus/ben/oublier.ipynb"],
        "rendus/cyr/oublier.ipynb": _notebook(course, "graine"),
    }
    _zip(archive / "second.zip", second, date=(2025, 3, 15, 9, 0, 0))
    again = grading(course, "zip_collect", "oublier")
    out = again.stdout + again.stderr
    assert again.returncode == 0, out
    assert stamp.read_text() == "2025-03-16 06:00:00"
    assert (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").read_bytes() == ben_before
    assert _answer(course, "cyr") == _sample(course, "graine")
    assert _answer(course, "ana") == _sample(course, "complete_vacuum")
    (kept,) = (course / "downloaded" / "oublier" / "remplaces" / "ana").iterdir()
    assert "VOTRE CODE ICI" in (kept / "oublier.ipynb").read_text() or (
        (kept / "oublier.ipynb").read_text() == first["rendus/ana/oublier.ipynb"]
    )
    assert f"Collectés{Q}: cyr" in out and "Remplacés (ancienne copie gardée)" in out, out

    # an older copy of ana (dated before the one collected) never replaces it
    _zip(
        archive / "vieux.zip",
        {"rendus/ana/oublier.ipynb": _notebook(course, "ebauche")},
        date=(2025, 3, 1, 9, 0, 0),
    )
    third = grading(course, "zip_collect", "oublier")
    assert third.returncode == 0, third.stdout + third.stderr
    assert _answer(course, "ana") == _sample(course, "complete_vacuum")
