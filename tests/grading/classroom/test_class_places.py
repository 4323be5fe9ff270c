"""The one list of where the class keeps learners' data (``grading.classroom.class_places``): every
place on it is found by the erasure's scan, kept by a backup exactly when the list says so, and in a
learner's export exactly when it has an export folder. A place added to the list and not to
one of the three commands fails here."""

from __future__ import annotations

import tarfile
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(600)]

WHO = "ben"


def _fill(place_key: str, folder: Path) -> Path:
    """A file of ben's in `folder`, in the form that place holds it; the file."""
    if place_key in ("submitted", "autograded", "feedback"):
        file = folder / WHO / "oublier" / "trace.txt"
    elif place_key == "downloaded":
        file = folder / "oublier" / "remplaces" / WHO / "20250314-173000" / "oublier.ipynb"
    elif place_key == "quarantine":
        file = folder / "oublier" / f"{WHO}+oublier+2025-03-14 17:00:00" / "oublier.ipynb"
    else:
        return folder  # filled by the commands themselves below (export, report, backup)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("{}")
    return file


def test_every_place_is_scanned_backed_up_and_exported_as_listed(graded_class_copy):
    from grading.backup import backup
    from grading.classroom.class_places import PLACES, learner_ids
    from grading.classroom.paths import course_dirs
    from grading.learner_export import export_learner
    from grading.privacy.learner_places import Setup, scan

    grader = graded_class_copy.grader
    dirs = course_dirs(grader)
    assert all(isinstance(p.folder(dirs), Path) for p in PLACES), (
        "every place is a CourseDirs folder"
    )
    for place in PLACES:
        _fill(place.key, place.folder(dirs))
    (dirs.report).mkdir(exist_ok=True)
    (dirs.report / "notes.csv").write_text(f"student_id,score\n{WHO},7\n")
    export, _ = export_learner(WHO, grader_dir=grader)
    archive, _, _ = backup(grader_dir=grader)
    assert export.parent == dirs.exports and archive.parent == dirs.backups
    assert WHO in learner_ids(dirs)

    found = scan(WHO, Setup(grader_dir=grader))
    where = [Path(f.where) for f in found.found] + [Path(p.where) for p in found.pending]
    for place in PLACES:
        root = place.folder(dirs)
        assert any(w == root or root in w.parents for w in where), (
            f"the erasure's scan finds nothing of {WHO} in {place.key} ({root})"
        )

    with tarfile.open(archive, "r:gz") as tar:
        tops = {Path(m).parts[0] for m in tar.getnames()}
    for place in PLACES:
        assert (place.key in tops) == place.backed_up, place.key

    with zipfile.ZipFile(export) as zf:
        folders = {Path(m).parts[0] for m in zf.namelist()}
    for place in PLACES:
        if place.export_name:
            assert place.export_name in folders, place.key
    assert not folders & {p.key for p in PLACES}, "the export names places in French"
