"""Give a learner their data (issue 22, point 8): `python -m grading.learner_export` (what
`make donnees-eleve ID=…` runs) on a class graded by real nbgrader commands writes one zip with
the learner's gradebook rows, roster line and files, in open formats, with a French README, and
nothing of the other learners, who are in the class (the control: their own export holds their
data); an NFD id finds its NFC learner; an unknown id is refused with the closest ids."""

from __future__ import annotations

import json
import sys
import unicodedata
import zipfile

import pytest
from grading.feedback import GRADES_SHOWN
from grading_course import copy_course, grading, run_tool
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

OTHERS = {"ana": ("Martin",), "ben": ("Durand",), "cyr": ("Petit",), "dou": ("Leroy",)}


def _export(grader, sid: str, out) -> dict[str, bytes]:
    proc = grading(grader, "learner_export", sid, "--eleves", "eleves.csv", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [archive] = sorted(out.glob("donnees-*.zip"))
    with zipfile.ZipFile(archive) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _own_files(grader, sid: str) -> dict[str, bytes]:
    files = {}
    for part, name in (("submitted", "rendus"), ("autograded", "copies_notees"),
                       ("feedback", "retours")):  # fmt: skip
        folder = grader / part / sid
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.name != GRADES_SHOWN:  # make feedback's own digest
                files[f"{name}/{path.relative_to(folder).as_posix()}"] = path.read_bytes()
    return files


@pytest.mark.parametrize("sid", ["ben", "ana"])
def test_the_archive_holds_the_learner_and_no_one_else(graded_class, tmp_path, sid):
    grader = graded_class.grader
    members = _export(grader, sid, tmp_path)
    own = _own_files(grader, sid)
    assert own and {k: members[k] for k in own} == own  # every file, byte for byte
    # teacher's walk, stop 56: make feedback's digest went too, counted as a second « retour »
    assert (grader / "feedback" / sid / "oublier" / GRADES_SHOWN).is_file()
    assert not [name for name in members if name.endswith(GRADES_SHOWN)]
    data_files = {"LISEZMOI.txt", "eleve.json", "notes.json", "notes.csv"}
    assert set(members) == data_files | set(own)
    readme = members["LISEZMOI.txt"].decode()
    assert "(information et droit d'accès) et 20 (droit à la portabilité) du RGPD" in readme
    assert f"«\u00a0{sid}\u00a0»" in readme
    title, underline, *_ = readme.splitlines()  # teacher's walk, stop 60: 37 « = » whatever
    assert title.startswith("Vos données dans le cours") and underline == "=" * len(title)
    fiche = json.loads(members["eleve.json"])
    assert fiche["carnet_de_notes"]["identifiant"] == sid
    assert fiche["carnet_de_notes"]["nom"] == OTHERS[sid][0]
    assert fiche["liste_des_eleves"]["nom"] == OTHERS[sid][0]
    notes = json.loads(members["notes.json"])
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        sub = gb.find_submission("oublier", sid)
        assert [n["note"] for n in notes] == [sub.score]
        grades = {g.name: g.score for nb in sub.notebooks for g in nb.grades}
    criteria = notes[0]["notebooks"][0]["criteres"]
    assert {cell for c in criteria for cell in c["cellules"]} == set(grades)
    for c in criteria:  # a criterion's tests (visible, hidden): one entry, their points summed
        assert c["note"] == sum(grades[cell] for cell in c["cellules"]), c
    assert members["notes.csv"].startswith("\ufeffdevoir;".encode())
    # nothing of another learner: their ids and names appear in no data file, no member name
    for other, (last_name,) in OTHERS.items():
        if other == sid:
            continue
        assert not any(f"/{other}/" in f"/{name}" for name in members)
        for name in data_files:
            text = members[name].decode("utf-8")
            assert last_name not in text, (other, name)
            assert f'"{other}"' not in text, (other, name)


def test_nfd_id_and_unknown_id(tmp_path):
    """An accented id is no login (grader/hub/roster.py's ID_PATTERN): the roster refuses it,
    but a gradebook from before the rule may hold one, which is still exported."""
    grader = copy_course(tmp_path / "cours")
    roster = "identifiant;prénom;nom;courriel\nchloé;Chloé;Roux;chloe@exemple.fr\nana;Ana;Martin;\n"
    (grader / "eleves.csv").write_text(roster, encoding="utf-8")
    proc = grading(grader, "roster_csv", "eleves.csv")
    assert proc.returncode == 2 and "ligne 2\u00a0: identifiant invalide" in proc.stderr
    (grader / "eleves.csv").write_text(roster.replace("chloé", "chloe"), encoding="utf-8")
    proc = grading(grader, "roster_csv", "eleves.csv")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # written before the rule, as `nbgrader db student add chloé --first-name=… …` writes it
    # (its one gradebook call), in this process: the set-up, not what is shown
    names = {"first_name": "Chloé", "last_name": "Dupré", "email": "chloe.d@exemple.fr"}
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}", "memoire-tuteur") as gb:
        gb.update_or_create_student("chloé", **names, lms_user_id=None)
    members = _export(grader, unicodedata.normalize("NFD", "chloé"), tmp_path / "out")
    fiche = json.loads(members["eleve.json"])
    assert fiche["liste_des_eleves"] is None  # chloe's line is another id
    assert "Dupré" in members["eleve.json"].decode()
    assert "Roux" not in members["eleve.json"].decode()
    assert "Martin" not in members["eleve.json"].decode()
    proc = grading(grader, "learner_export", "chlo", "--eleves", "eleves.csv")
    assert proc.returncode == 2
    assert "Aucune donnée pour l'identifiant «\u00a0chlo\u00a0»" in proc.stderr
    assert "Identifiants proches\u00a0: chloé, chloe." in proc.stderr
    assert not (grader / "exports").exists()


