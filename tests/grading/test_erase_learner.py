"""Erase one learner from the class system (issue 22, point 7): `python -m grading.erase_learner`
(what `make oublier-eleve ID=…` runs) on a copy of a class graded by real nbgrader commands, with
every place a learner lives filled in (roster, gradebook, submitted/, autograded/, feedback/,
an LMS archive of several students and one of theirs alone, zip_collect's previous copies, the
quarantine, a data export, the exchange's inbound and released feedback, a backup).

The proof is the lessons' one: the same scan finds ben before, nothing after, and still finds
ana (the control) everywhere she was; the gradebook file keeps no byte of ben (while the same
deletion without VACUUM does: the check can see free pages); every other row of a real
`nbgrader export` is unchanged byte for byte; a second run changes nothing; nothing but ben's own
files, rows, members and line is deleted."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from graded_class import class_in
from grading_course import BIN, copy_course, grading, nbgrader, run_tool, tree_digest
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(900)]

ROSTER = (
    "identifiant;prénom;nom;courriel\r\n"
    "ana;Ana;Martin;ana.martin@exemple.fr\r\n"
    "ben;Ben;Durand;ben.durand@exemple.fr\r\n"
    "cyr;Cyr;Petit;\r\n"
    "dou;Dou;Leroy;\r\n"
)
EMAILS = {"ana": "ana.martin@exemple.fr", "ben": "ben.durand@exemple.fr"}


def _zip(path: Path, members: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2025, 3, 14, 17, 30, 0))
            zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)


def _members(path: Path) -> dict[str, tuple[tuple, int, bytes]]:
    with zipfile.ZipFile(path) as zf:
        return {i.filename: (i.date_time, i.external_attr, zf.read(i)) for i in zf.infolist()}


def _fill(course: Path, exchange: Path) -> dict[str, Path]:
    """The graded class copied in `course`, with every other place a learner lives filled in
    (its nbgrader exchange in `exchange`)."""
    from grading.backup import backup
    from grading.learner_export import export_learner
    from nbgrader.utils import notebook_hash

    grader = course / "grader"
    roster = grader / "eleves.csv"
    roster.write_bytes(ROSTER.encode("cp1252"))  # as Excel writes it on Windows
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        for sid, email in EMAILS.items():
            gb.update_or_create_student(sid, email=email)
    nb = {
        s: (grader / "submitted" / s / "oublier" / "oublier.ipynb").read_bytes()
        for s in ("ana", "ben", "cyr")
    }
    archive = grader / "downloaded" / "oublier" / "archive"
    _zip(
        archive / "classe.zip",
        {
            "ana/oublier.ipynb": nb["ana"],
            "ben/oublier.ipynb": nb["ben"],
            "ben/timestamp.txt": b"2025-03-16 06:00:00",
            "cyr/oublier.ipynb": nb["cyr"],
        },
    )
    _zip(archive / "ben.zip", {"oublier.ipynb": nb["ben"]})
    # hostile: an archive named after ben that holds ana's copy too (the member's folder decides)
    _zip(
        archive / "lot2" / "ben.zip",
        {"ana/oublier.ipynb": nb["ana"], "ben/oublier.ipynb": nb["ben"]},
    )
    kept = grader / "downloaded" / "oublier" / "remplaces"
    for sid in ("ana", "ben"):
        (kept / sid / "20250314-173000").mkdir(parents=True)
        (kept / sid / "20250314-173000" / "oublier.ipynb").write_bytes(nb[sid])
    quarantine = course / "grader" / "quarantaine" / "oublier" / "ben+oublier+2025-03-14 17:00:00"
    quarantine.mkdir(parents=True)
    (quarantine / "oublier.ipynb").write_bytes(nb["ben"])
    course_x = exchange / "memoire-tuteur"
    for sid in ("ana", "ben"):
        inbound = course_x / "inbound" / f"{sid}+oublier+2025-03-14 17:00:00.000000 UTC+abc"
        inbound.mkdir(parents=True)
        (inbound / "oublier.ipynb").write_bytes(nb[sid])
        secret = f"secret-{sid}"
        (grader / "feedback" / sid / "oublier" / "submission_secret.txt").write_text(secret)
        page = course_x / "feedback" / f"{notebook_hash(secret=secret, notebook_id='oublier')}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_bytes((grader / "feedback" / sid / "oublier" / "oublier.html").read_bytes())
    backup(roster=roster, grader_dir=grader)
    export_learner("ben", roster=roster, grader_dir=grader)
    return {"grader": grader, "roster": roster, "exchange": exchange, "archive": archive}


def _copy(template: dict[str, Path], dest: Path) -> dict[str, Path]:
    """A writable copy in `dest` of a class of this module (`template`, never written): its
    course and its exchange. No file of either names the folder it sits in (the backup, the
    learner's export and the erasure's registers neither: every tool is handed the class's
    folders), so the copy is the same class, elsewhere."""
    course, exchange = dest / "cours", dest / "echange"
    shutil.copytree(template["grader"].parent, course, symlinks=True)
    shutil.copytree(template["exchange"], exchange, symlinks=True)
    grader = course / "grader"
    archive = grader / template["archive"].relative_to(template["grader"])
    return {
        "grader": grader,
        "roster": grader / "eleves.csv",
        "exchange": exchange,
        "archive": archive,
    }


@pytest.fixture(scope="module")
def filled_class(tmp_path_factory) -> dict[str, Path]:
    """The run's graded class (graded_class.class_in) with every other place a learner lives
    filled in, made once for this module and never written: each test copies it (``classe``)."""
    base = tmp_path_factory.mktemp("classe-remplie")
    class_in(base / "cours")
    return _fill(base / "cours", base / "echange")


@pytest.fixture
def classe(filled_class, tmp_path) -> dict[str, Path]:
    """A test's own copy of the graded class with every other place a learner lives filled in."""
    return _copy(filled_class, tmp_path)


def _run(classe, *more: str):
    return grading(
        classe["grader"],
        "erase_learner",
        *more,
        "--eleves",
        str(classe["roster"]),
        "--echange",
        str(classe["exchange"]),
    )


def _scan(classe, sid: str):
    from grading.erase_learner import Setup, scan

    setup = Setup(grader_dir=classe["grader"], roster=classe["roster"], exchange=classe["exchange"])
    return scan(sid, setup)


def _export(grader: Path) -> list[str]:
    proc = nbgrader(grader, "export", "--to=export-controle.csv")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = (grader / "export-controle.csv").read_text(encoding="utf-8").splitlines()
    (grader / "export-controle.csv").unlink()
    return lines


def _raw(db: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.is_file())


PLACES = {
    "carnet de notes",
    "rendus",
    "copies notées",
    "retours",
    "copies remplacées",
    "quarantaine",
    "export de ses données",
    "archives reçues",
    "liste des élèves",
    "rapport",
    "échange nbgrader",
}


def _rows(path: Path) -> list[dict[str, str]]:
    import csv
    import io

    from grading.classroom.kept_columns import read_table

    table = read_table(path)
    text = path.read_bytes().decode(table.encoding)
    return list(csv.DictReader(io.StringIO(text, newline=""), delimiter=table.delimiter))


def _report_now(grader: Path) -> None:
    """notes.csv, rapport.html and grades.csv as the gradebook is now (as `make rapport` and
    `make export` write them)."""
    from grading.classroom.paths import load_config
    from grading.nbgrader_ext.late_penalty import rule_of_config
    from grading.nbgrader_ext.safe_export import SafeCsvExport
    from grading.report import class_table, write_report

    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        df = class_table(gb, "oublier", grader / "autograded")
        SafeCsvExport(to=str(grader / "grades.csv")).export(gb)
    write_report(df, grader / "rapport", "oublier", rule_of_config(load_config(grader)))


