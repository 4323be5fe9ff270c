"""A folder a thousand levels deep in one student's submission (attack, stop 57): Python 3.11's
``os.walk`` and ``rglob`` failed with RecursionError, so ``make grade`` graded nobody and
``make sauvegarde`` wrote no backup, in English. The class's one walker
(``classroom.paths.tree``) never recurses and stops at ``MAX_DEPTH``: that student is refused
and named, the others graded; the backup refuses in French, naming the folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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
def test_a_trap_folder_fails_its_student_only_and_the_backup_says_where(course, trap):
    register(course, "ana", "host")
    submit(course, "ana", "complete_vacuum")
    folder = submit(course, "host", "complete_vacuum")
    trap.append(folder / "a")
    _deep(folder)
    proc = grading(course, "autograde", "oublier")
    said = proc.stdout + proc.stderr
    assert proc.returncode == 1, said
    assert "1 rendu(s) noté(s)" in said and "RecursionError" not in said, said
    assert "host" in said and f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués" in said, said
    saved = grading(course, "backup", "sauvegarder")
    said = saved.stdout + saved.stderr
    assert saved.returncode == 2 and "Traceback" not in said, said
    assert f"plus de {MAX_DEPTH} niveaux de dossiers imbriqués" in said and "host/oublier/a" in said
