"""Rosters as teachers have them (issue 22, point 2): a French Excel export (BOM, `;`, French
columns, an NFD name), a Windows-1252 one, registered by `python -m grading.roster_csv` (what
`make students` runs) through stock `nbgrader db student import`; bad rosters refused with one
French sentence naming the line, nothing half-imported; the default roster path git-ignored."""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata

import pytest
from grading_course import BIN, copy_course, grading, run_tool
from helpers import REPO
from nbgrader.api import Gradebook

pytestmark = pytest.mark.timeout(300)
Q = "\u00a0"

NFD_CHLOE = unicodedata.normalize("NFD", "Chloé")


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
        f"chloe;{NFD_CHLOE};Roux;chloe.roux@exemple.fr\r\n"
        "jean-marc;Jean-Marc;N'Diaye;\r\n"
        ";;;\r\n".encode()
    )
    proc = grading(grader, "roster_csv", str(excel))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 élève(s) inscrit(s) depuis liste excel.csv\u00a0: 2 nouveau(x)" in proc.stdout
    assert _students(grader) == {
        "chloe": ("Chloé", "Roux", "chloe.roux@exemple.fr"),  # NFC
        "jean-marc": ("Jean-Marc", "N'Diaye", None),
    }
    legacy = tmp_path / "ancien excel.csv"  # Excel's "CSV", Windows-1252
    legacy.write_bytes(
        "id,first_name,last_name,E-mail\r\neloise,Éloïse,Lefèvre,eloise@exemple.fr\r\n"
        "jean-marc,Jean-Marc,N'Diaye,jm@exemple.fr\r\n".encode("cp1252")
    )
    proc = grading(grader, "roster_csv", str(legacy))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 nouveau(x), 1 mis à jour, 0 inchangé(s)" in proc.stdout
    # teacher's walk, stop 56: the same list again said « 2 mis à jour »
    again = grading(grader, "roster_csv", str(legacy))
    assert "0 nouveau(x), 0 mis à jour, 2 inchangé(s)" in again.stdout, again.stdout
    assert "pas dans la liste (gardés)\u00a0: chloe" in proc.stdout
    students = _students(grader)
    assert students["eloise"] == ("Éloïse", "Lefèvre", "eloise@exemple.fr")
    assert students["jean-marc"][2] == "jm@exemple.fr"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "id;nom\nana;Martin\nben;Roux\nana;Roux\n",
            "eleves.csv, ligne 4\u00a0: «\u00a0ana\u00a0» figure déjà ligne 2.",
        ),
        ("id,nom\nana,Martin\n,Durand\n", "eleves.csv, ligne 3\u00a0: identifiant vide."),
        (
            "id;nom;classe\nana;Martin;2nde B\n",
            "eleves.csv, ligne 1\u00a0: colonne inconnue «\u00a0classe\u00a0»",
        ),
        ("nom;prénom\nMartin;Ana\n", "eleves.csv, ligne 1\u00a0: colonnes manquantes id"),
        ("id\nana\n../ben\n", "ligne 3\u00a0: identifiant invalide «\u00a0../ben\u00a0»"),
        ("id\nana\nben+cyr\n", "ligne 3\u00a0: identifiant invalide «\u00a0ben+cyr\u00a0»"),
        ("id\nana\neve<img>\n", "ligne 3\u00a0: identifiant invalide «\u00a0eve<img>\u00a0»"),
        ("id;nom\nana;Martin;en trop\n", "eleves.csv, ligne 2\u00a0: 3 valeurs pour 2 colonnes."),
        ("id;role\nprof;instructor\n", "eleves.csv\u00a0: aucun élève après l'en-tête."),
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


# One class list, read by the hub's code and by `make students` (issue 35, point 2): the same
# lines admitted and refused, by the same rule. Line number -> (line, refused id or None).
SHARED = {
    1: ("identifiant;prénom;nom;courriel;rôle", None),
    2: ("prof;Paule;Fesseur;prof@exemple.fr;enseignant", None),  # staff: the hub's only
    3: ("ana;Ana;Lima;;élève", None),
    4: ("1ana;Ana;Un;;élève", "1ana"),  # a digit first: LDAP's default pattern refuses it
    5: ("jean@ecole.fr;Jean;Mel;;élève", "jean@ecole.fr"),  # useradd refuses « @ »
    6: ("jean+cours;Jean;Plus;;élève", "jean+cours"),  # nbgrader's exchange splits on « + »
    7: ("jean marc;Jean;Marc;;élève", "jean marc"),
    8: ("Ana;Ana;Majuscule;;élève", "Ana"),  # JupyterHub lowercases the login
    9: ("zoé;Zoé;Accent;;élève", "zoé"),
    10: ("jean-marc;Jean-Marc;N'Diaye;;student", None),
    11: ("eloise;Éloïse;Lefèvre;eloise@exemple.fr;élève", None),  # accents in the names only
}