def _add_oral_column(path: Path) -> None:
    """An « oral » column, as a teacher adds one in a spreadsheet (same format otherwise)."""
    import csv
    import io

    from grading.classroom.kept_columns import read_table

    table = read_table(path)
    buf = io.StringIO(newline="")
    out = csv.writer(buf, delimiter=table.delimiter, lineterminator=table.line_end)
    ids = table.header.index("student_id")
    out.writerow([*table.header, "oral"])
    out.writerows([*row, f"oral de {row[ids]}"] for row in table.rows)
    path.write_bytes(buf.getvalue().encode(table.encoding))


@dataclass
class BenErased:
    """ben erased, with ana as the control, from a copy of the filled class as a teacher does
    it, and what each step showed on the way (what test_erase_with_control checks)."""

    classe: dict[str, Path]  # the class after the erasure: never written, copied (``_copy``)
    before: Any  # ben's scan before anything (grading.erase_learner.scan)
    control: Any  # ana's scan before anything
    export_before: list[str]  # a real `nbgrader export`, before the erasure
    naive: Path  # the gradebook file as it was just before the erasure, copied
    everything: dict[str, bytes]  # the course's files just before the erasure
    notebooks: dict[str, bytes]  # ana's and ben's submitted notebooks, before the erasure
    typos: dict[str, subprocess.CompletedProcess]  # the command on a mistyped id, by id
    dry: subprocess.CompletedProcess  # the dry run
    after_dry: dict[str, bytes]  # the course's files after the typos and the dry run
    done: subprocess.CompletedProcess  # the erasure, confirmed, ana the control


@pytest.fixture(scope="module")
def ben_erased(filled_class, tmp_path_factory) -> BenErased:
    """ben erased once for this module by the real command (``python -m grading.erase_learner``,
    what ``make oublier-eleve`` runs), after the scans, the teacher's report and spreadsheet
    column, two mistyped ids and a dry run, each step's result kept: test_erase_with_control
    checks them and the erased class, test_an_erased_learner_does_not_come_back starts from it.
    Never written: each test copies the erased class."""
    base = tmp_path_factory.mktemp("ben-efface")
    classe = _copy(filled_class, base)
    grader, course = classe["grader"], classe["grader"].parent
    before, control = _scan(classe, "ben"), _scan(classe, "ana")
    export_before = _export(grader)
    # the report as of the gradebook now (the fixture added e-mails after it was made), then
    # the teacher adds a column to notes.csv in a spreadsheet: it must survive the erasure
    _report_now(grader)
    _add_oral_column(grader / "rapport" / "notes.csv")
    naive = base / "naive.db"
    shutil.copy(grader / "gradebook.db", naive)
    everything = tree_digest(course)
    notebooks = {
        sid: (grader / "submitted" / sid / "oublier" / "oublier.ipynb").read_bytes()
        for sid in ("ana", "ben")
    }
    typos = {typo: _run(classe, typo, "--confirmer") for typo in ("bne", "Ben")}
    dry = _run(classe, "ben")
    after_dry = tree_digest(course)
    done = _run(classe, "ben", "--confirmer", "--temoin", "ana")
    return BenErased(
        classe, before, control, export_before, naive, everything, notebooks, typos, dry,
        after_dry, done,
    )  # fmt: skip


@pytest.mark.slow
def test_erase_with_control(ben_erased, tmp_path):
    """The erasure of ben with ana as the control (ben_erased: the steps a teacher takes, each
    one's result), then the erased class, copied here: nothing of ben, ana everywhere she was,
    the others' rows, members, lines and files as they were; a second run changes nothing."""
    erased = ben_erased
    before, control = erased.before, erased.control
    assert before.kinds() == PLACES | {"journal de notation"}
    assert control.kinds() == PLACES - {"quarantaine", "export de ses données"} | {
        "journal de notation"
    }
    # the logs are cleaned by the erasure itself (below): only the backup waits for its expiry
    assert [(p.kind, Path(p.where).name) for p in before.pending] == [
        ("sauvegarde", before.pending[0].where.rsplit("/", 1)[1]),
    ]
    logs = {Path(f.where).name for f in before.found if f.kind == "journal de notation"}
    assert logs == {"autograde.log", "feedback.log"}, logs
    scanned = erased.classe["grader"]  # the class the scans before were made in
    assert before.pending[0].where.startswith(str(scanned / "sauvegardes" / "sauvegarde-"))
    export_before = erased.export_before
    # the report was made as of the gradebook then, and the teacher's column added to notes.csv
    # (ben_erased): it must survive the erasure
    naive = Path(shutil.copy(erased.naive, tmp_path / "naive.db"))  # the control below writes
    everything = erased.everything
    nb_ana = erased.notebooks["ana"]

    # a typo, a wrong case: refused with the close ids, nothing done (issue 33, point 8)
    for typo, near in (("bne", "«\u00a0ben\u00a0»"), ("Ben", "«\u00a0ben\u00a0»")):
        proc = erased.typos[typo]
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"✘ Identifiant «\u00a0{typo}\u00a0» inconnu" in proc.stderr
        assert f"identifiant(s) proche(s)\u00a0: {near}" in proc.stderr, proc.stderr
        assert "rien à effacer" not in proc.stdout
    dry = erased.dry
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "essai à blanc" in dry.stdout and "Ben Durand, ben.durand@exemple.fr" in dry.stdout
    for kind in PLACES:
        assert f"  - {kind}\u00a0:" in dry.stdout, kind
    assert "sauvegarde-" in dry.stdout and "make sauvegarde CONFIRMER=1 GARDER=1" in dry.stdout
    assert erased.after_dry == everything  # a dry run touches nothing

    done = erased.done
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Preuve faite" in done.stdout
    # the erased learner is checked, the control is another learner: said apart (point 8)
    assert "Vérification de l'effacement\u00a0: «\u00a0ben\u00a0»" in done.stdout
    assert "Témoin (un autre élève, qui doit rester trouvé partout)\u00a0: «\u00a0ana" in (
        done.stdout
    )
    assert "Contrôle" not in done.stdout

    classe = _copy(erased.classe, tmp_path)  # the erased class, this test's own copy
    grader, course = classe["grader"], classe["grader"].parent
    notes, db = grader / "rapport" / "notes.csv", grader / "gradebook.db"
    # the same scan: nothing of ben, ana (the control) everywhere she was
    assert _scan(classe, "ben").found == []
    assert _scan(classe, "ana").kinds() == control.kinds()
    # no byte of ben in the gradebook file, free pages included; ana's are there
    raw = _raw(db)
    for token in (b"benBenDurand", EMAILS["ben"].encode()):
        assert token not in raw
    assert b"anaAnaMartin" in raw and EMAILS["ana"].encode() in raw
    # positive control of that check: the same deletion without VACUUM leaves ben in the file
    con = sqlite3.connect(naive)
    con.execute("PRAGMA secure_delete = OFF")
    con.execute("DELETE FROM student WHERE id = 'ben'")
    con.commit()
    con.close()
    assert b"benBenDurand" in naive.read_bytes()
    # every other learner's nbgrader export row unchanged, byte for byte
    export_after = _export(grader)
    assert export_after == [line for line in export_before if ",ben," not in line]
    assert len(export_after) == len(export_before) - 1
    # archives: ben's members gone, every other member the same name, date, attributes, bytes
    archive = classe["archive"]
    assert not (archive / "ben.zip").exists()
    assert _members(archive / "lot2" / "ben.zip") == {
        "ana/oublier.ipynb": ((2025, 3, 14, 17, 30, 0), 0o600 << 16, nb_ana)
    }
    members = _members(archive / "classe.zip")
    assert set(members) == {"ana/oublier.ipynb", "cyr/oublier.ipynb"}
    with zipfile.ZipFile(archive / "classe.zip") as zf:
        assert zf.testzip() is None
    # the roster: one line less, the others' bytes as they were (Windows-1252, CRLF)
    assert classe["roster"].read_bytes() == ROSTER.replace(
        "ben;Ben;Durand;ben.durand@exemple.fr\r\n", ""
    ).encode("cp1252")
    # the report is regenerated without ben, with the others, the teacher's column kept
    page = (grader / "rapport" / "rapport.html").read_text()
    kept = {r["student_id"]: r["oral"] for r in _rows(notes)}
    assert kept == {s: f"oral de {s}" for s in ("ana", "cyr", "dou")}, kept
    assert "gardée(s) «\u00a0oral\u00a0»" in done.stdout
    assert (
        "remplacée(s)" not in done.stdout
    )  # the others' generated values, regenerated as they were
    assert "<td>ben</td>" not in page and "<td>ana</td>" in page and "<td>cyr</td>" in page
    sheet = (grader / "rapport" / "notes-tableur.csv").read_bytes().decode("utf-8-sig")
    assert "\r\nben;" not in sheet and "\r\nana;" in sheet and "\r\ncyr;" in sheet
    # nothing else deleted or changed: only ben's files, and the files rewritten without him
    after = tree_digest(course)
    rewritten = {
        "grader/gradebook.db",
        "grader/eleves.csv",
        "grader/downloaded/oublier/archive/classe.zip",
        "grader/downloaded/oublier/archive/lot2/ben.zip",
        "grader/rapport/notes.csv",
        "grader/rapport/notes-tableur.csv",  # the same table for a French spreadsheet
        "grader/rapport/rapport.html",
        "grader/grades.csv",
        "grader/rapport/autograde.log",  # ben's mentions replaced, the rest as it was
        "grader/rapport/feedback.log",
        "grader/sauvegardes/effacements.json",  # there since the backup (empty), ben added
        "grader/effacements.json",  # the class's, there since the backup too: one key
    }
    for name, data in everything.items():
        if name in rewritten:
            continue
        if "/ben/" in f"/{name}" or "ben+" in name or "donnees-ben-" in name or "ben.zip" in name:
            assert name not in after, name
        else:
            assert after.get(name) == data, name
    register = {
        f"grader/{folder}{name}"
        for folder in ("", "sauvegardes/")
        for name in ("effacements.json", ".cle-effacements")
    }
    assert set(after) - register <= set(everything)
    # the exchange: ben's entries gone, ana's there
    inbound = sorted(
        p.name.split("+")[0] for p in (classe["exchange"] / "memoire-tuteur" / "inbound").iterdir()
    )
    assert inbound == ["ana"]
    assert len(list((classe["exchange"] / "memoire-tuteur" / "feedback").iterdir())) == 1

    # twice is harmless: nothing found, nothing changed, the control still found
    again = _run(classe, "ben", "--confirmer")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Aucune trace" in again.stdout and "témoin" in again.stdout
    assert "registre des effacements" in again.stdout
    assert tree_digest(course) == after


