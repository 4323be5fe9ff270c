"""The class roster: one file for the hub and for nbgrader's student list (grader/hub/roster.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import REPO

HUB = REPO / "grader" / "hub"
sys.path.insert(0, str(HUB))
from roster import RosterError, hub_groups, hub_roles, parse_roster, students_csv  # noqa: E402

CLASS = (
    "id,first_name,last_name,email,role\n"
    "prof,Paule,Fesseur,prof@example.org,instructor\n"
    "tom,Tom,Assistant,tom@example.org,ta\n"
    "ana,Ana,Lima,ana@example.org,student\n"
    "\n"
    "bob,Bob,Martin,,student\n"
)


def test_the_roster_gives_the_hub_its_groups():
    members = parse_roster(CLASS)
    groups = hub_groups(members, "memoire-tuteur")
    assert groups["instructors"] == {"users": ["prof"]}
    assert groups["students"] == {"users": ["ana", "bob"]}
    # nbgrader's JupyterHubAuthPlugin: graders of the course, and who takes it
    assert groups["formgrade-memoire-tuteur"] == {"users": ["prof", "tom"]}
    assert groups["nbgrader-memoire-tuteur"] == {"users": ["prof", "ana", "bob"]}


def test_staff_roles_are_scoped_and_server_access_is_a_choice():
    members = parse_roster(CLASS)
    closed = {r["name"]: r for r in hub_roles(members, "c", shared_grader=True)}
    assert "admin:users" not in closed["cours-enseignant"]["scopes"]
    assert "servers!group=students" in closed["cours-enseignant"]["scopes"]
    assert not any(s.startswith("access:servers") for s in closed["cours-enseignant"]["scopes"])
    assert closed["formgrade-c"]["scopes"][0] == "access:services!service=c"
    opened = hub_roles(members, "c", access_student_servers=True)
    added = set(opened[0]["scopes"]) - set(closed["cours-enseignant"]["scopes"])
    assert added == {"access:servers!user=ana", "access:servers!user=bob"}  # students only
    assert [r["name"] for r in opened] == ["cours-enseignant"]  # no service, no role for it


def test_nbgrader_gets_the_students_only():
    text = students_csv(parse_roster(CLASS))
    assert text.splitlines() == [
        "id,first_name,last_name,email",
        "ana,Ana,Lima,ana@example.org",
        "bob,Bob,Martin,",
    ]
    # The Littlest JupyterHub: nbgrader names students after their Unix account
    assert students_csv(parse_roster(CLASS), "jupyter-").splitlines()[1].startswith("jupyter-ana,")


def test_a_spreadsheet_export_reads_the_same():
    """French spreadsheets export with `;` and a byte-order mark."""
    exported = "\ufeff" + CLASS.replace(",", ";").replace("\n", "\r\n")
    assert parse_roster(exported) == parse_roster(CLASS)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("first_name,role\nAna,student\n", "ligne 1\u00a0: colonnes manquantes id"),
        ("id,role\nana,prof\n", "rôle «\u00a0prof\u00a0» inconnu pour «\u00a0ana\u00a0»"),
        ("id,role\nana,student\nben,élève\n1ana,student\n", "ligne 4\u00a0: identifiant"),
        ("id,role,classe\nana,student,2nde\n", "colonne inconnue «\u00a0classe\u00a0»"),
        ("id,role\nana,student\nana,student\n", "«\u00a0ana\u00a0» figure déjà ligne 2"),
        ("id,role\nAna,student\n", "identifiant invalide «\u00a0Ana\u00a0»"),
        ("id,role\nana b,student\n", "identifiant invalide «\u00a0ana b\u00a0»"),
        ("id,role\n,student\n", "ligne 2\u00a0: identifiant vide"),
    ],
)
def test_a_bad_roster_is_refused_with_its_line(text: str, message: str):
    with pytest.raises(RosterError) as refused:
        parse_roster(text, "classe.csv")
    assert message in str(refused.value)


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(HUB / "roster.py"), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_the_command_line_checks_and_reports_errors_in_french(tmp_path: Path):
    (tmp_path / "classe.csv").write_text(CLASS, encoding="utf-8")
    checked = _cli("verifier", "classe.csv", cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert "2 élève(s), 1 enseignant(s), 1 assistant(s)" in checked.stdout
    missing = _cli("eleves", "absente.csv", cwd=tmp_path)
    assert missing.returncode == 2
    assert "liste de la classe introuvable" in missing.stderr
    assert "Traceback" not in missing.stderr


@pytest.mark.slow
def test_nbgrader_imports_the_students_of_the_roster(tmp_path: Path):
    """The stock `nbgrader db student import` reads what `cours-roster eleves` writes."""
    (tmp_path / "classe.csv").write_text(CLASS, encoding="utf-8")
    written = _cli("eleves", "classe.csv", "-o", "eleves.csv", cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    nbgrader = Path(sys.executable).parent / "nbgrader"
    db = f"--CourseDirectory.db_url=sqlite:///{tmp_path / 'gradebook.db'}"
    imported = subprocess.run(
        [str(nbgrader), "db", "student", "import", "eleves.csv", db],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        # nbgrader's gradebook runs `alembic` from PATH
        env={**os.environ, "PATH": f"{nbgrader.parent}{os.pathsep}{os.environ['PATH']}"},
    )
    assert imported.returncode == 0, imported.stderr
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gradebook:
        students = {s.id: (s.first_name, s.email) for s in gradebook.students}
    assert students == {"ana": ("Ana", "ana@example.org"), "bob": ("Bob", None)}


def _fetch_feedback(tmp_path: Path, student: str) -> subprocess.CompletedProcess[str]:
    """nbgrader's own fetch_feedback, as a student runs it, after a submission by `student`
    (nbgrader's submit leaves `<student>+<assignment>+<timestamp>` in the student's cache)."""
    home, exchange, work = tmp_path / student / "home", tmp_path / student / "ex", tmp_path / "w"
    (exchange / "memoire-tuteur" / "feedback").mkdir(parents=True)
    cache = home / ".local/share/jupyter/nbgrader_cache/memoire-tuteur"
    submitted = cache / f"{student}+oublier+2026-12-01 10:00:00.000000 UTC"
    submitted.mkdir(parents=True)
    (submitted / "oublier.ipynb").write_text("{}", encoding="utf-8")
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [str(Path(sys.executable).with_name("nbgrader")), "fetch_feedback", "oublier"]
        + ["--course", "memoire-tuteur", f"--Exchange.root={exchange}"],
        cwd=work,
        env={**os.environ, "HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_plus_in_an_id_is_refused_nbgrader_splits_on_it(tmp_path: Path):
    """nbgrader names a submission `<student>+<assignment>+<timestamp>` and its fetch_feedback
    splits that name on « + » into exactly three parts: a student whose id holds a « + » (an
    e-mail's sub-address, jean+cours@…) could never fetch their feedback. The roster refuses it."""
    assert _fetch_feedback(tmp_path, "jean-cours").returncode == 0  # the control
    broken = _fetch_feedback(tmp_path, "jean+cours")
    assert "too many values to unpack" in broken.stderr  # nbgrader's own failure
    with pytest.raises(RosterError, match="identifiant invalide"):
        parse_roster("id,role\njean+cours,student\n")
    assert [m.id for m in parse_roster("id,role\njean-cours,student\n")] == ["jean-cours"]


def test_a_list_without_roles_is_a_list_of_students():
    """A teacher's class list (no role column, French headers) gives the hub students only:
    nobody gets the staff's rights by omission."""
    members = parse_roster("Identifiant;Prénom;Nom\nana;Ana;Lima\nbob;Bob;Martin\n")
    assert [(m.id, m.first_name, m.role, m.line) for m in members] == [
        ("ana", "Ana", "student", 2),
        ("bob", "Bob", "student", 3),
    ]
    french = parse_roster("id;rôle\nprof;Enseignant\ntom;assistant\nana;élève\n")
    assert [m.role for m in french] == ["instructor", "ta", "student"]


def test_an_unknown_column_is_answered_with_every_column_read():
    """Teacher's walk, stop 60: the refusal named « id ou identifiant, prénom, nom, courriel,
    rôle », without lms_user_id, which the reader takes and grader/README.md documents."""
    import roster

    with pytest.raises(RosterError) as refused:
        parse_roster("id,classe\nana,2nde\n", "classe.csv")
    named = str(refused.value).split("reconnues\u00a0: ", 1)[1].removesuffix(").")
    columns = named.replace(" ou ", ", ").split(", ")
    fields = {roster._HEADERS[roster._fold(column)] for column in columns}
    assert fields == set(roster._HEADERS.values()), named
