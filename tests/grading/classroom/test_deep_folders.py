"""A folder a thousand levels deep in one student's submission (attack, stop 57): Python 3.11's
``os.walk`` and ``rglob`` failed with RecursionError, so ``make grade`` graded nobody and
``make sauvegarde`` wrote no backup, in English. The class's one walker
(``classroom.paths.tree``) never recurses and stops at ``MAX_DEPTH``: that student is refused
and named, the others graded; the backup saves the rest of the class and names the folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import nbformat
import pytest
from grading.classroom.paths import MAX_DEPTH, TOO_DEEP, TooDeep, files_under, not_regular
from grading_course import copy_course, grading, long_path, register, submit

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
    (_deep(submit(course, "edge", "complete_vacuum"), MAX_DEPTH - 3, "b") / "n.txt").touch()
    folder = submit(course, "host", "complete_vacuum")
    trap.append(folder / "a")
    _deep(folder)
    proc = grading(course, "autograde", "oublier")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert "2 rendu(s) noté(s)" in said and "RecursionError" not in said, said
    assert "host" in said and "dossiers trop profonds" in said and "edge" not in said, said
    assert f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués sous grader/" in said, said
    # stop 58: the backup saves the class, names host's trap, and says it failed (exit 1)
    saved = grading(course, "backup", "sauvegarder")
    said = saved.stdout + saved.stderr
    assert saved.returncode == 1 and "Traceback" not in said, said
    assert "Sauvegarde écrite" in said and "✘ Non sauvegardé(s), 1 " in said, said
    assert f"submitted/host/oublier/{'a/' * (MAX_DEPTH - 3)}a ({TOO_DEEP}, non parcouru)" in said
    members = _members(course)
    for student in ("ana", "edge", "host"):  # host's notebook too: only the trap is left
        assert f"submitted/{student}/oublier/oublier.ipynb" in members, members
    assert f"submitted/edge/oublier/{'b/' * (MAX_DEPTH - 3)}n.txt" in members
    subprocess.run(["rm", "-rf", str(folder / "a")], check=True)
    saved = grading(course, "backup", "sauvegarder", "--confirmer")
    assert saved.returncode == 0 and "Non sauvegardé" not in saved.stderr, saved.stderr


def _members(course: Path) -> list[str]:
    """The members of the newest backup of `course`."""
    import tarfile

    newest = sorted((course / "sauvegardes").glob("sauvegarde-*.tar.gz"))[-1]
    with tarfile.open(newest) as tar:
        return tar.getnames()


def test_links_and_fifos_are_named_by_the_backup_never_followed(course, tmp_path):
    """Left by stop 57: the backup left links and fifos out without a word. They are named
    (skipped, exit 0: nothing of the class is lost), never followed; the rest is saved."""
    folder = submit(course, "ana", "complete_vacuum")
    secret = tmp_path / "secret.txt"
    secret.write_text("le secret de l'enseignant", encoding="utf-8")
    (folder / "lien.txt").symlink_to(secret)
    os.mkfifo(folder / "tube")
    saved = grading(course, "backup", "sauvegarder", "--confirmer")
    said = saved.stdout + saved.stderr
    assert saved.returncode == 0 and "✘ Non sauvegardé(s), 2 " in said, said
    assert f"submitted/ana/oublier/lien.txt (lien symbolique vers «\u00a0{secret}" in said, said
    assert "submitted/ana/oublier/tube (tube nommé, fifo)" in said, said
    assert "submitted/ana/oublier/oublier.ipynb" in _members(course)
    assert "submitted/ana/oublier/lien.txt" not in _members(course)
    log = course / "rapport" / "sauvegarde.log"
    assert "lien.txt" in log.read_text(encoding="utf-8")
    # stop 58: its restore says what it does not hold (it said nothing)
    newest = sorted((course / "sauvegardes").glob("sauvegarde-*.tar.gz"))[-1]
    fresh = copy_course(tmp_path / "neuf")
    restored = grading(fresh, "backup", "restaurer", str(newest), "--confirmer")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "⚠ Cette sauvegarde ne contient pas 2 élément(s)" in restored.stderr, restored.stderr
    listed = (fresh / "rapport" / "restauration.log").read_text(encoding="utf-8")
    assert "submitted/ana/oublier/tube (tube nommé, fifo)" in listed, listed
    # and the next backup's report is its own: an earlier list no longer true is gone
    (folder / "lien.txt").unlink()
    (folder / "tube").unlink()
    saved = grading(course, "backup", "sauvegarder", "--confirmer")
    assert saved.returncode == 0 and "Non sauvegardé" not in saved.stderr, saved.stderr
    assert not log.exists()


def _zip_collected(course: Path, students: tuple[str, ...]) -> str:
    """A newer copy of each of `students` in an archive, make zip-collect run: what it said
    (exit status 1 checked: a problem named)."""
    import zipfile

    from grading.samples import build_submission

    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (course / "submissions" / "graine.py").read_text(encoding="utf-8")
    archive = course / "downloaded" / "oublier" / "archive" / "classe.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        for student in students:
            info = zipfile.ZipInfo(f"{student}/oublier.ipynb", date_time=(2030, 1, 1, 0, 0, 0))
            zf.writestr(info, nbformat.writes(build_submission(release, text)))
    proc = grading(course, "zip_collect", "oublier", "--sans-heure", "a-l-heure")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in said, said
    return said


@pytest.mark.slow
def test_zip_collect_never_copies_a_trap_folder_and_collects_the_others(course, trap):
    """Teacher's attack, stop 57: an archive replacing deep's copy made make zip-collect copy
    her 1,100 levels into remplaces/ with shutil.copytree: RecursionError for the whole class,
    a partial copy left each run. Her folder is named and kept as it is; ben is collected."""
    folder = submit(course, "deep", "complete_vacuum")
    trap.append(folder / "a")
    _deep(folder)
    said = _zip_collected(course, ("deep", "ben"))
    assert "deep/oublier\u00a0: copie déjà collectée laissée telle quelle" in said, said
    assert (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").is_file()
    assert not (course / "downloaded" / "oublier" / "remplaces").exists()


def test_a_path_too_long_for_the_system_is_named_never_left_out_unsaid(tmp_path, trap):
    """Third teacher's attack, stop 57: 17 folders of 250 characters (4,300 in all) made the
    erasure crash (ENAMETOOLONG), and the backup leave their file out without a word. The walk
    names such a folder as it names one too deep."""
    from grading.classroom.paths import TOO_LONG

    top = tmp_path / "rendu"
    trap.append(top / ("x" * 250))
    long_path(top, 17, b"")
    with pytest.raises(TooDeep, match=TOO_LONG):
        files_under(top)
    ((rel, why),) = not_regular(top)
    assert rel.startswith("x" * 250) and why.startswith(TOO_LONG), why


@pytest.mark.slow
def test_zip_collect_never_writes_through_a_linked_folder(course, tmp_path):
    """Third teacher's attack, stop 57: a student's folder made a link (to a folder outside the
    course) had her new copy, timestamp.txt and all, written there; a dangling link stopped the
    whole collection on an English traceback. Both are named, never followed; ben is
    collected."""
    elsewhere = tmp_path / "ailleurs"
    (elsewhere / "oublier").mkdir(parents=True)
    (course / "submitted").mkdir(exist_ok=True)
    (course / "submitted" / "lent").symlink_to(elsewhere, target_is_directory=True)
    (course / "submitted" / "ana").mkdir()
    (course / "submitted" / "ana" / "oublier").symlink_to(tmp_path / "nulle-part")
    said = _zip_collected(course, ("lent", "ana", "ben"))
    assert "lent\u00a0: lien symbolique, jamais suivi" in said, said
    assert "ana/oublier\u00a0: lien symbolique, jamais suivi" in said, said
    assert list(elsewhere.rglob("*")) == [elsewhere / "oublier"]
    assert (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").is_file()