@pytest.mark.slow
def test_a_failure_is_named_and_the_rest_erased(classe):
    """A roster the tool cannot rewrite safely (UTF-16) is named; everything else is erased."""
    from grading.erase_learner import ErasureError, Setup, erase, scan

    data = ROSTER.encode("utf-16")
    classe["roster"].write_bytes(data)
    setup = Setup(grader_dir=classe["grader"], roster=classe["roster"], exchange=classe["exchange"])
    result = erase("ben", setup, confirm=True, control="ana")
    assert len(result.failures) == 2, result.failures
    assert "retirez la ligne 3 à la main" in result.failures[0]
    assert "encore trouvé après l'effacement\u00a0: liste des élèves" in result.failures[1]
    assert classe["roster"].read_bytes() == data
    # a control found nowhere proves nothing: refused before anything is erased
    with pytest.raises(ErasureError, match="Témoin «\u00a0personne\u00a0» trouvé nulle part"):
        erase("cyr", setup, confirm=True, control="personne")
    assert scan("cyr", setup).found  # nothing of cyr was erased
    assert {f.kind for f in result.after.found} == {"liste des élèves"}
    proc = _run(classe, "ben", "--confirmer")
    assert proc.returncode == 1 and "✘ 2 échec(s)" in proc.stderr


def test_a_failure_record_of_the_learner_is_dropped_whole(classe):
    """Attack (stop 53): make grade's record of failed submissions (echecs-autograde.json)
    kept the erased learner's entry under « [retiré] », with their submission's digest and
    time: a trace that still singles them out. Their entry is dropped whole; a classmate's
    stays as it was; so in the copy a stopped make grade left."""
    from grading.erase_learner import Setup, erase
    from grading.runs import known_failures

    grader = classe["grader"]
    record = grader / known_failures.FILE_NAME
    failed = {"ben": "notebook illisible", "ana": "délai dépassé"}
    known_failures.record(record, "oublier", grader / "submitted", failed, [])
    before = json.loads(record.read_text(encoding="utf-8"))["oublier"]
    # its next version, left by a make grade stopped between writing and renaming it (attack,
    # stop 53: named as a file to fix by hand, never erased): erased the same way
    leftover = grader / ".echecs-k3x9q1"
    leftover.write_bytes(record.read_bytes())
    setup = Setup(grader_dir=grader, roster=classe["roster"], exchange=classe["exchange"])
    result = erase("ben", setup, confirm=True, control="ana")
    assert not result.failures, result.failures
    assert json.loads(leftover.read_text(encoding="utf-8")) == {"oublier": {"ana": before["ana"]}}
    after = json.loads(record.read_text(encoding="utf-8"))
    assert after == {"oublier": {"ana": before["ana"]}}, after
    assert before["ben"]["fingerprint"] not in record.read_text(encoding="utf-8")


# the erasure as `make oublier-eleve` runs it, killed (`signal`) by its own process as it calls
# `function` of `module` with a last argument named `name` (any, if None): a real process
# stopped where a kill -9 or a Ctrl-C lands, at a chosen point
KILLED_AT = """
import os, runpy, signal, sys
from pathlib import Path
import {module} as module
real = module.{function}
def stopped(*args, **kwargs):
    if {condition}:
        os.kill(os.getpid(), signal.{signal})
    return real(*args, **kwargs)
module.{function} = stopped
sys.argv = ["erase_learner", *sys.argv[1:]]
runpy.run_module("grading.erase_learner", run_name="__main__")
"""


def _run_killed(classe, at: tuple[str, str, str | None], signal: str = "SIGKILL"):
    module, function, name = at
    condition = "True" if name is None else f"Path(args[-1]).name == {name!r}"
    code = KILLED_AT.format(module=module, function=function, condition=condition, signal=signal)
    args = ("ben", "--confirmer", "--temoin", "ana", "--eleves", str(classe["roster"]))
    args += ("--echange", str(classe["exchange"]))
    return run_tool(classe["grader"], str(BIN / "python"), "-c", code, *args)


def _leftovers(classe) -> list[str]:
    """The temporary files of an erasure anywhere in the class (course and exchange)."""
    folders = (classe["grader"].parent, classe["exchange"])
    return sorted(str(p) for f in folders for p in f.rglob("*") if p.name.endswith(".oubli"))


@pytest.mark.parametrize(
    "name", ["autograde.log", "classe.zip", "eleves.csv", "notes.csv", "grades.csv"]
)
def test_an_erasure_killed_while_it_rewrites_a_file_is_finished_by_running_it_again(classe, name):
    """Attack (stop 60): `make oublier-eleve ID=ben CONFIRMER=1` killed (kill -9) as it
    replaced a log, an archive, the roster or a report by its next version left that version
    (« .<name>.oubli ») beside it; run again, it rewrote it, the control's copy in it was gone
    and the proof failed (« le témoin n'est plus trouvé »), or the file was « à corriger à la
    main ». Run again, it now removes its own leftover, finishes and proves the erasure."""
    killed = _run_killed(classe, ("os", "replace", name))
    assert killed.returncode == -9, killed.stdout + killed.stderr
    # what names its next versions (« lot2/.ben.zip.oubli ») is no place of the learner
    assert (classe["grader"] / ".effacement-en-cours").is_file()
    dry = _run(classe, "ben")
    assert dry.returncode == 0 and ".effacement-en-cours" not in dry.stdout, dry.stdout
    proc = _run(classe, "ben", "--confirmer", "--temoin", "ana")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Preuve faite" in proc.stdout
    assert _leftovers(classe) == []
    assert not (classe["grader"] / ".effacement-en-cours").exists()
    assert not _scan(classe, "ben").found
    assert (proc := _run(classe, "ben", "--confirmer")).returncode == 0, proc.stderr


