"""Rosters as teachers have them (issue 22, point 2): a French Excel export (BOM, `;`, French
columns, an NFD id), a Windows-1252 one, registered by `python -m grading.roster_csv` (what
`make students` runs) through stock `nbgrader db student import`; bad rosters refused with one
French sentence naming the line, nothing half-imported; the default roster path git-ignored."""

from __future__ import annotations

import subprocess
import unicodedata

import pytest
from grading_course import copy_course, grading
from helpers import REPO
from nbgrader.api import Gradebook

pytestmark = pytest.mark.timeout(300)

NFD_CHLOE = unicodedata.normalize("NFD", "chloé")


def _students(grader) -> dict[str, tuple[str, str, str]]:
    db = grader / "gradebook.db"
    if not db.exists():
        return {}
    with Gradebook(f"sqlite:///{db}") as gb:
        return {s.id: (s.first_name, s.last_name, s.email) for s in gb.students}


@pytest.fixture
def grader(tmp_path):
    return copy_course(tmp_path / "cours")


@pytest.mark.slow
def test_excel_rosters_are_registered(grader, tmp_path):
    excel = tmp_path / "liste excel.csv"  # Excel's "CSV UTF-8 (délimité par…)"
    excel.write_bytes(
        "\ufeffIdentifiant;Prénom;Nom;Courriel\r\n"
        f"{NFD_CHLOE};Chloé;Roux;chloe.roux@exemple.fr\r\n"
        "jean-marc;Jean-Marc;N'Diaye;\r\n"
        ";;;\r\n".encode()
    )
    proc = grading(grader, "roster_csv", str(excel))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 élève(s) inscrit(s) depuis liste excel.csv\u00a0: 2 nouveau(x)" in proc.stdout
    assert _students(grader) == {
        "chloé": ("Chloé", "Roux", "chloe.roux@exemple.fr"),  # NFC
        "jean-marc": ("Jean-Marc", "N'Diaye", None),
    }
    legacy = tmp_path / "ancien excel.csv"  # Excel's "CSV", Windows-1252
    legacy.write_bytes(
        "id,first_name,last_name,E-mail\r\néloïse,Éloïse,Lefèvre,eloise@exemple.fr\r\n"
        "jean-marc,Jean-Marc,N'Diaye,jm@exemple.fr\r\n".encode("cp1252")
    )
    proc = grading(grader, "roster_csv", str(legacy))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 nouveau(x), 1 mis à jour" in proc.stdout
    assert "pas dans la liste (gardés)\u00a0: chloé" in proc.stdout
    students = _students(grader)
    assert students["éloïse"] == ("Éloïse", "Lefèvre", "eloise@exemple.fr")
    assert students["jean-marc"][2] == "jm@exemple.fr"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            f"id;nom\nchloé;Roux\nana;Martin\n{NFD_CHLOE};Roux\n",
            "Ligne 4 de eleves.csv\u00a0: identifiant «\u00a0chloé\u00a0» déjà donné ligne 2.",
        ),
        ("id,nom\nana,Martin\n,Durand\n", "Ligne 3 de eleves.csv\u00a0: identifiant vide."),
        (
            "id;nom;classe\nana;Martin;2nde B\n",
            "Ligne 1 de eleves.csv\u00a0: colonne inconnue «\u00a0classe\u00a0»",
        ),
        ("nom;prénom\nMartin;Ana\n", "Ligne 1 de eleves.csv\u00a0: pas de colonne id"),
        ("id\nana\n../ben\n", "Ligne 3 de eleves.csv\u00a0: identifiant «\u00a0../ben\u00a0»"),
        ("id\nana\nben+cyr\n", "Ligne 3 de eleves.csv\u00a0: identifiant «\u00a0ben+cyr\u00a0»"),
        ("id\nana\neve<img>\n", "Ligne 3 de eleves.csv\u00a0: identifiant «\u00a0eve<img>\u00a0»"),
        ("id;nom\nana;Martin;en trop\n", "Ligne 2 de eleves.csv\u00a0: 3 valeurs pour 2 colonnes."),
    ],
)
def test_bad_rosters_are_refused_whole(grader, content, expected):
    roster = grader / "eleves.csv"
    roster.write_text(content, encoding="utf-8")
    proc = grading(grader, "roster_csv", str(roster))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert expected in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Rien n'a été inscrit." in proc.stderr
    assert _students(grader) == {}  # the good lines before the bad one are not imported


def test_unreadable_bytes_are_named(grader):
    roster = grader / "eleves.csv"
    roster.write_bytes(b"id\nana\nb\x81n\n")  # 0x81: neither UTF-8 nor Windows-1252
    proc = grading(grader, "roster_csv", str(roster))
    assert proc.returncode == 2
    assert "Ligne 3 de eleves.csv\u00a0: octet 0x81 illisible" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_default_roster_path_is_git_ignored():
    for path in ("grader/eleves.csv", "grader/sauvegardes/x.tar.gz", "grader/exports/ana.zip"):
        check = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
        assert check.returncode == 0, path