def test_the_copy_is_complete_and_readable(graded_class_copy, tmp_path):
    """Issue 33, point 6: every copy ever collected (the earlier ones zip_collect replaced, the
    quarantine's), each criterion once with its statement number and title, a French CSV
    (``;``, decimal comma), and a README with purpose, recipients, retention and the right to
    complain to the CNIL (RGPD articles 13 and 15)."""
    import csv
    import io

    from course.labo.criteria import statement_table

    grader = graded_class_copy.grader
    earlier = grader / "downloaded" / "oublier" / "remplaces" / "ben" / "20250314-173000"
    earlier.mkdir(parents=True)
    (earlier / "oublier.ipynb").write_bytes(b'{"premiere": "version"}')
    aside = grader / "quarantaine" / "oublier" / "ben+oublier+2025-03-14 17:00:00"
    aside.mkdir(parents=True)
    (aside / "oublier.ipynb").write_bytes(b'{"mise": "de cote"}')
    other = grader / "downloaded" / "oublier" / "remplaces" / "ana" / "20250314-173000"
    other.mkdir(parents=True)
    (other / "oublier.ipynb").write_bytes(b'{"ana": 1}')  # the control: never in ben's copy
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:  # a half point, by hand
        grade = gb.find_grade("documentation", "oublier", "oublier", "ben")
        grade.manual_score = 1.5
        gb.db.commit()
    members = _export(grader, "ben", tmp_path)
    assert members["copies_remplacees/oublier/20250314-173000/oublier.ipynb"] == (
        b'{"premiere": "version"}'
    )
    name = "mises_de_cote/oublier/ben+oublier+2025-03-14 17:00:00/oublier.ipynb"
    assert members[name] == b'{"mise": "de cote"}'
    assert not [m for m in members if b'{"ana": 1}' == members[m]]
    text = members["notes.csv"].decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text), delimiter=";"))
    titles = [r["titre du critère"] for r in rows]
    assert len(titles) == len(set(titles))  # each criterion once
    for numbered, _points, _visible in statement_table():
        number, title = numbered.split(". ", 1)
        [row] = [r for r in rows if r["titre du critère"] == title]
        assert row["critère"] == number, row
    [hand] = [r for r in rows if r["points à la main"]]
    assert hand["points à la main"] == "1,5" and "." not in "".join(r["note"] for r in rows)
    readme = members["LISEZMOI.txt"].decode()
    for words in ("Finalité", "Destinataires", "Durée de conservation", "30 jours (le réglage",
                  "réclamation à la CNIL", "articles 13 et 15"):  # fmt: skip
        assert words in readme, words