def test_a_teachers_file_named_as_a_leftover_is_never_deleted(classe):
    """A file that only has the name of the erasure's next version of a file (no erasure was
    stopped): never deleted nor overwritten; the erasure refuses, nothing erased."""
    mine = classe["grader"] / ".eleves.csv.oubli"
    mine.write_text("mes notes à moi\n", encoding="utf-8")
    roster = classe["roster"].read_bytes()
    proc = _run(classe, "ben", "--confirmer", "--temoin", "ana")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{mine} existe déjà" in proc.stderr and "Rien n'a été effacé" in proc.stderr
    assert mine.read_text(encoding="utf-8") == "mes notes à moi\n"
    assert classe["roster"].read_bytes() == roster
    assert _scan(classe, "ben").found


@pytest.mark.parametrize("signal", ["SIGKILL", "SIGINT"])
def test_the_teachers_column_survives_an_erasure_stopped_in_the_report(classe, signal):
    """Attack (stop 60): stopped (kill -9, Ctrl-C) after the report was written again without
    the learner and before the teacher's own column (« oral ») was put back in it, the erasure
    lost that column for good: run again, it found nothing of the learner and said all was
    well. The new report now replaces the old one only with the teacher's column in it."""
    notes = classe["grader"] / "rapport" / "notes.csv"
    _report_now(classe["grader"])
    _add_oral_column(notes)
    killed = _run_killed(
        classe, ("grading.classroom.kept_columns", "restore_hand_edits", None), signal
    )
    assert killed.returncode != 0, killed.stdout + killed.stderr
    if signal == "SIGINT":  # Ctrl-C: said in French, with what to do
        assert "interrompue (Ctrl-C)" in killed.stderr and "Relancez-la" in killed.stderr
        assert "Traceback" not in killed.stderr, killed.stderr
    proc = _run(classe, "ben", "--confirmer", "--temoin", "ana")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(notes)
    assert [r["oral"] for r in rows] == [f"oral de {r['student_id']}" for r in rows]
    assert {r["student_id"] for r in rows} == {"ana", "cyr", "dou"}
    assert _leftovers(classe) == []


VARIANT = "nom presque identique à son identifiant, à vérifier à la main"


def test_a_variant_of_the_id_is_never_passed_over(classe, capsys):
    """Attack: a copy of ben's work under a name that is his id but for the case or the Unicode
    form (``cp -a submitted/ben submitted/Ben``; ``ｂｅｎ``, fullwidth), in each place of one
    folder per learner, the exchange and the received archives, was found nowhere: « Preuve
    faite » with the copy still there. nbgrader tells those ids apart (maybe another learner's),
    so none is erased as his: each is listed « à vérifier à la main » by the scan and the dry
    run, the erasure refuses, a restore's erasure reports it and leaves it untouched; ana (the
    control) is unaffected; a variant the gradebook registers is said to be a learner. Then the
    same under names of its own (``ben.old``, ``ben ``, ``ben.``, ``ben`` with a zero width space
    or a soft hyphen, ``old_ben_copie``, ``zz/nested/ben``): each listed the same way, while a
    registered ``ben.x``'s folder and a ``benoit`` are not."""
    from grading.erase_learner import Setup, erase, main, scan

    grader, exchange = classe["grader"], classe["exchange"] / "memoire-tuteur"
    lot = classe["archive"] / "lot3"
    stamp = "oublier+2025-03-14 17:00:00"
    copies = {
        grader / "submitted" / "Ben": grader / "submitted" / "ben",
        grader / "autograded" / "BEN": grader / "autograded" / "ben",
        grader / "feedback" / "\uff42\uff45\uff4e": grader / "feedback" / "ben",
        grader / "downloaded" / "oublier" / "remplaces" / "Ben": (
            grader / "downloaded" / "oublier" / "remplaces" / "ben"
        ),
        grader / "quarantaine" / "oublier" / f"Ben+{stamp}": (
            grader / "quarantaine" / "oublier" / f"ben+{stamp}"
        ),
        exchange / "inbound" / f"Ben+{stamp}.000000 UTC+abc": (
            exchange / "inbound" / f"ben+{stamp}.000000 UTC+abc"
        ),
    }
    # a copy under a name of its own (« cp -a ben ben.old »): a variant once the invisible
    # characters and the trailing dots and spaces are dropped, a name that holds his id whole,
    # his very id in another folder
    for copy, place in (
        ("ben.old", "submitted"),
        ("ben ", "autograded"),
        ("ben.", "feedback"),
        ("ben\u200b", "submitted"),
        ("be\u00adn", "autograded"),
        ("old_ben_copie", "feedback"),
        ("zz/nested/ben", "submitted"),
    ):
        copies[grader / place / copy] = grader / place / "ben"
    # never his: a registered classmate whose id holds his (« ben.x »), a name that only holds
    # his letters (« benoit »); each a copy of cyr's folder, which does not name him
    with classe["roster"].open("ab") as roster:
        roster.write(b"ben.x;Bea;Xu;\r\n")
    others = [grader / "submitted" / name for name in ("ben.x", "benoit")]
    for other in others:
        shutil.copytree(grader / "submitted" / "cyr", other, symlinks=True)
    argv = ["ben", "--grader-dir", str(grader), "--eleves", str(classe["roster"])]
    argv += ["--echange", str(classe["exchange"]), "--temoin", "ana"]
    setup = Setup(grader_dir=grader, roster=classe["roster"], exchange=classe["exchange"])

    # the attack as found: the dry run names the copy, with its path and why; the erasure
    # refuses (CAVIARDER=1 too: the copy names him), nothing erased, no proof
    submitted = grader / "submitted" / "Ben"
    shutil.copytree(copies[submitted], submitted, symlinks=True)  # cp -a
    everything = tree_digest(grader.parent) | tree_digest(classe["exchange"])
    status, dry = main(argv), capsys.readouterr().out
    assert status == 0 and f"  - {VARIANT}\u00a0: {submitted} — «\u00a0Ben\u00a0» n'est" in dry
    status, refused = main([*argv, "--confirmer", "--caviarder"]), capsys.readouterr()
    assert status == 2 and "Preuve faite" not in refused.out, refused.out
    assert "Rien n'a été effacé\u00a0: «\u00a0ben\u00a0» (Ben Durand" in refused.err
    assert f"{VARIANT} ({submitted} — " in refused.err
    assert tree_digest(grader.parent) | tree_digest(classe["exchange"]) == everything

    # in every other place: the scan names each one; none is erased as his
    for copy, own in copies.items():
        if not copy.exists():
            shutil.copytree(own, copy, symlinks=True)
    nb = (grader / "submitted" / "ben" / "oublier" / "oublier.ipynb").read_bytes()
    _zip(lot / "bEn.zip", {"oublier.ipynb": nb})  # zip_collect gives it to « bEn »
    _zip(lot / "autres.zip", {"Ben/oublier.ipynb": nb})
    variants = {
        *map(str, copies),
        str(lot / "bEn.zip"),
        f"{lot / 'autres.zip'}\u00a0: Ben/oublier.ipynb",
    }

    def held() -> dict[str, Any]:
        return {str(p): tree_digest(p) for p in copies} | {
            n: (lot / n).read_bytes() for n in ("bEn.zip", "autres.zip")
        }

    kept, found = held(), scan("ben", setup).found
    named = {f.where: f for f in found if f.kind == VARIANT}
    assert set(named) == variants, sorted(named)
    assert not {f.where for f in found} & set(map(str, others)), sorted(named)
    assert named[str(grader / "submitted" / "ben.old")].detail.startswith(
        "«\u00a0ben.old\u00a0» contient «\u00a0ben\u00a0», comme le nom d'une copie\u00a0: "
    )
    assert named[str(grader / "submitted" / "zz" / "nested" / "ben")].detail.startswith(
        "un dossier «\u00a0ben\u00a0» rangé dans un autre dossier\u00a0: "
    )
    assert {f.action for f in named.values()} == {"by_hand"}
    assert not [f for f in found if f.action != "by_hand" and lot.name in f.where]

    # a restore's erasure (what is by hand does not hold it back, mentions redacted): his own
    # places erased, each variant untouched and a failure of the proof; ana, the control,
    # everywhere she was
    restore = Setup(grader, classe["roster"], classe["exchange"], redact=True)
    result = erase("ben", restore, confirm=True, control="ana", restoring=True)
    assert held() == kept and not (grader / "submitted" / "ben").exists()
    still = f"encore trouvé après l'effacement\u00a0: {VARIANT} ("
    assert len(result.failures) == len(variants), result.failures
    assert all(f.startswith(still) for f in result.failures), result.failures
    assert result.control_after.kinds() == result.control_before.kinds()
    assert VARIANT not in result.control_before.kinds()
    # a variant the gradebook registers (an old gradebook: the roster admits none) may be a
    # classmate: said so
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.update_or_create_student("BEN")
    again = {f.where: f.detail for f in scan("ben", setup).found if f.kind == VARIANT}
    assert again[str(grader / "autograded" / "BEN")].startswith(
        "«\u00a0BEN\u00a0» est aussi un élève inscrit (liste des élèves ou carnet de notes)"
        "\u00a0: c'est peut-être un autre élève"
    )
    assert "élève inscrit" not in again[str(grader / "submitted" / "Ben")]


