"""A folder a thousand levels deep in one student's submission (attack, stop 57): Python 3.11's
``os.walk`` and ``rglob`` failed with RecursionError, so ``make grade`` graded nobody and
``make sauvegarde`` wrote no backup, in English. The class's one walker
(``classroom.paths.tree``) never recurses and stops at ``MAX_DEPTH``: that student is refused
and named, the others graded; the backup refuses in French, naming the folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from grading.classroom.paths import MAX_DEPTH, TooDeep, files_under, not_regular
from grading_course import grading, register, submit

DEPTH = 1100  # the attack's


def _deep(folder: Path, depth: int = DEPTH, name: str = "a") -> Path:
    """`depth` nested folders `name` in `folder`: the innermost."""
    inner = folder / "/".join([name] * depth)
    subprocess.run(["mkdir", "-p", str(inner)], check=True)  # os.makedirs recurses too
    return inner


@pytest.fixture
def trap(tmp_path):
    made = []
    yield made
    for top in made:  # shutil.rmtree recurses too (Python 3.11)
        subprocess.run(["rm", "-rf", str(top)], check=True)


def test_a_trap_folder_is_named_never_a_recursion_error(tmp_path, trap):
    top = tmp_path / "rendu"
    trap.append(top / "a")
    _deep(top)
    (top / "oublier.ipynb").write_text("{}", encoding="utf-8")
    with pytest.raises(TooDeep, match=f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués"):
        files_under(top)
    ((rel, why),) = not_regular(top)
    assert rel.startswith("a/a/") and f"plus de {MAX_DEPTH} niveaux" in why
    ok = _deep(tmp_path / "ok", MAX_DEPTH - 2, "b")  # the control: walked whole
    (ok / "f.txt").write_text("x", encoding="utf-8")
    os.symlink("/etc", ok / "lien")  # never followed, named
    assert [rel for rel, _ in files_under(tmp_path / "ok")] == ["b/" * (MAX_DEPTH - 2) + "f.txt"]
    assert [why[:15] for _, why in not_regular(tmp_path / "ok")] == ["lien symbolique"]


@pytest.mark.slow
def test_a_trap_folder_fails_its_student_only_and_what_grade_accepts_is_backed_up(course, trap):
    """1,100 levels in host's submission: host refused and named, ana graded; the backup
    refuses in French, naming the folder. Second attack, stop 57: each walk counted its levels
    from its own folder, so make grade accepted a folder the backup then refused (for the whole
    class): now every walk counts from grader/, and edge's 29 levels under
    submitted/edge/oublier/ (32 under grader/) are graded, then backed up once host's is gone."""
    register(course, "ana", "edge", "host")
    submit(course, "ana", "complete_vacuum")
    _deep(submit(course, "edge", "complete_vacuum"), MAX_DEPTH - 3, "b")
    folder = submit(course, "host", "complete_vacuum")
    trap.append(folder / "a")
    _deep(folder)
    proc = grading(course, "autograde", "oublier")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert "2 rendu(s) noté(s)" in said and "RecursionError" not in said, said
    assert "host" in said and "dossiers trop profonds" in said and "edge" not in said, said
    assert f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués sous grader/" in said, said
    saved = grading(course, "backup", "sauvegarder")
    said = saved.stdout + saved.stderr
    assert saved.returncode == 2 and "Traceback" not in said, said
    assert f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués" in said and "host/oublier/a" in said
    subprocess.run(["rm", "-rf", str(folder / "a")], check=True)
    saved = grading(course, "backup", "sauvegarder")
    assert saved.returncode == 0, saved.stdout + saved.stderr


@pytest.mark.slow
def test_zip_collect_never_copies_a_trap_folder_and_collects_the_others(course, trap):
    """Teacher's attack, stop 57: an archive replacing deep's copy made make zip-collect copy
    her 1,100 levels into remplaces/ with shutil.copytree: RecursionError for the whole class,
    a partial copy left each run. Her folder is named and kept as it is; ben is collected."""
    import zipfile

    from grading.samples import build_submission

    folder = submit(course, "deep", "complete_vacuum")
    trap.append(folder / "a")
    _deep(folder)
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (course / "submissions" / "graine.py").read_text(encoding="utf-8")
    archive = course / "downloaded" / "oublier" / "archive" / "classe.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        for student in ("deep", "ben"):
            info = zipfile.ZipInfo(f"{student}/oublier.ipynb", date_time=(2030, 1, 1, 0, 0, 0))
            zf.writestr(info, nbformat.writes(build_submission(release, text)))
    proc = grading(course, "zip_collect", "oublier", "--sans-heure", "a-l-heure")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in said, said
    assert "deep/oublier\u00a0: copie déjà collectée laissée telle quelle" in said, said
    assert (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").is_file()
    assert not (course / "downloaded" / "oublier" / "remplaces").exists()