def test_nothing_that_came_from_a_link_is_exported(graded_class_copy, tmp_path):
    """A submission that held a link when graded before the check (tests/grading/test_autograde.py
    refuses it now): nbgrader copied the target, the gradebook, into autograded/ and feedback/ as
    plain files. Neither the link nor those copies reach the archive, and they are named; the
    learner's own files do (the control)."""
    import os

    grader = graded_class_copy.grader
    gradebook = (grader / "gradebook.db").read_bytes()
    (grader / "submitted" / "ben" / "oublier" / "classe.txt").symlink_to("../../../gradebook.db")
    for part in ("autograded", "feedback"):
        (grader / part / "ben" / "oublier" / "classe.txt").write_bytes(gradebook)
    hard = grader / "submitted" / "ben" / "oublier" / "copie.db"
    os.link(grader / "gradebook.db", hard)  # the same file under a second name
    out = str(tmp_path)
    proc = grading(grader, "learner_export", "ben", "--eleves", "eleves.csv", "--out", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [archive] = sorted(tmp_path.glob("donnees-*.zip"))
    with zipfile.ZipFile(archive) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    assert not [m for m, data in members.items() if data[:100] == gradebook[:100]]
    assert not [m for m in members if m.endswith(("classe.txt", "copie.db"))]
    left_out = [f"{p}/oublier/classe.txt" for p in ("copies_notees", "retours", "rendus")]
    left_out.append("rendus/oublier/copie.db")
    assert "⚠ 4 fichier(s) non exporté(s)" in proc.stderr
    assert all(m in proc.stderr for m in left_out), proc.stderr
    # the control: the learner's own notebook and feedback page are there
    own = grader / "autograded" / "ben" / "oublier" / "oublier.ipynb"
    assert members["copies_notees/oublier/oublier.ipynb"] == own.read_bytes()
    assert "retours/oublier/oublier.html" in members and "rendus/oublier/oublier.ipynb" in members


def test_a_teachers_hard_link_snapshot_is_plain_files_a_linked_folder_is_not(
    graded_class_copy, tmp_path
):
    """A teacher's snapshot of submitted/ with hard links (``cp -al``, rsnapshot) gives every
    file a second name: grading and the export take them as they are (a student cannot link a
    file they do not own; only the gradebook itself under another name is refused, in
    test_nothing_that_came_from_a_link_is_exported). A submitted/<id> that is itself a link
    (to a classmate's folder): what nbgrader copied from it is not theirs, left out and named."""
    import os
    import shutil
    import subprocess

    from grading.classroom.paths import course_dirs
    from grading.runs.submitted_ids import check_submitted_ids

    grader = graded_class_copy.grader
    snapshot = subprocess.run(
        ["cp", "-al", str(grader / "submitted"), str(tmp_path / "instantane")], check=True
    )
    assert snapshot.returncode == 0
    notebook = grader / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    assert os.stat(notebook).st_nlink == 2  # the snapshot's second name
    report = check_submitted_ids(course_dirs(grader), "oublier")
    assert not report.refused, report.refused
    members = _export(grader, "ben", tmp_path / "out")
    assert members["rendus/oublier/oublier.ipynb"] == notebook.read_bytes()
    # ben's submitted/ folder replaced by a link to cyr's: his graded copy came from cyr's work
    shutil.rmtree(grader / "submitted" / "ben")
    (grader / "submitted" / "ben").symlink_to(grader / "submitted" / "cyr")
    out = tmp_path / "lien"
    proc = grading(grader, "learner_export", "ben", "--eleves", "eleves.csv", "--out", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [archive] = sorted(out.glob("donnees-*.zip"))
    names = zipfile.ZipFile(archive).namelist()
    assert not [n for n in names if n.startswith(("copies_notees/", "retours/", "rendus/"))]
    assert "copies_notees/oublier/oublier.ipynb" in proc.stderr, proc.stderr
    assert "notes.json" in names  # the control: his gradebook rows are there


def test_no_export_without_the_gradebook(graded_class_copy, tmp_path):
    """The gradebook missing (a lost disk, a wrong folder): no archive that would say « 0
    devoir(s) », an incomplete answer to an access request (dpo attack, item 9), and no empty
    gradebook made in its place; the control: the same export once it is back."""
    grader = graded_class_copy.grader
    db = grader / "gradebook.db"
    db.rename(tmp_path / "ailleurs.db")
    out = tmp_path / "out"
    proc = grading(grader, "learner_export", "ana", "--eleves", "eleves.csv", "--out", str(out))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"✘ Aucune donnée exportée\u00a0: le carnet de notes est introuvable ({db})" in (
        proc.stderr
    )
    assert not out.exists() and not db.exists()
    (tmp_path / "ailleurs.db").rename(db)
    members = _export(grader, "ana", out)  # the control
    assert json.loads(members["notes.json"])[0]["devoir"] == "oublier"


def test_an_unreadable_file_of_theirs_gives_no_export_that_looks_whole(graded_class_copy, tmp_path):
    """DPO's attack, stop 58: a file of mode 000 in their submission stopped the export on an
    English traceback and left donnees-ben-….zip, a valid zip without their work, under its
    final name (a teacher would send it as the answer). Refused in French, naming the file;
    nothing under an export's name; the control: the export once it is readable."""
    grader = graded_class_copy.grader
    secret = grader / "submitted" / "ben" / "oublier" / "illisible.txt"
    secret.write_bytes(b"s")
    secret.chmod(0)
    out = tmp_path / "out"
    args = ("ben", "--eleves", "eleves.csv", "--out", str(out))
    proc = grading(grader, "learner_export", *args, as_teacher=True)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Traceback" not in said, said
    assert f"✘ Aucune donnée exportée\u00a0: {secret} est illisible (permission refusée)" in said
    assert list(out.iterdir()) == []
    secret.chmod(0o600)
    # second attack, stop 58: a folder of hers unreadable gave a partial export, exit 0
    (grader / "submitted" / "ben" / "oublier" / "sous").mkdir()
    (grader / "submitted" / "ben" / "oublier" / "sous").chmod(0)
    proc = grading(grader, "learner_export", *args, as_teacher=True)
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "Aucune donnée exportée" in said and "sous" in said, said
    assert list(out.iterdir()) == []
    (grader / "submitted" / "ben" / "oublier" / "sous").chmod(0o700)
    # and a size limit reached (the disk full) is said in French, no archive left
    limited = run_tool(
        grader,
        "prlimit",
        "--fsize=3000",
        "--",
        sys.executable,
        "-m",
        "grading.learner_export",
        *args,
    )
    said = limited.stdout + limited.stderr
    assert limited.returncode == 2 and "Traceback" not in said, said
    assert "✘ Aucune donnée exportée" in said and "fichier trop grand" in said, said
    assert list(out.iterdir()) == []
    assert _export(grader, "ben", out)["rendus/oublier/illisible.txt"] == b"s"