def test_the_name_of_a_copy_of_a_learners_folder():
    """The rule of the test above, name by name: the same id once the case, the Unicode form,
    the invisible characters and the trailing dots and spaces are set aside; a name that holds
    it whole, bounded by what is neither a letter nor a digit, unless a registered learner's
    own (erasing « ana » is never held back by « ana.martin »'s folder) or only her letters."""
    from grading.classroom.class_places import id_variant, id_within

    spelled = [
        "complete ",
        "complete.",
        "complete\u200b",
        "comp\u00adlete",
        "Complete. .",
        "COMPLETE\ufeff",
    ]
    assert [n for n in spelled if not id_variant(n, "complete")] == []
    holding = [
        "complete.old",
        "old_complete_copie",
        "complete (2)",
        "Complete-2",
        "copie de complete",
    ]
    assert [n for n in holding if not id_within(n, "complete")] == []
    registered = {"ana", "ana.martin", "ana_b"}
    others = ["ana", "ana.martin", "ana_b", "banana", "anatole", "diana.x", "ANAïs"]
    assert [n for n in others if id_within(n, "ana", registered)] == []
    assert id_within("ana.martin.old", "ana", registered) and id_within("Ana_B", "ana", registered)
    assert not id_within(".DS_Store", "ds") and id_within(".ds_store.old", "ds")


@pytest.mark.slow
def test_hub_database_and_home(tmp_path, classe):
    """The hub part on a real JupyterHub database file (JupyterHub's own ORM) and real folders:
    found by name; without the hub's API it is named as a failure, never edited behind the hub's
    back; a home is erased only under the homes folder and only when not root's."""
    from grading.erase_learner import Setup, erase, scan
    from jupyterhub import orm

    hub_db = tmp_path / "jupyterhub.sqlite"
    session = orm.new_session_factory(f"sqlite:///{hub_db}")()
    session.add(orm.OAuthClient(identifier="jupyterhub"))
    for name in ("ana", "ben"):
        user = orm.User(name=name)
        session.add(user)
        session.commit()
        session.add(orm.Spawner(name="", user_id=user.id))
        session.commit()
        orm.APIToken.new(user=user)
    session.close()
    homes = tmp_path / "home"
    for name in ("ana", "ben"):
        (homes / name).mkdir(parents=True)
        (homes / name / "oublier.ipynb").write_text("{}")
    import dbm

    firstuse = tmp_path / "passwords.dbm"  # TLJH's FirstUseAuthenticator: dbm, key = user name
    with dbm.open(str(firstuse), "c", 0o600) as db:
        db[b"ana"], db[b"ben"] = b"$2b$12$hash-ana", b"$2b$12$hash-ben"
    if os.geteuid() == 0:
        os.chown(homes / "ben", 54321, 54321)  # a learner's home (uid without a passwd entry)
    setup = Setup(
        grader_dir=classe["grader"],
        roster=classe["roster"],
        exchange=classe["exchange"],
        hub_db=hub_db,
        homes=homes,
        firstuse_db=firstuse,
    )
    found = {f.kind: f for f in scan("ben", setup).found}
    assert found["base du hub"].detail == "utilisateur, 1 serveur(s), 1 jeton(s)"
    assert found["dossier personnel"].where == str(homes / "ben")
    assert {f.kind for f in scan("ana", setup).found} >= {"base du hub", "dossier personnel"}
    assert {f.kind for f in scan("ana", setup).found} >= {"mots de passe du hub (TLJH)"}
    result = erase("ben", setup, confirm=True, control="ana")
    # the hub's database is never edited behind the hub's back: named, left
    assert [f for f in result.failures if "API du hub" in f]
    # ana's home is root's here: a home owned by root is never erased (not a learner's)
    with dbm.open(str(firstuse), "r") as db:
        assert b"ben" not in db and db[b"ana"] == b"$2b$12$hash-ana"
    assert not (homes / "ben").exists()  # a learner's own home, directly under the homes
    assert (homes / "ana" / "oublier.ipynb").is_file()
    if os.geteuid() == 0:
        refused = erase("ana", setup, confirm=True, control="ben")
        assert any("dossier personnel" in f and "uid 0" in f for f in refused.failures)
        assert (homes / "ana" / "oublier.ipynb").is_file()
    con = sqlite3.connect(hub_db)
    assert con.execute("SELECT count(*) FROM users").fetchone()[0] == 2
    con.close()