def _hub_reads(path):
    """The hub's code path: jupyterhub_config.py puts its folder first and imports `roster`."""
    sys.path.insert(0, str(REPO / "grader" / "hub"))
    try:
        from roster import RosterError, read_roster
    finally:
        sys.path.remove(str(REPO / "grader" / "hub"))
    try:
        return read_roster(path), []
    except RosterError as refused:
        return [], refused.problems


def _refused_lines(text: str) -> dict[int, str]:
    found = re.findall(r"ligne (\d+)\u00a0: identifiant invalide «\u00a0([^\u00a0]*)\u00a0»", text)
    return {int(line): sid for line, sid in found}


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["utf-8-sig", "cp1252"])
def test_the_hub_and_make_students_admit_the_same_ids(grader, tmp_path, encoding):
    """A French teacher's export (Excel's BOM, or Windows-1252) with good and bad lines: the hub
    and `make students` (its real command, from the venv) refuse the same lines, each named
    with its number in French; without them, the hub's students are the gradebook's."""
    roster = tmp_path / "classe.csv"
    lines = [SHARED[n][0] for n in sorted(SHARED)]
    roster.write_bytes(("\r\n".join(lines) + "\r\n").encode(encoding))
    expected = {n: sid for n, (_, sid) in SHARED.items() if sid}
    members, problems = _hub_reads(roster)
    assert members == [] and _refused_lines("\n".join(problems)) == expected, problems
    command = [str(BIN / "python"), "-m", "grading.roster_csv"]
    proc = run_tool(grader, *command, str(roster), timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert _refused_lines(proc.stderr) == expected, proc.stderr
    assert "Rien n'a été inscrit." in proc.stderr and _students(grader) == {}
    assert f"ligne 8{Q}: identifiant invalide «{Q}Ana{Q}»" in proc.stderr
    assert f"en minuscules{Q}: «{Q}ana{Q}»" in proc.stderr  # the hint
    kept = [SHARED[n][0] for n in sorted(SHARED) if not SHARED[n][1]]
    roster.write_bytes(("\r\n".join(kept) + "\r\n").encode(encoding))
    members, problems = _hub_reads(roster)
    assert problems == []
    proc = run_tool(grader, *command, str(roster), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hub_students = {m.id: (m.first_name, m.last_name) for m in members if m.role == "student"}
    assert hub_students == {k: v[:2] for k, v in _students(grader).items()}
    assert sorted(hub_students) == ["ana", "eloise", "jean-marc"]
    assert [m.id for m in members if m.role != "student"] == ["prof"]  # not in the gradebook
    assert _students(grader)["eloise"] == ("Éloïse", "Lefèvre", "eloise@exemple.fr")


def test_unreadable_bytes_are_named(grader):
    roster = grader / "eleves.csv"
    roster.write_bytes(b"id\nana\nb\x81n\n")  # 0x81: neither UTF-8 nor Windows-1252
    proc = grading(grader, "roster_csv", str(roster))
    assert proc.returncode == 2
    assert "eleves.csv, ligne 3\u00a0: octet 0x81 illisible" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_default_roster_path_is_git_ignored():
    for path in ("grader/eleves.csv", "grader/sauvegardes/x.tar.gz", "grader/exports/ana.zip"):
        check = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
        assert check.returncode == 0, path


@pytest.mark.slow
def test_a_roster_readable_by_all_is_made_private(grader):
    """A teacher's list saved with the usual umask (0644) holds the class's names and e-mails
    for every account of the machine: `make students` takes the others' rights away (the
    group's stay, for a course shared by a group) and says so; nothing said when already
    private."""
    roster = grader / "eleves.csv"
    roster.write_bytes("identifiant;prénom;nom\r\nchloe;Chloé;Roux\r\n".encode("cp1252"))
    roster.chmod(0o644)
    proc = grading(grader, "roster_csv", str(roster))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert roster.stat().st_mode & 0o777 == 0o640
    said = f"eleves.csv était lisible par tous les comptes de la machine (noms, courriels){Q}:"
    assert said in proc.stdout
    proc = grading(grader, "roster_csv", str(roster))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lisible par tous" not in proc.stdout
