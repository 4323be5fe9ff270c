"""`make notebooks` (grading.student_version): the generated student version replaces
notebooks/ only where nobody worked; what differs there (``make lab`` opens it) is named and
kept, or set aside in build/ with ECRASER=1, never deleted."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from grading.student_version import main, own_changes

GIT = ("git", "-c", "user.name=prof", "-c", "user.email=prof@exemple.fr")


def _course(tmp_path: Path) -> tuple[Path, Path]:
    """A generated version, and a git checkout whose notebooks/ held the previous one: the TP as
    generated, and a lesson since renamed in solutions/ (the course's own, tracked)."""
    generated = tmp_path / "genere"
    (generated / "oublier").mkdir(parents=True)
    (generated / "lecons").mkdir()
    (generated / "oublier" / "oublier.ipynb").write_text("TP\n")
    (generated / "lecons" / "01_nouveau.ipynb").write_text("leçon\n")
    repo = tmp_path / "cours"
    (repo / "notebooks" / "oublier").mkdir(parents=True)
    (repo / "notebooks" / "lecons").mkdir()
    (repo / "notebooks" / "oublier" / "oublier.ipynb").write_text("TP\n")
    (repo / "notebooks" / "lecons" / "01_ancien.ipynb").write_text("ancienne leçon\n")
    (repo / ".gitignore").write_text("*.db\n")
    subprocess.run([*GIT, "init", "-q"], cwd=repo, check=True)
    subprocess.run([*GIT, "add", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "cours"], cwd=repo, check=True)
    return generated, repo


def test_what_a_teacher_did_in_notebooks_is_named_and_kept_or_set_aside(tmp_path, capsys):
    """Teacher's walk, stop 56: ``make paquet-eleve`` (which runs ``make notebooks``) deleted an
    answer tried in the TP, a note of one's own and a lesson's database from notebooks/, where
    the README has the teacher run ``make lab``, with nbgrader's English « Removing existing
    assignment » and exit 0. Control: the renamed lesson, the course's own, is replaced."""
    generated, repo = _course(tmp_path)
    notebooks = repo / "notebooks"
    (notebooks / "oublier" / "oublier.ipynb").write_text("TP, ma réponse\n")
    (notebooks / "oublier" / "mes_notes.txt").write_text("à revoir\n")
    (notebooks / "lecons" / "lecon02.db").write_bytes(b"SQLite format 3\0")  # ignored by git
    outside = tmp_path / "donnees"  # second attack: a link to a folder went, unnamed
    outside.mkdir()
    (outside / "garde.csv").write_text("à garder\n")
    (notebooks / "oublier" / "donnees").symlink_to(outside)
    mine = ["lecons/lecon02.db", "oublier/donnees", "oublier/mes_notes.txt"]
    mine.append("oublier/oublier.ipynb")
    assert own_changes(generated, notebooks) == mine
    assert main([str(generated), str(notebooks)]) == 1
    said = capsys.readouterr().err
    assert "✘ notebooks/ n'a pas été régénéré\u00a0: 4 fichier(s)" in said
    assert all(f"notebooks/{rel}" in said for rel in mine) and "ECRASER=1" in said
    assert (notebooks / "oublier" / "oublier.ipynb").read_text() == "TP, ma réponse\n"
    assert (notebooks / "lecons" / "01_ancien.ipynb").exists()
    (repo / "build").write_text("un fichier, pas un dossier\n")  # second attack: a traceback
    assert main([str(generated), str(notebooks), "--ecraser"]) == 1
    assert "✘ notebooks/ n'a pas été régénéré en entier" in capsys.readouterr().err
    (repo / "build").unlink()
    assert main([str(generated), str(notebooks), "--ecraser"]) == 0
    (aside,) = (repo / "build").iterdir()
    assert sorted(p.relative_to(aside).as_posix() for p in aside.rglob("*")) == [
        "lecons",
        *mine[:1],
        "oublier",
        *mine[1:],
    ]
    assert (aside / "oublier" / "donnees").is_symlink() and (outside / "garde.csv").is_file()
    assert (aside / "oublier" / "oublier.ipynb").read_text() == "TP, ma réponse\n"
    assert (notebooks / "oublier" / "oublier.ipynb").read_text() == "TP\n"
    assert sorted(p.name for p in (notebooks / "lecons").iterdir()) == ["01_nouveau.ipynb"]


def test_outside_a_git_checkout_every_difference_is_kept(tmp_path):
    """A course downloaded as a zip: nothing says what is the course's own, so the renamed
    lesson too is named, never deleted; a notebooks/ as generated is replaced silently."""
    generated, repo = _course(tmp_path)
    shutil.rmtree(repo / ".git")
    assert own_changes(generated, repo / "notebooks") == ["lecons/01_ancien.ipynb"]
    (repo / "notebooks" / "lecons" / "01_ancien.ipynb").unlink()
    assert main([str(generated), str(repo / "notebooks")]) == 0
    assert (repo / "notebooks" / "lecons" / "01_nouveau.ipynb").read_text() == "leçon\n"