@pytest.mark.hub
def test_hub_account_erased_through_the_rest_api(tmp_path, monkeypatch):
    """A real JupyterHub (venv's, 127.0.0.1, no server spawned, no Unix user), beside a course
    with no class yet: the scan finds ben's account through the REST API with an admin token,
    the erasure DELETEs it, ana's stays; the hub's journal and database free pages are listed
    as what cannot be erased at once."""
    import secrets
    import subprocess
    import sys
    import time

    import requests
    from grading.erase_learner import Setup, erase, scan
    from helpers import free_port, stop_pids

    port, hub_port, proxy_port = free_port(), free_port(), free_port()
    token = secrets.token_hex(32)
    config = tmp_path / "jupyterhub_config.py"
    config.write_text(
        f"""
c = get_config()  # noqa
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {{"ana", "ben"}}
c.JupyterHub.bind_url = "http://127.0.0.1:{port}"
c.JupyterHub.hub_bind_url = "http://127.0.0.1:{hub_port}"
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_port}"
c.ConfigurableHTTPProxy.pid_file = {str(tmp_path / "proxy.pid")!r}
c.JupyterHub.db_url = "sqlite:///{tmp_path / "jupyterhub.sqlite"}"
c.JupyterHub.cookie_secret_file = {str(tmp_path / "cookie_secret")!r}
c.JupyterHub.services = [{{"name": "effacement", "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "effacement", "scopes": ["admin:users"],
                            "services": ["effacement"]}}]
"""
    )
    bin_dir = Path(sys.executable).parent
    with open(tmp_path / "jupyterhub.log", "wb") as log:
        hub = subprocess.Popen(
            [str(bin_dir / "jupyterhub"), "-f", str(config)],
            cwd=tmp_path,
            env={"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    api = f"http://127.0.0.1:{port}/hub/api"
    headers = {"Authorization": f"token {token}"}
    try:
        deadline = time.monotonic() + 120
        while True:
            assert hub.poll() is None, (tmp_path / "jupyterhub.log").read_text()[-3000:]
            try:
                if requests.get(f"{api}/users/ana", headers=headers, timeout=5).ok:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, (tmp_path / "jupyterhub.log").read_text()[-3000:]
            time.sleep(0.5)
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", token)
        grader = copy_course(tmp_path / "cours")
        # the hub's exchange, as install-course-env.sh makes it (a missing one is refused)
        (tmp_path / "echange" / "memoire-tuteur").mkdir(parents=True)
        setup = Setup(
            grader_dir=grader,
            exchange=tmp_path / "echange",
            hub_url=api,
            hub_token=token,
            hub_db=tmp_path / "jupyterhub.sqlite",
        )
        kinds = {f.kind for f in scan("ben", setup).found}
        assert {"hub", "base du hub"} <= kinds
        result = erase("ben", setup, confirm=True, control="ana")
        assert result.failures == []
        assert requests.get(f"{api}/users/ben", headers=headers, timeout=10).status_code == 404
        assert requests.get(f"{api}/users/ana", headers=headers, timeout=10).status_code == 200
        assert {f.kind for f in result.control_after.found} >= {"hub", "base du hub"}
        pending = {p.kind for p in result.after.pending}
        assert "journaux du hub" in pending
        # the hub keeps the deleted row in its file's free pages until a VACUUM (hub stopped)
        left = b"ben" in (tmp_path / "jupyterhub.sqlite").read_bytes()
        assert left == ("base du hub (pages libres)" in pending), pending
        # a wrong token is named, nothing erased
        bad = Setup(grader_dir=grader, hub_url=api, hub_token="faux")
        with pytest.raises(Exception, match="jeton d'un administrateur"):
            scan("ana", bad)
    finally:
        proxy = (
            (tmp_path / "proxy.pid").read_text().strip()
            if (tmp_path / "proxy.pid").exists()
            else ""
        )
        stop_pids([hub.pid], grace=20)
        hub.wait(timeout=30)
        if proxy.isdigit():
            stop_pids([int(proxy)], grace=10)


def _grow_class(grader: Path, roster: Path, size: int) -> list[str]:
    """`size` learners from the graded ones: folders copied, gradebook rows copied with new ids
    (no regrading: the erasure is what is measured, not the grading)."""
    import uuid

    db = grader / "gradebook.db"
    con = sqlite3.connect(db)
    models = ["ana", "ben", "cyr"]
    added = []
    lines = []
    for k in range(size - 4):
        sid, model = f"eleve{k:02d}", models[k % 3]
        added.append(sid)
        lines.append(f"{sid};Prénom{k:02d};Nom{k:02d};{sid}@exemple.fr\r\n")
        for part in ("submitted", "autograded", "feedback"):
            shutil.copytree(grader / part / model, grader / part / sid)
        # a submission's secret is its own (it names its released feedback in the exchange)
        (grader / "feedback" / sid / "oublier" / "submission_secret.txt").unlink(missing_ok=True)
        con.execute(
            "INSERT INTO student (id, first_name, last_name, email) VALUES (?, ?, ?, ?)",
            (sid, f"Prénom{k:02d}", f"Nom{k:02d}", f"{sid}@exemple.fr"),
        )
        for sa in con.execute(
            "SELECT id, assignment_id, timestamp, extension FROM submitted_assignment "
            "WHERE student_id = ?",
            (model,),
        ).fetchall():
            sa_id = uuid.uuid4().hex
            con.execute(
                "INSERT INTO submitted_assignment VALUES (?, ?, ?, ?, ?)",
                (sa_id, sa[1], sid, sa[2], sa[3]),
            )
            for sn in con.execute(
                "SELECT * FROM submitted_notebook WHERE assignment_id = ?", (sa[0],)
            ).fetchall():
                sn_id = uuid.uuid4().hex
                con.execute(
                    "INSERT INTO submitted_notebook VALUES (?, ?, ?, ?, ?)",
                    (sn_id, sa_id, *sn[2:]),
                )
                for table in ("grade", "comment"):
                    for row in con.execute(
                        f"SELECT * FROM {table} WHERE notebook_id = ?", (sn[0],)
                    ).fetchall():
                        marks = ", ".join("?" * len(row))
                        con.execute(
                            f"INSERT INTO {table} VALUES ({marks})",
                            (uuid.uuid4().hex, sn_id, *row[2:]),
                        )
    con.commit()
    con.close()
    with open(roster, "ab") as fh:
        fh.write("".join(lines).encode("cp1252"))
    return added


@pytest.mark.slow
def test_class_of_30(classe, capsys):
    """An erasure in a class of 30 (the time is printed, never asserted: the machine is shared),
    with the same proof: nothing of eleve13, the control everywhere, the others' rows unchanged."""
    import time

    from grading.erase_learner import Setup, erase, scan

    grader = classe["grader"]
    added = _grow_class(grader, classe["roster"], 30)
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        assert len(gb.students) == 30
        assert (
            gb.find_submission("oublier", "eleve13").score
            == gb.find_submission("oublier", "ben").score
        )
    setup = Setup(grader_dir=grader, roster=classe["roster"], exchange=classe["exchange"])
    start = time.perf_counter()
    scan("eleve13", setup)  # one search of the whole class: the proof runs four
    one_scan = time.perf_counter() - start
    start = time.perf_counter()
    result = erase("eleve13", setup, confirm=True, control="eleve14")
    seconds = time.perf_counter() - start
    assert result.failures == [], result.failures
    assert {f.kind for f in result.before.found} == {
        "carnet de notes", "rendus", "copies notées", "retours", "liste des élèves",
    }  # fmt: skip
    assert result.after.found == []
    assert result.control_after.kinds() == result.control_before.kinds()
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        assert sorted(s.id for s in gb.students) == sorted(
            {"ana", "ben", "cyr", "dou", *added} - {"eleve13"}
        )
    with capsys.disabled():
        print(
            f"\neffacement d'un élève dans une classe de 30\u00a0: {seconds:.2f} s, dont une "
            f"recherche dans toute la classe\u00a0: {one_scan:.2f} s (la preuve en fait quatre)"
        )


@pytest.mark.parametrize("bad", ["", "..", "../grader", "ben/../ana", "ben\x00"])
def test_an_id_that_names_no_learner_is_refused(bad, capsys):
    """An id that is not one (path, control character) is refused before anything is read."""
    from grading.erase_learner import main

    assert main([bad, "--confirmer", "--grader-dir", "/nonexistent"]) == 2
    assert "refusé" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        ([], "argument obligatoire manquant\u00a0: IDENTIFIANT"),
        (["ben", "--garder-jours", "trente"], "--garder-jours attend un nombre, pas «\u00a0trente"),
        (["ben", "--conf"], "option abrégée --conf\u00a0: écrivez --confirmer"),  # refused
        (["ben", "--pas-une-option"], "argument(s) inconnu(s)\u00a0: --pas-une-option"),
        (
            ["ben", "--confirmer=oui"],
            "--confirmer ne prend pas de valeur («\u00a0oui\u00a0» donné)",
        ),
        (["ben", "--temoin"], "l'option --temoin attend une valeur"),
    ],
)
def test_command_line_errors_are_in_french(argv, expected, capsys):
    """argparse's own messages (« usage: », « the following arguments are required ») are the
    teacher's too: in French, with the exit status of a bad usage."""
    import re

    from grading.erase_learner import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert expected in err and err.startswith("usage\u00a0: python -m grading.erase_learner")
    assert not re.search(r"\b(error|required|unrecognized|invalid|expected|argument:)", err), err
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    out = capsys.readouterr().out
    assert stop.value.code == 0 and "afficher cette aide" in out and "options\u00a0:" in out
    assert "show this help" not in out and "positional" not in out


@pytest.mark.slow
def test_an_erased_learner_does_not_come_back(ben_erased, tmp_path):
    """Issue 33, point 2: after ben's erasure (ben_erased: the real command, confirmed, ana the
    control; the erased class copied here), the register (a keyed hash, no personal data)
    makes the teacher's master roster, a re-dropped LMS archive, his copy left in the exchange
    and a backup made before the erasure skip him, name him and fail; a re-enrolment the
    teacher confirms (REINSCRIRE) takes him back."""
    import hashlib
    import hmac
    import json
    import stat
    import tarfile

    from grading.privacy.backup_files import backups_in

    classe = _copy(ben_erased.classe, tmp_path)
    grader = classe["grader"]
    [(_, old_backup)] = backups_in(grader / "sauvegardes")  # made before the erasure
    master = tmp_path / "tableur-maitre.csv"
    master.write_bytes(ROSTER.encode("cp1252"))
    nb_ben, nb_ana = ben_erased.notebooks["ben"], ben_erased.notebooks["ana"]  # as submitted
    done = ben_erased.done
    assert done.returncode == 0, done.stdout + done.stderr
    # the outside sources the teacher must clean are named
    outside = ("l'ENT ou la plateforme", "tableur maître", "courriels", "l'historique git")
    for place in (*outside, "REINSCRIRE=ben"):
        assert place in done.stdout, place

    # the register: beside the gradebook and beside the backups, private, no personal data
    for folder in (grader, grader / "sauvegardes"):
        register, key = folder / "effacements.json", folder / ".cle-effacements"
        assert stat.S_IMODE(register.stat().st_mode) == 0o600
        assert stat.S_IMODE(key.stat().st_mode) == 0o600
        raw = register.read_bytes()
        for personal in (b"ben", b"Ben", b"Durand", EMAILS["ben"].encode()):
            assert personal not in raw.replace(b"effacements", b""), personal
        digest = hmac.new(bytes.fromhex(key.read_text()), b"ben", hashlib.sha256).hexdigest()
        assert [e["empreinte"] for e in json.loads(raw)["effaces"]] == [digest]

    # the teacher's master roster: ben skipped and named, the others registered, status 1
    imported = grading(grader, "roster_csv", str(master))
    assert imported.returncode == 1, imported.stdout + imported.stderr
    assert "effacé(s) à sa demande (RGPD), non inscrit(s)\u00a0: «\u00a0ben\u00a0»" in (
        imported.stdout
    )
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        assert sorted(s.id for s in gb.students) == ["ana", "cyr", "dou"]

    # the original LMS archive dropped again: ben named, not collected, the others are
    again = classe["archive"] / "classe-encore.zip"
    _zip(again, {"ana/oublier.ipynb": nb_ana, "ben/oublier.ipynb": nb_ben})
    zipped = grading(grader, "zip_collect", "oublier")
    assert zipped.returncode == 1, zipped.stdout + zipped.stderr
    erased = "classe-encore.zip\u00a0: ben/oublier.ipynb\u00a0: «\u00a0ben\u00a0» a été effacé(e)"
    assert erased in zipped.stdout, zipped.stdout
    assert re.search(r"effacé\(e\) le \d\d/\d\d/20\d\d à sa demande", zipped.stdout)
    assert not (grader / "submitted" / "ben").exists()

    # his copy still in the exchange: left there, never collected nor copied into the course
    inbound = classe["exchange"] / "memoire-tuteur" / "inbound"
    late = inbound / "ben+oublier+2025-03-15 09:00:00.000000 UTC+def"
    late.mkdir()
    (late / "oublier.ipynb").write_bytes(nb_ben)
    collected = grading(grader, "collect", "oublier", f"--Exchange.root={classe['exchange']}")
    assert collected.returncode == 1, collected.stdout + collected.stderr
    said = collected.stdout + collected.stderr
    assert f"{late.name}\u00a0: «\u00a0ben\u00a0» a été effacé(e)" in said, said
    assert "laissée dans l'échange" in said, said
    assert not (grader / "submitted" / "ben").exists()
    assert not list((grader / "quarantaine").rglob("ben+*"))

    # the backup made before the erasure, restored into a fresh course: ben erased again
    with tarfile.open(old_backup) as tar:
        assert "submitted/ben/oublier/oublier.ipynb" in tar.getnames()  # positive control
    fresh = copy_course(tmp_path / "neuf")
    roster = fresh / "eleves.csv"
    restored = grading(fresh, "backup", "restaurer", str(old_backup), "--eleves", str(roster))
    assert restored.returncode == 1, restored.stdout + restored.stderr
    assert "effacé(s) de nouveau de la classe restaurée\u00a0: «\u00a0ben\u00a0»" in (
        restored.stderr
    )
    assert not (fresh / "submitted" / "ben").exists() and (fresh / "submitted" / "ana").exists()
    assert b"ben" not in roster.read_bytes() and b"ana;Ana" in roster.read_bytes()
    with Gradebook(f"sqlite:///{fresh / 'gradebook.db'}") as gb:
        assert "ben" not in {s.id for s in gb.students}

    # the same backup restored with the re-enrolment confirmed: ben comes back, named
    again = copy_course(tmp_path / "neuf2")
    back = grading(
        again, "backup", "restaurer", str(old_backup), "--eleves", str(again / "eleves.csv"),
        "--reinscrire", "ben",
    )  # fmt: skip
    assert back.returncode == 0, back.stdout + back.stderr
    assert "Réinscrit(e) à votre demande, restauré(e) avec la classe\u00a0: «\u00a0ben" in (
        back.stdout
    )
    assert (again / "submitted" / "ben" / "oublier" / "oublier.ipynb").is_file()

    # the same backup copied alone (the disk with the registers lost): no register is found, so
    # nothing could tell an erased learner came back: refused, nothing written (DPO, point 5)
    usb = tmp_path / "cle-usb"
    usb.mkdir()
    alone = Path(shutil.copy(old_backup, usb))
    bare = copy_course(tmp_path / "neuf-sans-registre")
    args = ("backup", "restaurer", str(alone), "--eleves", str(bare / "eleves.csv"))
    refused = grading(bare, *args)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "Restauration refusée, rien n'a été écrit\u00a0: aucun registre des effacements" in (
        refused.stderr
    )
    assert "REGISTRE=" in refused.stderr and "CONFIRMER=1" in refused.stderr, refused.stderr
    assert not (bare / "gradebook.db").exists() and not (bare / "submitted").exists()
    # the register's folder named: checked, ben erased again
    named = grading(bare, *args, "--registre", str(grader / "sauvegardes"))
    assert named.returncode == 1, named.stdout + named.stderr
    assert "effacé(s) de nouveau de la classe restaurée\u00a0: «\u00a0ben\u00a0»" in named.stderr
    assert not (bare / "submitted" / "ben").exists() and (bare / "submitted" / "ana").exists()

    # a re-enrolment the teacher confirms: registered; every register keeps his erasure, with
    # its date, and adds the time of his re-enrolment (DPO attack, point 4)
    back = grading(grader, "roster_csv", str(master), "--reinscrire", "ben")
    assert back.returncode == 0, back.stdout + back.stderr
    assert "Réinscrit(e) à votre demande" in back.stdout
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        assert "ben" in {s.id for s in gb.students}

    def registered_as_reenrolled() -> None:
        for folder in (grader, grader / "sauvegardes"):
            [entry] = json.loads((folder / "effacements.json").read_bytes())["effaces"]
            key = bytes.fromhex((folder / ".cle-effacements").read_text())
            assert entry["empreinte"] == hmac.new(key, b"ben", hashlib.sha256).hexdigest()
            assert entry["date"] == entry["efface_le"][:10], entry
            assert entry["reinscrit_le"] > entry["efface_le"], entry

    registered_as_reenrolled()
    # the backup made before his erasure, restored after his re-enrolment: ben erased again
    later = copy_course(tmp_path / "neuf3")
    restored = grading(
        later, "backup", "restaurer", str(old_backup), "--eleves", str(later / "eleves.csv")
    )
    assert restored.returncode == 1, restored.stdout + restored.stderr
    assert "effacé(s) de nouveau de la classe restaurée\u00a0: «\u00a0ben\u00a0»" in (
        restored.stderr
    )
    assert not (later / "submitted" / "ben").exists() and (later / "submitted" / "ana").exists()
    with Gradebook(f"sqlite:///{later / 'gradebook.db'}") as gb:
        assert "ben" not in {s.id for s in gb.students}
    registered_as_reenrolled()  # that re-erasure is not a new erasure of him

    # control: his work since his re-enrolment, in a backup taken after it, is restored
    (grader / "submitted" / "ben" / "oublier").mkdir(parents=True)
    (grader / "submitted" / "ben" / "oublier" / "oublier.ipynb").write_bytes(nb_ben)
    saved = grading(grader, "backup", "sauvegarder", "--confirmer", "--eleves", str(master))
    assert saved.returncode == 0, saved.stdout + saved.stderr
    newest = backups_in(grader / "sauvegardes")[0][1]
    assert newest != old_backup
    since = copy_course(tmp_path / "neuf4")
    kept = grading(since, "backup", "restaurer", str(newest), "--eleves", str(since / "eleves.csv"))
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "effacé(s) de nouveau" not in kept.stderr, kept.stderr
    assert (since / "submitted" / "ben" / "oublier" / "oublier.ipynb").read_bytes() == nb_ben
    with Gradebook(f"sqlite:///{since / 'gradebook.db'}") as gb:
        assert "ben" in {s.id for s in gb.students}


def copies_before(grader: Path) -> bytes:
    return (grader / "submitted" / "ana" / "oublier" / "oublier.ipynb").read_bytes()


def _name_in_answer(path: Path, text: str) -> None:
    """A written answer (a Markdown cell) added to a notebook, as a classmate writes one."""
    import json

    nb = json.loads(path.read_bytes())
    nb["cells"].append({"cell_type": "markdown", "id": "binome", "metadata": {}, "source": text})
    path.write_text(json.dumps(nb, ensure_ascii=True), encoding="utf-8")


def test_mention_forms():
    """The forms the DPO's scan used: NFC/NFD, case, JSON ``\\u`` escapes, HTML entities;
    whole words only."""
    import unicodedata

    from grading.privacy.learner_places import _Who, mention_pattern

    pattern = mention_pattern(_Who("chloé", "Chloé", "Dupré", "chloe.dupre@exemple.fr"))
    for text in (
        "chloé",
        unicodedata.normalize("NFD", "Chloé Dupré"),
        "CHLOÉ DUPRÉ",
        "Dupré Chloé",
        '"Chlo\\u00e9 Dupr\\u00e9"',
        "Chlo&eacute; Dupr&#233;",
        "Chlo&#xe9; Dupr&#xE9;",
        "mailto:CHLOE.DUPRE@exemple.fr",
    ):
        assert pattern.search(text.encode()), text
    for text in ("chloée", "xchloé", "Dupréau", "chloe_dupre"):
        assert not pattern.search(text.encode()), text


@pytest.mark.slow
def test_a_classmate_naming_the_learner(classe, tmp_path):
    """Issue 33, point 3: ben's name and e-mail in ana's written answer (her submission, graded
    copy, feedback page and LMS archive) are found with file and cell; without CAVIARDER the
    erasure does not say « Preuve faite »; with it each mention is replaced by a fixed text in
    every copy, ana's grades unchanged."""
    grader = classe["grader"]
    answer = "Travail fait avec mon binôme Ben Durand (ben.durand@exemple.fr)."
    for part in ("submitted", "autograded"):
        _name_in_answer(grader / part / "ana" / "oublier" / "oublier.ipynb", answer)
    page = grader / "feedback" / "ana" / "oublier" / "oublier.html"
    page.write_bytes(page.read_bytes() + "<p>Binôme&nbsp;: BEN DURAND</p>".encode())
    nb_ana = (grader / "submitted" / "ana" / "oublier" / "oublier.ipynb").read_bytes()
    nb_cyr = (grader / "submitted" / "cyr" / "oublier" / "oublier.ipynb").read_bytes()
    members = {"ana/oublier.ipynb": nb_ana, "cyr/oublier.ipynb": nb_cyr}
    _zip(classe["archive"] / "classe.zip", members)
    imported = grading(grader, "roster_csv", str(classe["roster"]))  # make students: eleves.log
    assert imported.returncode == 0, imported.stdout + imported.stderr
    eleves_log = grader / "rapport" / "eleves.log"
    assert b"ben.durand@exemple.fr" in eleves_log.read_bytes()  # positive control
    export_before = _export(grader)

    dry = _run(classe, "ben")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    for where in ("submitted/ana/oublier/oublier.ipynb", "autograded/ana/oublier/oublier.ipynb"):
        line = f"  - mention dans le travail de «\u00a0ana\u00a0»\u00a0: {grader / where}"
        assert f"{line} — 2 mention(s), cellule " in dry.stdout, (line, dry.stdout)
    assert f"{page} — 1 mention(s)" in dry.stdout
    assert f"mention dans une archive\u00a0: {classe['archive'] / 'classe.zip'}\u00a0: ana/" in (
        dry.stdout
    )
    assert "journal de notation" in dry.stdout

    # without CAVIARDER nothing is erased: afterwards his name would be known nowhere
    kept = _run(classe, "ben", "--confirmer", "--temoin", "cyr")
    assert kept.returncode == 2, kept.stdout + kept.stderr
    assert "Rien n'a été effacé" in kept.stderr and "CAVIARDER=1" in kept.stderr
    assert "Preuve faite" not in kept.stdout and (grader / "submitted" / "ben").is_dir()
    assert (
        b"Ben Durand" in (grader / "submitted" / "ana" / "oublier" / "oublier.ipynb").read_bytes()
    )
    done = _run(classe, "ben", "--confirmer", "--caviarder", "--temoin", "cyr")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Preuve faite" in done.stdout
    copies = [grader / p / "ana" / "oublier" / "oublier.ipynb" for p in ("submitted", "autograded")]
    with zipfile.ZipFile(classe["archive"] / "classe.zip") as zf:
        member = zf.read("ana/oublier.ipynb")
    for data in [p.read_bytes() for p in copies] + [member]:
        assert b"Durand" not in data and b"ben.durand" not in data
        assert "mon bin\\u00f4me [retiré] ([retiré])".encode() in data
    assert b"BEN DURAND" not in page.read_bytes() and "[retiré]".encode() in page.read_bytes()
    # ana's grades: her nbgrader export row as it was
    assert _export(grader) == [line for line in export_before if ",ben," not in line]
    # the logs said to be cleaned are: no line of the class logs names ben any more
    logs = sorted((grader / "rapport").glob("*.log"))
    ben = re.compile(rb"(?<![A-Za-z0-9_])ben(?![A-Za-z0-9_])|Durand")
    assert eleves_log in logs and not [p for p in logs if ben.search(p.read_bytes())]
    assert b"ana.martin@exemple.fr" in eleves_log.read_bytes()  # the others' lines kept


def test_a_classmates_name_and_a_sqlite_row():
    """A classmate's own name is never a mention (« Chloé Roux » when erasing « chloé »: the
    id alone is), and in bytes that are not text her name and e-mail are found glued as SQLite
    stores a row; her short id is not (« benoît »), a long one is."""
    from grading.privacy.learner_places import _Who, mention_pattern

    her = _Who("chloé", "Chloé", "Dupré", "chloe.dupre@exemple.fr")
    classmate = _Who("chloe", "Chloé", "Roux", "chloe.roux@exemple.fr")
    pattern = mention_pattern(her, others=[classmate])
    text = "Avec Chloé Roux (chloe.roux@exemple.fr, chloe) et chloé.".encode()
    assert (
        pattern.sub(text, b"[X]")
        == "Avec Chloé Roux (chloe.roux@exemple.fr, chloe) et [X].".encode()
    )
    assert mention_pattern(her).count(text) == 2  # without the class: « Chloé » of Roux too
    row = "\x13chloéChloéDuprépchloe.dupre@exemple.fr\x00".encode()
    assert pattern.binary_count(row) >= 2 and pattern.count(row) == 0
    ben = mention_pattern(_Who("ben", "Ben", "Durand", ""))
    assert ben.binary_count("benoîtxbenx".encode()) == 0
    assert ben.binary_count(b"\x13benBenDurand\x00") == 1
    long_id = mention_pattern(_Who("abcdefghij012345"))
    assert long_id.binary_count(b"Mabcdefghij012345x") == 1
