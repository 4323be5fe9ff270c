"""Red-team attacks on `make oublier-eleve` (grading.erase_learner): each test is a hole found
by a hostile classmate, a careless teacher or an odd set-up, on a small class built in a few
seconds (course copy, a gradebook made with nbgrader's API, a roster, submitted folders; no
grading). Every test here failed on the code as first reviewed: they say what the docs promise
(« Rien d'autre que ses fichiers… n'est jamais effacé », « Preuve faite » only when nothing of
the learner is left)."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import sqlite3
import tarfile
import unicodedata
import zlib
from contextlib import closing
from pathlib import Path

import pytest
from grading_course import copy_course
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(300)]

ROSTER = (
    "identifiant;prénom;nom;courriel\n"
    "ana;Ana;Martin;ana.martin@exemple.fr\n"
    "ben;Ben;Durand;ben.durand@exemple.fr\n"
    "cyr;Cyr;Petit;\n"
)


@pytest.fixture(scope="module")
def petite_classe_template(tmp_path_factory) -> Path:
    """The small class, built once per module (its gradebook's creation starts nbgrader's
    ``alembic``): ana, ben, cyr registered, each with a submitted notebook; a roster; an
    exchange. Each test gets its own copy (``petite_classe``)."""
    base = tmp_path_factory.mktemp("petite-classe")
    grader = copy_course(base / "cours")
    (grader / "eleves.csv").write_text(ROSTER, encoding="utf-8")
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.update_or_create_student(
            "ana", first_name="Ana", last_name="Martin", email="ana.martin@exemple.fr"
        )
        gb.update_or_create_student(
            "ben", first_name="Ben", last_name="Durand", email="ben.durand@exemple.fr"
        )
        gb.update_or_create_student("cyr", first_name="Cyr", last_name="Petit")
    for sid in ("ana", "ben", "cyr"):
        folder = grader / "submitted" / sid / "oublier"
        folder.mkdir(parents=True)
        (folder / "oublier.ipynb").write_text(f'{{"copie de": "{sid}"}}')
    exchange = base / "echange"
    (exchange / "memoire-tuteur" / "inbound").mkdir(parents=True)
    (exchange / "memoire-tuteur" / "feedback").mkdir(parents=True)
    return base


@pytest.fixture
def petite_classe(petite_classe_template, tmp_path) -> dict[str, Path]:
    """A test's own copy of the small class (ana, ben, cyr; a roster; an exchange)."""
    for part in ("cours", "echange"):
        shutil.copytree(petite_classe_template / part, tmp_path / part, symlinks=True)
    grader = tmp_path / "cours" / "grader"
    exchange = tmp_path / "echange"
    return {
        "grader": grader,
        "roster": grader / "eleves.csv",
        "exchange": exchange,
        "tmp": tmp_path,
    }


def _setup(c, roster: Path | None = None):
    from grading.erase_learner import Setup

    return Setup(grader_dir=c["grader"], roster=roster or c["roster"], exchange=c["exchange"])


def _erase(c, sid: str, control: str = "cyr", roster: Path | None = None):
    from grading.erase_learner import erase

    return erase(sid, _setup(c, roster), confirm=True, control=control)


def _enrol(c, sid: str, first: str, last: str, email: str = "") -> None:
    """A learner added to the small class: her gradebook row and her roster line."""
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        gb.update_or_create_student(sid, first_name=first, last_name=last, email=email or None)
    with c["roster"].open("a", encoding="utf-8") as roster:
        roster.write(f"{sid};{first};{last};{email}\n")


def _copy_class(c, name: str = "avant") -> dict:
    """The small class as it is now, copied (course and exchange): a control erased there
    leaves the class itself untouched."""
    before = c["tmp"] / name
    shutil.copytree(c["tmp"] / "cours", before / "cours", symlinks=True)
    shutil.copytree(c["exchange"], before / "echange", symlinks=True)
    control = dict(c, grader=before / "cours" / "grader", exchange=before / "echange")
    control["roster"] = control["grader"] / "eleves.csv"
    return control


def _dry_run_in_two_gigabytes(c, sid: str) -> str:
    """``python -m grading.erase_learner`` (a dry run) as a teacher starts it, limited to 2 GiB
    of address space (a small hub's container): what it says."""
    import resource
    import subprocess

    from grading_course import BIN, tool_env

    command = [str(BIN / "python"), "-m", "grading.erase_learner", "--eleves", str(c["roster"])]
    command += ["--echange", str(c["exchange"]), "--temoin", "cyr", "--", sid]

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 2**30, 2 * 2**30))

    proc = subprocess.run(
        command,
        cwd=c["grader"],
        env=tool_env(BIN),
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=limited,
    )
    return proc.stdout + proc.stderr


def _bens_thanks_name(c, sid: str, name: str) -> bool:
    """Whether the class scan for `sid` finds Ben's notebook once it thanks « `name` »."""
    from grading.privacy.learner_places import scan

    notebook = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    notebook.write_text(f'{{"copie de": "ben", "merci": "{name}"}}', encoding="utf-8")
    return str(notebook) in {f.where for f in scan(sid, _setup(c)).found}


def _assert_proved(c, sid: str, what: str) -> None:
    """The erasure of `sid` in the small class is proved; else the test fails on `what` (the
    thing that blocked it) and the refusal's start."""
    from grading.erase_learner import ErasureError

    try:
        result = _erase(c, sid)
    except ErasureError as exc:
        pytest.fail(f"{what} bloque l'effacement de «\u00a0{sid}\u00a0»\u00a0: {str(exc)[:1500]}")
    assert not result.failures, result.failures


def _git(course: Path, *args: str) -> None:
    import subprocess

    git = ("git", "-c", "user.name=prof", "-c", "user.email=prof@exemple.fr")
    subprocess.run([*git, *args], cwd=course, check=True, capture_output=True)


def _clone(course: Path, *paths: str) -> None:
    """`course` made a git clone whose one commit holds `paths`, as the course shipped them."""
    _git(course, "init", "-q")
    _git(course, "add", *paths)
    _git(course, "commit", "-qm", "le cours tel qu'il est livré")


@pytest.mark.slow
def test_a_classmates_file_named_after_the_learner_is_kept(petite_classe):
    """ben names a file of his « ana.ipynb » (or the LMS extracted it so): erasing ana deletes
    ben's file (the stem rule of _scan_downloads), and the proof (control cyr) says « Preuve
    faite ». zip_collect itself would give ben/ana.ipynb to ben (named_regexp)."""
    base = petite_classe["grader"] / "downloaded" / "oublier"
    bens = [base / "extracted" / "ben" / "ana.ipynb", base / "archive" / "ben" / "ana.txt"]
    for path in bens:
        path.parent.mkdir(parents=True)
        path.write_text("le travail de ben")
    result = _erase(petite_classe, "ana")
    assert not result.failures  # « Preuve faite »…
    assert [p for p in bens if not p.exists()] == []  # …but ben's files are gone


@pytest.mark.slow
def test_nothing_outside_the_course_is_deleted_through_a_symlinked_folder(petite_classe):
    """The teacher points downloaded/oublier/extracted at a folder of theirs (another class,
    their downloads): rglob follows the link at its root, and erasing ana deletes the teacher's
    files outside the course. The linked folder, which the erasure never walks, is named for her
    to check: never a proof over it."""
    from grading.erase_learner import ErasureError

    outside = petite_classe["tmp"] / "autre-classe"
    (outside / "ana").mkdir(parents=True)
    (outside / "ana" / "bulletin.pdf").write_text("autre classe, autre Ana")
    (outside / "ana.txt").write_text("notes de l'enseignant")
    base = petite_classe["grader"] / "downloaded" / "oublier"
    base.mkdir(parents=True)
    (base / "extracted").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ErasureError, match="extracted — lien vers le dossier"):
        _erase(petite_classe, "ana")
    assert (outside / "ana" / "bulletin.pdf").exists()
    assert (outside / "ana.txt").exists()


@pytest.mark.slow
def test_released_feedback_is_erased_when_her_folders_are_already_gone(petite_classe):
    """Her released feedback (exchange feedback/<md5(secret + notebook)>.html) is found only
    through submission_secret.txt in submitted/autograded/feedback. If those folders are gone
    (removed by hand before, or a first run that failed after deleting them: « relancez »), the
    page stays while the command says « Preuve faite ». Her inbound copy holds the same secret
    (nbgrader submit writes it there)."""
    from nbgrader.utils import notebook_hash

    c = petite_classe
    x = c["exchange"] / "memoire-tuteur"
    inbound = x / "inbound" / "ana+oublier+2025-03-14 17:00:00.000000 UTC+abc"
    inbound.mkdir()
    (inbound / "oublier.ipynb").write_text("{}")
    (inbound / "submission_secret.txt").write_text("secret-ana")
    page = x / "feedback" / f"{notebook_hash(secret='secret-ana', notebook_id='oublier')}.html"
    page.write_text("<html>retour d'Ana : ses réponses, sa note</html>")
    import shutil

    shutil.rmtree(c["grader"] / "submitted" / "ana")
    result = _erase(c, "ana")
    assert not result.failures
    assert not page.exists(), "retour publié d'ana laissé dans l'échange, « Preuve faite » dite"


@pytest.mark.slow
def test_a_roster_that_is_not_there_is_an_error(petite_classe):
    """`make oublier-eleve ID=ben ELEVES=grader/eleve.csv` (typo, or the roster kept elsewhere):
    the roster is silently ignored, ben's line (name, e-mail) stays in grader/eleves.csv, and
    the command says « Preuve faite » with exit status 0."""
    from grading.erase_learner import main

    c = petite_classe
    rc = main(
        [
            "ben",
            "--confirmer",
            "--temoin",
            "cyr",
            "--eleves",
            str(c["grader"] / "eleve.csv"),
            "--echange",
            str(c["exchange"]),
            "--grader-dir",
            str(c["grader"]),
        ]
    )
    left = "ben.durand@exemple.fr" in c["roster"].read_text(encoding="utf-8")
    assert rc != 0 or not left, "ligne de ben laissée dans la liste, sortie 0"


@pytest.mark.slow
def test_a_gradebook_row_in_nfd_is_erased(petite_classe):
    """chloé registered in NFD (typed on macOS in formgrader, or `nbgrader autograde` run by hand
    on a folder from macOS): the scan asks `WHERE id = 'chloé'` in NFC only, so her row (name,
    e-mail) stays while the command says « Preuve faite »."""
    c = petite_classe
    nfd = unicodedata.normalize("NFD", "chloé")
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        gb.update_or_create_student(
            nfd, first_name="Chloé", last_name="Roux", email="chloe.roux@exemple.fr"
        )
    folder = c["grader"] / "submitted" / nfd / "oublier"
    folder.mkdir(parents=True)
    (folder / "oublier.ipynb").write_text("{}")
    result = _erase(c, "chloé")
    assert not result.failures
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        left = [s.id for s in gb.students if unicodedata.normalize("NFC", s.id) == "chloé"]
    assert left == [], "fiche de chloé (NFD) laissée dans le carnet de notes"


@pytest.mark.slow
def test_a_symlinked_submitted_folder_is_named(petite_classe):
    """submitted/ana is a link to where the teacher keeps the copies (another disk): the scan
    skips links (good: nothing outside is deleted), but says nothing either: her copy stays and
    the command says « Preuve faite » with exit status 0. It should at least be named."""
    c = petite_classe
    elsewhere = c["tmp"] / "disque" / "ana"
    (c["grader"] / "submitted" / "ana").rename(elsewhere.parent.mkdir() or elsewhere)
    (c["grader"] / "submitted" / "ana").symlink_to(elsewhere, target_is_directory=True)
    from grading.erase_learner import ErasureError

    with pytest.raises(ErasureError, match="est un lien") as refused:
        _erase(c, "ana")
    assert "submitted/ana" in str(refused.value) and "Rien n'a été effacé" in str(refused.value)
    assert (elsewhere / "oublier" / "oublier.ipynb").exists()  # the link is not followed
    assert (c["grader"] / "submitted" / "ben").exists()


@pytest.mark.slow
def test_a_wal_gradebook_read_meanwhile_keeps_no_byte_of_her(petite_classe):
    """A gradebook in WAL mode (journal_mode=wal) that another process reads meanwhile (the
    formgrader open, a report being made): VACUUM goes to the -wal, `wal_checkpoint(TRUNCATE)`
    is silently busy, and the main file keeps her old pages (her e-mail), while the command says
    « Preuve faite ». The proof cannot see it: after the erasure her name and e-mail are no
    longer known (roster line and gradebook row gone), so the rescan looks for her id only."""
    import sqlite3

    c = petite_classe
    db = c["grader"] / "gradebook.db"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode=wal").fetchone()[0] == "wal"
    con.close()
    reader = sqlite3.connect(db, isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM student").fetchone()
        result = _erase(c, "ana")
        raw = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.is_file())
    finally:
        reader.close()
    left = b"ana.martin@exemple.fr" in raw
    assert not left or result.failures, "courriel d'ana dans gradebook.db, « Preuve faite »"


@pytest.mark.slow
def test_a_home_of_someone_who_is_not_a_learner_is_kept(petite_classe):
    """A careless teacher types the id of the teaching assistant (« tom »: on the hub, not in the
    roster, the gradebook nor submitted/) with HOMES=/home CONFIRMER=1: his home is deleted (as
    his hub account would be with HUB_URL): nothing checks that the id is a learner's."""
    import os

    from grading.erase_learner import Setup, erase

    c = petite_classe
    homes = c["tmp"] / "home"
    (homes / "tom").mkdir(parents=True)
    (homes / "tom" / "preparation.ipynb").write_text("le cours de l'assistant")
    if os.geteuid() == 0:  # a home owned by root is refused: give it to a non-root owner
        os.chown(homes / "tom", 65534, 65534)
    setup = Setup(grader_dir=c["grader"], roster=c["roster"], exchange=c["exchange"], homes=homes)
    try:
        erase("tom", setup, confirm=True, control="cyr")
    except Exception:  # noqa: BLE001 — refusing is fine; deleting is not
        pass
    assert (homes / "tom" / "preparation.ipynb").exists(), "dossier personnel de tom effacé"


@pytest.mark.slow
def test_her_members_one_folder_deeper_in_an_archive_are_erased(petite_classe):
    """An ENT archive that puts each copy one folder deeper (ana/oublier/oublier.ipynb, a draft
    in ana/brouillon/): named_regexp reads the student as « oublier » / « brouillon », so her
    members are not hers for the scan; the archive keeps her notebooks while the command says
    « Preuve faite » (zip_collect skips those members: they stay in the archive)."""
    import zipfile

    c = petite_classe
    archive = c["grader"] / "downloaded" / "oublier" / "archive" / "ent.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ana/oublier/oublier.ipynb", b"copie d'Ana Martin")
        zf.writestr("ana/brouillon/essai.ipynb", b"brouillon d'Ana Martin")
        zf.writestr("ben/oublier/oublier.ipynb", b"copie de ben")
    result = _erase(c, "ana")
    assert not result.failures
    with zipfile.ZipFile(archive) as zf:
        left = [n for n in zf.namelist() if n.startswith("ana/")]
    assert left == [], f"membres d'ana laissés dans {archive.name}, « Preuve faite »"


@pytest.mark.slow
def test_a_witness_found_nowhere_stops_before_anything_is_erased(petite_classe):
    """TEMOIN=zoe (a typo, or a learner already erased): the dry run says « Témoin « zoe » :
    0 endroit(s) » with exit status 0 and no warning; the confirmed run then erases everything
    and only afterwards says the proof is impossible. The control is known before: a witness
    found nowhere should stop the command before it deletes (nothing can be re-done)."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    try:
        _erase(c, "ana", control="zoe")
    except ErasureError:
        pass
    assert (c["grader"] / "submitted" / "ana").exists(), "effacé sans témoin possible"


@pytest.mark.slow
def test_an_ambiguous_archive_member_is_named_not_guessed(petite_classe):
    """« ben/ana/oublier.ipynb »: in ben's folder, but zip_collect's regexp gives it to ana.
    Erasing either must not guess (deleting ben's file, or leaving ana's copy to be collected
    again): the member is named and nothing is erased."""
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    archive = c["grader"] / "downloaded" / "oublier" / "archive" / "lot.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ben/ana/oublier.ipynb", b"copie ?")
        zf.writestr("cyr/oublier.ipynb", b"copie de cyr")
    for sid in ("ana", "ben"):
        with pytest.raises(ErasureError, match="Membre ambigu.*ben/ana/oublier.ipynb"):
            _erase(c, sid)
    assert (c["grader"] / "submitted" / "ana").is_dir() and (
        c["grader"] / "submitted" / "ben"
    ).is_dir()


def _make_from(c, folder: str, *args: str):
    from grading_course import make
    from helpers import REPO

    course = c["grader"].parent
    for part in ("Makefile", "grader/grader.mk", "grader/Makefile"):
        if not (course / part).exists():
            shutil.copy(REPO / part, course / part)
    return make(course, *args, folder=folder, timeout=300)


# (id, refused by the tool): `"<>&` and the backquote never are ids
# (grading.classroom.ids.id_problem)
HOSTILE_IDS = [
    ("o'brien $HOME", False),
    ("-x", False),
    ("$(shell touch canari1)", False),
    ("a$$b;c", False),
    ("`touch canari2`", True),
    ('a"b $(shell touch canari3)', True),
]


@pytest.mark.slow
def test_an_id_with_shell_characters_reaches_the_tool_unchanged(petite_classe):
    """`make oublier-eleve ID=…` (from the root and from grader/, whose Makefile hands over to
    the root's) passes the id through make and its shell: a `$`, a quote, a backquote,
    `$(shell …)` or a leading « - » reach the tool as typed (it names exactly that id: no trace
    of it, or refused in French) and nothing else runs."""
    c = petite_classe
    for k, (sid, refused) in enumerate(HOSTILE_IDS):
        folder = "grader" if k % 2 else ""
        roster = "eleves.csv" if folder else "grader/eleves.csv"
        temoin = "TEMOIN=$(shell touch canari4)" if refused else "TEMOIN=cyr"
        proc = _make_from(c, folder, "oublier-eleve", f"ID={sid}", f"ELEVES={roster}", temoin)
        out = proc.stdout + proc.stderr
        # make echoes its command on one line, no line of a bare « \ » (issue 33, point 8)
        assert "erase_learner" in proc.stdout, out
        assert not [line for line in proc.stdout.splitlines() if line.strip() == "\\"], out
        if refused:
            assert proc.returncode != 0, out
            assert f"Identifiant «\u00a0{sid}\u00a0» refusé" in proc.stderr, out
        else:  # an id of nobody: named as typed, refused (issue 33, point 8), nothing erased
            assert proc.returncode == 2, out
            assert f"Identifiant «\u00a0{sid}\u00a0» inconnu" in proc.stderr, out
    # the id in the environment (ID=… make …), from grader/: handed over as is too
    from grading_course import make

    sid = "$(shell touch canari5) env"
    proc = make(c["grader"].parent, "oublier-eleve", folder="grader", extra_env={"ID": sid})
    assert f"Identifiant «\u00a0{sid}\u00a0» inconnu" in proc.stderr, proc.stdout + proc.stderr
    course = c["grader"].parent
    assert sorted(p.name for p in course.rglob("canari*")) == []
    assert (c["grader"] / "submitted" / "ana").is_dir()


def test_hand_added_columns_and_rows_of_a_report_survive_its_regeneration(tmp_path):
    """The teacher added « oral » and « remarque » columns and a « moyenne » row to notes.csv in
    a spreadsheet (saved back in Windows-1252 with `;`); the erasure regenerates the file from
    the gradebook: their columns come back row by row, ben's row goes with what was written in
    it, a hand-edited score is named as replaced, and so is a row the gradebook no longer has."""
    from grading.classroom.kept_columns import read_table, restore_hand_edits

    notes = tmp_path / "notes.csv"
    notes.write_bytes(
        (
            "student_id;score;oral;remarque\r\n"
            "ana;8;15;très bien\r\n"
            "ben;6;12;ben.durand@exemple.fr à relancer\r\n"
            "cyr;4;;\r\n"
            "dou;3;9;partie\r\n"
            ";6;12;moyenne\r\n"
        ).encode("cp1252")
    )
    before = read_table(notes)
    # what the generator writes back (UTF-8, `,`, its own line ends), ana's score regraded
    notes.write_text("student_id,score\nana,8\ncyr,5\n", encoding="utf-8")
    said = restore_hand_edits(notes, before, "ben")
    assert notes.read_text(encoding="utf-8") == (
        "student_id,score,oral,remarque\nana,8,15,très bien\ncyr,5,,\n,6,12,moyenne\n"
    )
    assert b"ben" not in notes.read_bytes()
    assert any("gardée(s) «\u00a0oral\u00a0», «\u00a0remarque\u00a0»" in n for n in said), said
    assert any("non reprise(s)\u00a0: «\u00a0dou\u00a0»" in n for n in said), said
    assert any("colonne «\u00a0score\u00a0»" in n and "«\u00a0cyr\u00a0»" in n for n in said)
    assert not any("ana" in n for n in said), said
    # nothing added by hand: the generated file is left as written, nothing said
    notes.write_text("student_id,score\nana,8\n", encoding="utf-8")
    plain = read_table(notes)
    assert restore_hand_edits(notes, plain, "ben") == []
    assert notes.read_text(encoding="utf-8") == "student_id,score\nana,8\n"


@pytest.mark.slow
def test_from_grader_a_target_named_like_its_folder_is_still_run(petite_classe):
    """After a grading, grader/rapport/ and grader/feedback/ exist: `cd grader && make rapport`
    answered « 'rapport' is up to date » and wrote no report (its catch-all pattern rule took
    the folder for the target). Every goal is handed over to the root Makefile."""
    c = petite_classe
    for name in ("rapport", "feedback", "oublier-eleve"):
        (c["grader"] / name).mkdir(exist_ok=True)
    proc = _make_from(c, "grader", "-n", "rapport", "feedback")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "up to date" not in out and "à jour" not in out, out
    assert "-m grading.rapport oublier" in proc.stdout, out
    assert "-m grading.feedback oublier" in proc.stdout, out


@pytest.mark.slow
def test_a_file_or_folder_named_like_the_erasure_register_is_searched(petite_classe):
    """ana's extracted work holds a folder « effacements.json » and cyr's a file of that name,
    both naming ben: the erasure register's names skip only the register itself (beside the
    gradebook), so both mentions are found and « Preuve faite » is not said while they stay
    (a shrink of the scan once skipped every folder of that name: the proof was given)."""
    from grading.privacy.erasure_register import REGISTER_NAME, record_erasure, registers_of
    from grading.privacy.learner_places import scan

    c = petite_classe
    extracted = c["grader"] / "downloaded" / "oublier" / "extracted"
    hidden = [
        extracted / "ana" / REGISTER_NAME / "notes.txt",
        extracted / "cyr" / REGISTER_NAME,
    ]
    texts = ["J'ai tout copié sur {}.", '{{"note": "J\'ai tout copié sur {}."}}']
    for path, text in zip(hidden, texts, strict=True):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.format("Ben Durand"), encoding="utf-8")
    record_erasure("dou", registers_of(c["grader"]))  # the real register, beside the gradebook
    assert (c["grader"] / REGISTER_NAME).is_file()
    mentions = {f.where for f in scan("ben", _setup(c)).found if f.action == "mention"}
    assert {str(p) for p in hidden} <= mentions, mentions
    assert str(c["grader"] / REGISTER_NAME) not in mentions
    from grading.erase_learner import ErasureError, erase

    with pytest.raises(ErasureError, match=r"nommé\(e\) dans 2 endroit"):
        _erase(c, "ben")
    read = [p.read_text(encoding="utf-8") for p in hidden]
    assert read == [t.format("Ben Durand") for t in texts]
    register = (c["grader"] / REGISTER_NAME).read_bytes()
    setup = dataclasses.replace(_setup(c), redact=True)
    result = erase("ben", setup, confirm=True, control="cyr")
    assert not result.failures, result.failures  # « Preuve faite »: now true
    assert [p.read_text(encoding="utf-8") for p in hidden] == [t.format("[retiré]") for t in texts]
    assert (c["grader"] / REGISTER_NAME).read_bytes() != register  # ben recorded, not redacted
    assert b"Durand" not in (c["grader"] / REGISTER_NAME).read_bytes()


def _sqlite_ok(path: Path) -> bool:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        return con.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.slow
def test_a_gradebook_copy_is_named_never_rewritten_and_no_proof_while_it_stays(petite_classe):
    """DPO attack, item 1: a copy of the gradebook (grader/gradebook-copie.db, one in cyr's
    submission, one zipped in cyr's folder, one gzipped) holds ben's row as SQLite stores it,
    fields side by side (``benBenDurandben.durand@exemple.fr``: no word boundary). The erasure
    said « Preuve faite » while it stayed, and CAVIARDER rewrote it byte by byte (« database
    disk image is malformed »). Now each is named as a file to delete by hand, never rewritten,
    and nothing is erased while one holds him; once the teacher deletes them, the proof is
    made. A SQLite file that names « benoît » only is not his (a short id is not searched
    glued to other letters)."""
    import gzip
    import hashlib
    import zipfile

    from grading.erase_learner import ErasureError, erase
    from grading.privacy.learner_places import scan

    c = petite_classe
    grader = c["grader"]
    source = grader / "gradebook.db"
    copies = [grader / "gradebook-copie.db", grader / "submitted" / "cyr" / "oublier" / "carnet.db"]
    for copy in copies:
        shutil.copy(source, copy)
    zipped = grader / "submitted" / "cyr" / "oublier" / "carnet.zip"
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(source, "carnet.db")
        zf.writestr("lisez-moi.txt", "rien de personnel")
    gzipped = grader / "vieux-carnet.db.gz"
    gzipped.write_bytes(gzip.compress(source.read_bytes()))
    held = [*copies, zipped, gzipped]
    # a classmate's own SQLite file (the TP is about SQLite) that names a « benoît », not ben
    other = grader / "submitted" / "ana" / "oublier" / "tuteur.db"
    import sqlite3

    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x TEXT)")
    con.execute("INSERT INTO t VALUES ('benoîtDurantel'), ('xbenx')")
    con.commit()
    con.close()
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in [*held, other]}

    found = scan("ben", _setup(c)).found
    by_hand = {f.where.split("\u00a0:")[0] for f in found if f.kind.endswith("à la main")}
    assert by_hand == {str(p) for p in held}, [(f.kind, f.where, f.action) for f in found]
    assert any(f.kind.startswith("base SQLite") for f in found)
    # cyr (no e-mail: « Cyr Petit », glued as SQLite keeps him) is found in the copies too,
    # but for him the copy in his own folder goes with his folder
    cyr = {f.where: f.kind for f in scan("cyr", _setup(c)).found}
    assert cyr[str(copies[0])] == "base SQLite à supprimer à la main", cyr
    assert cyr[str(gzipped)].endswith("à la main"), cyr
    assert cyr[str(grader / "submitted" / "cyr")] == "rendus" and str(copies[1]) not in cyr

    # the DPO's command line: make oublier-eleve … CONFIRMER=1 CAVIARDER=1
    args = ("ID=ben", "TEMOIN=cyr", "ELEVES=grader/eleves.csv", f"ECHANGE={c['exchange']}")
    proc = _make_from(c, "", "oublier-eleve", *args, "CONFIRMER=1", "CAVIARDER=1")
    assert proc.returncode == 2 and "Preuve faite" not in proc.stdout, proc.stdout + proc.stderr
    assert "base SQLite à supprimer à la main" in proc.stderr, proc.stderr
    setup = dataclasses.replace(_setup(c), redact=True)
    with pytest.raises(ErasureError, match="Rien n'a été effacé.*base SQLite") as refused:
        erase("ben", setup, confirm=True, control="cyr")
    assert str(copies[0]) in str(refused.value)
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in digests} == digests
    assert all(_sqlite_ok(p) for p in [*copies, other])
    assert (grader / "submitted" / "ben").is_dir()  # nothing erased

    for path in held:
        path.unlink()
    result = erase("ben", setup, confirm=True, control="ana")
    assert not result.failures, result.failures  # « Preuve faite », now true
    assert not (grader / "submitted" / "ben").exists()
    assert hashlib.sha256(other.read_bytes()).hexdigest() == digests[other]


@pytest.mark.slow
def test_a_mistyped_exchange_folder_is_refused(petite_classe):
    """DPO attack, item 12: `make oublier-eleve ECHANGE=<a folder that is not there>` ignored
    the exchange (her inbound copies and released feedback unseen) and could end on « Preuve
    faite ». Refused in French, exit 2, nothing erased; the right folder is accepted."""
    c = petite_classe
    common = ("oublier-eleve", "ID=ben", "ELEVES=grader/eleves.csv", "TEMOIN=cyr")
    for wrong in (c["tmp"] / "echnage", c["tmp"] / "echange" / "memoire-tuteur"):
        proc = _make_from(c, "", *common, f"ECHANGE={wrong}", "CONFIRMER=1")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Dossier d'échange introuvable" in proc.stderr or (
            "ne contient pas le dossier du cours «\u00a0memoire-tuteur\u00a0»" in proc.stderr
        ), proc.stderr
        assert "Rien n'a été effacé" in proc.stderr
        assert (c["grader"] / "submitted" / "ben").is_dir()
    proc = _make_from(c, "", *common, f"ECHANGE={c['exchange']}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Rien n'a été effacé (essai à blanc)" in proc.stdout


@pytest.mark.slow
def test_redaction_keeps_versioned_files_and_a_classmates_own_name(petite_classe):
    """DPO attack, item 3: CAVIARDER=1 rewrote the course's versioned files (README, ADMIN.md,
    grader.mk name example learners) and a classmate's own name: erasing « ana » turned
    classmate « Ana Roux » (id anne) into « [retiré] Roux ». Now the course's files as it ships
    them (course_files) are not searched, a file outside the class's data folders is named for
    the teacher, never rewritten, and a classmate's own id, name and e-mail stay."""
    from grading.erase_learner import ErasureError, erase
    from grading.privacy.learner_places import scan
    from helpers import REPO

    c = petite_classe
    grader = c["grader"]
    _enrol(c, "anne", "Ana", "Roux", "ana.roux@exemple.fr")
    docs, admin = grader / "README.md", grader / "hub" / "ADMIN.md"  # both name « ana »
    admin.parent.mkdir(exist_ok=True)
    for shipped in (docs, admin):
        shutil.copy(REPO / "grader" / shipped.relative_to(grader), shipped)
        assert re.search(rb"\bana\b", shipped.read_bytes())
    stray = grader / "notes-prof.txt"  # the teacher's own notes, not in a class folder
    stray.write_text("Ana Martin : à relancer.\n", encoding="utf-8")
    answer = grader / "submitted" / "cyr" / "oublier" / "binome.txt"
    answer.write_text(
        "Relu par Ana Roux (ana.roux@exemple.fr, anne) et par Ana.\n", encoding="utf-8"
    )
    versioned = {p: p.read_bytes() for p in (docs, admin)}

    found = scan("ana", _setup(c)).found
    where = {f.where: f.kind for f in found}
    assert str(docs) not in where and str(admin) not in where, where
    assert where.get(str(stray)) == "fichier hors des dossiers de la classe, à corriger à la main"
    assert where.get(str(answer)) == "mention dans le travail de «\u00a0cyr\u00a0»", where
    setup = dataclasses.replace(_setup(c), redact=True)
    with pytest.raises(ErasureError, match="notes-prof.txt"):
        erase("ana", setup, confirm=True, control="cyr")
    assert stray.read_bytes() == "Ana Martin : à relancer.\n".encode()
    stray.unlink()
    result = erase("ana", setup, confirm=True, control="cyr")
    assert not result.failures, result.failures
    assert answer.read_text(encoding="utf-8") == (
        "Relu par Ana Roux (ana.roux@exemple.fr, anne) et par [retiré].\n"
    )
    assert {p: p.read_bytes() for p in versioned} == versioned


@pytest.mark.slow
def test_a_backup_holding_a_gradebook_copy_in_a_classmates_folder_is_pending(petite_classe):
    """DPO attack, item 1 (the next backup): ben's row in a gradebook copy inside cyr's folder
    went into a backup that holds no folder, roster line or gradebook row of ben; the erasure
    did not list that backup among what to purge. Positive control: the same backup without
    the copy holds nothing of him."""
    from grading.backup import backup
    from grading.privacy.learner_places import _backup_holds, _Who

    c = petite_classe
    grader = c["grader"]
    copy = grader / "submitted" / "cyr" / "oublier" / "carnet.db"
    shutil.copy(grader / "gradebook.db", copy)
    shutil.rmtree(grader / "submitted" / "ben")
    c["roster"].write_text(ROSTER.replace("ben;Ben;Durand;ben.durand@exemple.fr\n", ""))
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.remove_student("ben")
    import sqlite3

    con = sqlite3.connect(grader / "gradebook.db")
    con.execute("VACUUM")
    con.close()
    ben = _Who("ben", "Ben", "Durand", "ben.durand@exemple.fr")
    with_copy, *_ = backup(dest_dir=c["tmp"] / "avec", roster=c["roster"], grader_dir=grader)
    copy.unlink()
    without, *_ = backup(dest_dir=c["tmp"] / "sans", roster=c["roster"], grader_dir=grader)
    assert _backup_holds(with_copy, ben)
    assert not _backup_holds(without, ben)
    # the same backup damaged mid-stream (zlib's « invalid block », not a gzip error): it may
    # hold him (None: damaged), never a traceback that stops the erasure
    data = without.read_bytes()
    damaged = c["tmp"] / "abimee.tar.gz"
    tries = ((o, p) for p in (bytes(4), b"\xff" * 4) for o in range(20, len(data) - 16, 7))
    for offset, noise in tries:
        damaged.write_bytes(data[:offset] + noise + data[offset + 4 :])
        try:
            with tarfile.open(damaged, "r:gz") as tar:
                for _ in tar:
                    pass
        except zlib.error:
            break
        except (OSError, tarfile.TarError, EOFError):
            continue
    else:
        pytest.fail("no offset gives zlib's error")
    assert _backup_holds(damaged, ben) is None


@pytest.mark.slow
def test_the_released_text_and_a_style_sheet_are_not_mentions(petite_classe):
    """DPO attack, item 3: the TP uses a sample learner's id as data (« alice »), so erasing
    the real alice counted the TP's own text in every classmate's copy as « mentions » and
    rewrote it; a feedback page's CSS (``max-width``) was a mention of « max ». A line of the
    released notebooks, and a style sheet, are the course's text: neither counted nor
    rewritten; what the classmate wrote about her is."""
    import json

    from grading.erase_learner import erase
    from grading.privacy.learner_places import scan

    c = petite_classe
    grader = c["grader"]
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    release.parent.mkdir(parents=True)
    given = "Les tests utilisent la base de `ana` (son `user_id`) et de `bob`."
    cell = {"cell_type": "markdown", "id": "c1", "metadata": {}, "source": [given + "\n"]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    release.write_text(json.dumps(nb), encoding="utf-8")
    written = "Relu avec Ana."
    mine = {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": [written]}
    copy = grader / "submitted" / "cyr" / "oublier" / "oublier.ipynb"
    copy.write_text(json.dumps({**nb, "cells": [cell, mine]}, indent=1), encoding="utf-8")
    page = grader / "feedback" / "cyr" / "oublier" / "oublier.html"
    page.parent.mkdir(parents=True)
    style = "<style>\n.ana-x, .y { max-width: 10px }\n</style>"
    hidden = "<style>/* Ana Martin */</style>"  # a name hidden in a style sheet is still found
    # the TP's line as nbconvert renders it in a feedback page
    shown = "Les tests utilisent la base de <code>ana</code> (son <code>user_id</code>) et de "
    shown += "<code>bob</code>."
    page.write_text(f"<html>{style}<p>{shown}</p><p>Bravo Ana</p>{hidden}</html>", encoding="utf-8")

    found = {f.where: f.detail for f in scan("ana", _setup(c)).found}
    assert found[str(copy)] == "1 mention(s), cellule 2", found
    assert found[str(page)] == "2 mention(s)", found  # neither its CSS nor the TP's line
    setup = dataclasses.replace(_setup(c), redact=True)
    result = erase("ana", setup, confirm=True, control="cyr")
    assert not result.failures, result.failures
    cells = json.loads(copy.read_text(encoding="utf-8"))["cells"]
    assert [x["source"] for x in cells] == [[given + "\n"], ["Relu avec [retiré]."]]
    text = page.read_text(encoding="utf-8")
    assert style in text and shown in text and "Bravo [retiré]" in text
    assert "<style>/* [retiré] */</style>" in text


@pytest.mark.slow
def test_the_default_witness_is_a_registered_learner(petite_classe):
    """DPO attack, point 6: ben's copy dropped in the wrong case (submitted/Ben/) is a folder
    name, not a learner: ``make oublier-eleve ID=ben`` without TEMOIN picked « Ben » as the
    control (uppercase sorts first), whose proof then failed. The default witness is another
    registered learner (roster or gradebook); one named with TEMOIN is still taken as given."""
    from grading_course import grading

    c = petite_classe
    stray = c["grader"] / "submitted" / "Ben" / "oublier"
    stray.mkdir(parents=True)
    shutil.copy(c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb", stray)
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    proc = grading(c["grader"], *base, "--", "ben")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    witness = "Témoin (un autre élève, la preuve que la recherche trouve) "
    [line] = [x for x in proc.stdout.splitlines() if x.startswith(witness)]
    assert line.startswith(f"{witness}«\u00a0ana\u00a0» (Ana Martin"), line
    # positive control: the same line names « Ben » when it is the witness
    named = grading(c["grader"], *base, "--temoin", "Ben", "--", "ben")
    assert f"{witness}«\u00a0Ben\u00a0»" in named.stdout, named.stdout + named.stderr


@pytest.mark.slow
def test_a_restore_erases_her_again_even_with_a_file_to_clean_by_hand(petite_classe):
    """Review of the DPO fixes: a SQLite file naming ana sat in cyr's folder when the backup was
    taken; the teacher deleted it as the erasure asked, and erased her. Restoring that backup
    (a disk lost): her re-erasure met the file to clean by hand, refused everything, and left
    her submissions, roster line and gradebook row restored. Now her own places are erased
    again and the file is named (a failure of the restore, exit 1); the control: cyr stays."""
    import sqlite3
    from contextlib import closing

    from grading.backup import backup, restore
    from grading.erase_learner import erase

    c = petite_classe
    grader = c["grader"]
    notes = grader / "submitted" / "cyr" / "oublier" / "notes.db"
    with closing(sqlite3.connect(notes)) as con:
        con.execute("CREATE TABLE t (nom TEXT)")
        con.execute("INSERT INTO t VALUES ('Ana Martin')")
        con.commit()
    folder = c["tmp"] / "sauv"
    archive, *_ = backup(folder, c["roster"], None, grader, confirm=True)
    notes.unlink()  # the teacher deletes it, as the erasure asks
    setup = dataclasses.replace(_setup(c), backups=folder)  # its register beside the backups
    assert not erase("ana", setup, confirm=True, control="cyr").failures
    fresh = copy_course(c["tmp"] / "neuf")
    _counts, done = restore(archive, fresh / "eleves.csv", None, fresh)
    assert done.erased == ["ana"], done
    assert not (fresh / "submitted" / "ana").exists()
    assert "ana" not in (fresh / "eleves.csv").read_text(encoding="utf-8")
    assert any("notes.db" in f for f in done.failures), done.failures
    assert (fresh / "submitted" / "cyr" / "oublier" / "notes.db").exists()  # never rewritten
    assert (fresh / "submitted" / "cyr").is_dir()  # the control


@pytest.mark.slow
def test_a_damaged_backup_is_to_delete_by_hand_before_the_erasure(petite_classe):
    """Review of the DPO fixes: a damaged backup (bytes zeroed mid-archive) was listed as
    expiring under the retention, but the purge never deletes a damaged backup: her full copy
    stayed for good after « Preuve faite ». Now it is a file to delete by hand, and nothing is
    erased while it stays; the control: once the teacher deletes it, the erasure is proved."""
    import os

    from grading.backup import backup
    from grading.erase_learner import ErasureError, erase

    c = petite_classe
    for i in range(10):  # some bulk, so that the damage lands in the compressed data
        (c["grader"] / "submitted" / "ben" / "oublier" / f"f{i}.txt").write_text(
            os.urandom(20000).hex()
        )
    folder = c["tmp"] / "sauv"
    archive, *_ = backup(folder, c["roster"], None, c["grader"], confirm=True)
    data = bytearray(archive.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 4] = bytes(4)
    archive.write_bytes(bytes(data))
    setup = dataclasses.replace(_setup(c), backups=folder)
    with pytest.raises(ErasureError, match="sauvegarde abîmée à supprimer à la main"):
        erase("ben", setup, confirm=True, control="cyr")
    assert (c["grader"] / "submitted" / "ben").is_dir()  # nothing erased
    archive.unlink()
    assert not erase("ben", setup, confirm=True, control="cyr").failures


@pytest.mark.slow
def test_a_course_without_git_keeps_its_own_text_out_of_the_mentions(petite_classe):
    """Review, point 1: a course downloaded as a zip has no .git, so its README and grader.mk
    counted as files outside the class's data folders; erasing « ana » (an example id of the
    README) was refused, the teacher told to delete the README. What the course ships is
    never a mention, with or without git; a teacher's notes naming her still are (control)."""
    from helpers import REPO

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    shutil.copy(REPO / "grader" / "README.md", grader / "README.md")
    assert not (course / ".git").exists()
    readme = (grader / "README.md").read_bytes()
    assert re.search(rb"\bana\b", readme)  # the README names « ana » as an example
    notes = grader / "notes-prof.txt"  # the teacher's own notes, not in a class folder
    notes.write_text("Ana Martin : à relancer.\n", encoding="utf-8")
    common = ("oublier-eleve", "ID=ana", "ELEVES=grader/eleves.csv", "TEMOIN=cyr")
    common += (f"ECHANGE={c['exchange']}",)
    proc = _make_from(c, "", *common)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "notes-prof.txt" in proc.stdout, proc.stdout
    shipped = ("README.md", "grader.mk", "Makefile")
    assert not [line for line in proc.stdout.splitlines() if line.endswith(shipped)], proc.stdout
    proc = _make_from(c, "", *common, "CONFIRMER=1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "notes-prof.txt" in proc.stderr and "README" not in proc.stderr, proc.stderr
    notes.unlink()
    proc = _make_from(c, "", *common, "CONFIRMER=1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Preuve faite" in proc.stdout
    assert (grader / "README.md").read_bytes() == readme


def test_what_the_course_ships_in_grader_is_every_file_git_tracks_there():
    """The erasure knows the course's own files by their content (course_files.txt, with or
    without git): a file the course ships in grader/ must be listed as it is, or an example id
    in it would stop every erasure of that learner; a file changed or gone must change or leave
    the list, or a teacher's file of that content would not be searched. To write it again:
    ``make course-files``."""
    from grading.privacy.course_files import LIST, listing
    from helpers import REPO

    assert LIST.read_text(encoding="utf-8") == listing(REPO / "grader")


@pytest.mark.slow
def test_a_teachers_file_beside_what_a_course_without_git_ships_is_searched(petite_classe):
    """Review (stop 42, left): in a course downloaded as a zip, what the course ships at the
    top of grader/ was never searched, so a class list the teacher keeps beside the hub's
    recipes, grader/hub/classe.csv naming ana, got « Preuve faite ». The course's list of its
    own files tells them apart: hers is named for the teacher; the course's own text there
    (ADMIN.md names « ana ») stays out (control)."""
    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    grader = c["grader"]
    assert not (grader.parent / ".git").exists()
    (grader / "hub").mkdir(exist_ok=True)
    shutil.copy(REPO / "grader" / "hub" / "ADMIN.md", grader / "hub" / "ADMIN.md")
    assert re.search(rb"\bana\b", (grader / "hub" / "ADMIN.md").read_bytes())
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there
    kept.unlink()
    assert not _erase(c, "ana").failures


@pytest.mark.slow
def test_a_gradebook_on_a_server_gets_the_unknown_id_check(petite_classe, postgres_cluster):
    """Review, point 2: with a PostgreSQL ``db_url`` the erasure skipped the check a SQLite
    gradebook gets first (an id of nobody refused, close ids as a hint) and told the teacher
    to remove that id by hand. The server's gradebook is read (without writing) for it; one
    that cannot be read (no driver, server down, no nbgrader tables) is refused in French,
    nothing erased. A gradebook reached through a SQLAlchemy URL (``sqlite+pysqlite``), not a
    file path, is the server case this machine can read: dan, registered there only, is found
    and sent to nbgrader; zzz is refused as unknown."""
    c = petite_classe
    grader = c["grader"]
    config = grader / "nbgrader_config.py"
    settings = config.read_text(encoding="utf-8")
    common = ("oublier-eleve", "ELEVES=grader/eleves.csv", "TEMOIN=cyr", "CONFIRMER=1")
    common += (f"ECHANGE={c['exchange']}",)
    url = postgres_cluster.creer_base("carnet_effacement").replace("+asyncpg", "")
    config.write_text(f"{settings}\nc.CourseDirectory.db_url = {url!r}\n", encoding="utf-8")
    for sid in ("zzz", "ana"):
        proc = _make_from(c, "", *common, f"ID={sid}")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Carnet de notes illisible" in proc.stderr, proc.stderr
        assert "Rien n'a été effacé" in proc.stderr and "db student remove" not in proc.stderr
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.update_or_create_student("dan", first_name="Dan", last_name="Roy")
    url = f"sqlite+pysqlite:///{grader / 'gradebook.db'}"
    config.write_text(f"{settings}\nc.CourseDirectory.db_url = {url!r}\n", encoding="utf-8")
    proc = _make_from(c, "", *common, "ID=zzz")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Identifiant «\u00a0zzz\u00a0» inconnu" in proc.stderr, proc.stderr
    proc = _make_from(c, "", *common, "ID=dan")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nbgrader db student remove dan --force" in proc.stderr, proc.stderr
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_teachers_file_inside_a_shipped_folder_of_a_git_clone_is_searched(petite_classe):
    """Review (attack2): the folders the course ships (grader/hub, grader/templates…) were
    never searched, so a class list the teacher keeps beside the hub's recipes (ADMIN.md runs
    ``cours-roster verifier classe.csv``), grader/hub/classe.csv naming ana, got « Preuve
    faite ». In a git clone what git does not track there is the teacher's: searched, named
    for the teacher; the course's own files there (ADMIN.md names « ana ») stay out."""

    import py_compile

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    (grader / "hub").mkdir(exist_ok=True)
    shutil.copy(REPO / "grader" / "hub" / "ADMIN.md", grader / "hub" / "ADMIN.md")
    _clone(course, "grader/hub", "grader/templates")
    assert re.search(rb"\bana\b", (grader / "hub" / "ADMIN.md").read_bytes())
    # untracked, the course's: roster.py as Python compiles it (its header names its source)
    py_compile.compile(str(grader / "hub" / "roster.py"), doraise=True)
    checkpoint = grader / "hub" / ".ipynb_checkpoints" / "ADMIN-checkpoint.md"  # ADMIN.md opened
    checkpoint.parent.mkdir()  # in JupyterLab: its copy, the course's text
    shutil.copy(grader / "hub" / "ADMIN.md", checkpoint)
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there
    kept.unlink()  # the control: without the teacher's file, the course's own text is no mention
    assert not _erase(c, "ana").failures


def test_a_course_file_the_teacher_changed_and_a_teachers_script_are_searched(petite_classe):
    """Review (stop 43): in a clone, a file the course ships that the teacher changed (a note
    naming ana added to nbgrader_config.py) and a script of the teacher's (grader/notes.py: every
    .py outside the data folders counted as the course's code) were never searched: « Preuve
    faite » while they named her. Both are named for the teacher now; the control: the same
    files as the course ships them, and no script, are no mention."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader/nbgrader_config.py")
    shipped = config.read_bytes()
    assert not re.search(rb"\bana\b", shipped)
    config.write_bytes(shipped + b"\n# ana : tiers-temps, voir avec la vie scolaire\n")
    script = grader / "notes.py"
    script.write_text('BONUS = {"ana": 2}\n', encoding="utf-8")
    with pytest.raises(ErasureError) as refused:
        _erase(c, "ana")
    assert "nbgrader_config.py" in str(refused.value) and "notes.py" in str(refused.value)
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there
    config.write_bytes(shipped)  # the control: the course's file as shipped, no script
    script.unlink()
    assert not _erase(c, "ana").failures


@pytest.mark.slow
def test_a_server_gradebook_that_cannot_be_read_is_refused_without_its_password(petite_classe):
    """Review (attack2): a server ``db_url`` the erasure cannot read is refused in French,
    nothing erased; the message named the URL whole when it had no « @ » (a password in its
    query, libpq's way), and an async driver (``postgresql+asyncpg``, the tutor's URL copied)
    gave SQLAlchemy's English « greenlet_spawn has not been called »."""
    c = petite_classe
    config = c["grader"] / "nbgrader_config.py"
    settings = config.read_text(encoding="utf-8")
    urls = {
        "postgresql+psycopg2:///carnet?host=/nulle-part&password=S3cret": "carnet",
        "postgresql+asyncpg://prof:S3cret@localhost:1/carnet": "pilote asynchrone",
    }
    for url, said in urls.items():
        config.write_text(f"{settings}\nc.CourseDirectory.db_url = {url!r}\n", encoding="utf-8")
        proc = _make_from(c, "", "oublier-eleve", "ID=ana", "CONFIRMER=1", "TEMOIN=cyr")
        out = proc.stdout + proc.stderr
        assert proc.returncode == 2, out
        assert "Carnet de notes illisible" in out and said in out, out
        assert "S3cret" not in out and "greenlet" not in out, out
        assert (c["grader"] / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_course_file_the_teacher_changed_and_committed_is_still_searched(petite_classe):
    """Review of 57b1f0d: a file the course ships that the teacher changed is searched only
    while git sees it modified (``git ls-files -m``: the working tree against the index). A
    teacher who keeps their class in their own clone commits their changes (a note naming ana
    in nbgrader_config.py, a script grader/notes.py): both are then « the course's files, as git
    has them », never searched, and ``make oublier-eleve ID=ana CONFIRMER=1`` erases her and says
    « Preuve faite » while both still name her. The positive control: the same files, changed
    but not yet committed, are named by the dry run."""

    from grading_course import grading

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader/nbgrader_config.py")
    config.write_bytes(config.read_bytes() + b"\n# ana : tiers-temps, voir avec la vie scolaire\n")
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    # positive control: changed, not committed, the dry run names it
    dry = grading(grader, *base, "--temoin", "cyr", "--", "ana")
    assert "nbgrader_config.py" in dry.stdout + dry.stderr, dry.stdout + dry.stderr
    # the teacher commits their class's settings and a script of theirs
    (grader / "notes.py").write_text('BONUS = {"ana": 2}\n', encoding="utf-8")
    _git(course, "add", "grader/notes.py")
    _git(course, "commit", "-qam", "ma classe")
    proc = grading(grader, *base, "--temoin", "cyr", "--confirmer", "--", "ana")
    out = proc.stdout + proc.stderr
    assert re.search(rb"\bana\b", config.read_bytes())  # she is still named there
    assert "nbgrader_config.py" in out and "notes.py" in out, out
    assert proc.returncode != 0, out
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there


@pytest.mark.slow
def test_a_server_url_with_a_mistyped_port_is_refused_in_french(petite_classe):
    """Review of the one gradebook reader (fe2738a): a server ``db_url`` whose port is mistyped
    (``:54x``) makes SQLAlchemy raise ValueError, which ``gradebook_rows`` lets through (its
    ``suppress`` around ``make_url`` only stops ArgumentError): ``make oublier-eleve`` ended on a
    Python traceback where the erasure's own reader (``_server_students``, removed) refused in
    French, « Carnet de notes illisible … Rien n'a été effacé ». The control: the same URL with
    a port that parses is refused in French."""
    c = petite_classe
    config = c["grader"] / "nbgrader_config.py"
    settings = config.read_text(encoding="utf-8")
    for url in (
        "postgresql://prof:S3cret@localhost:1/carnet",
        "postgresql://prof:S3cret@localhost:54x/carnet",
    ):
        config.write_text(f"{settings}\nc.CourseDirectory.db_url = {url!r}\n", encoding="utf-8")
        proc = _make_from(c, "", "oublier-eleve", "ID=ana", "CONFIRMER=1", "TEMOIN=cyr")
        out = proc.stdout + proc.stderr
        assert "Traceback" not in out, out
        assert proc.returncode == 2, out
        assert "Carnet de notes illisible" in out and "S3cret" not in out, out
        assert (c["grader"] / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_password_holding_an_at_sign_is_never_shown(petite_classe):
    """Review of the one gradebook reader (fe2738a, 4ac32ae): ``server_name`` keeps what follows
    the last « @ » of the whole URL, and the reason is cleaned of the password only as
    SQLAlchemy parsed it. A password holding an « @ » (``S3cret@Ecole2024``, in the query
    libpq's way, or typed unencoded before the host) then shows its tail: « le carnet de notes
    est illisible (Ecole2024 : … » from ``make grade`` (gradebook_problem, which said nothing
    of a server before) and from ``make oublier-eleve``, or in the driver's « failed to resolve
    host 'Ecole2024@localhost' ». The control: the same command names a password without « @ »
    nowhere, and says the gradebook cannot be read."""
    from grading_course import grading

    c = petite_classe
    config = c["grader"] / "nbgrader_config.py"
    settings = config.read_text(encoding="utf-8")
    urls = {
        "postgresql:///carnet?host=/nulle-part&password=S3cret": "S3cret",  # the control
        "postgresql:///carnet?host=/nulle-part&password=S3cret@Ecole2024": "Ecole2024",
        "postgresql://prof:S3cret@Ecole2024@localhost:1/carnet": "Ecole2024",
    }
    for url, secret in urls.items():
        config.write_text(f"{settings}\nc.CourseDirectory.db_url = {url!r}\n", encoding="utf-8")
        graded = grading(c["grader"], "autograde", "oublier")
        erased = _make_from(c, "", "oublier-eleve", "ID=ana", "TEMOIN=cyr")
        for proc in (graded, erased):
            out = proc.stdout + proc.stderr
            assert proc.returncode == 2, (url, out)
            assert "illisible" in out, (url, out)
            assert secret not in out and "S3cret" not in out, (url, out)


@pytest.mark.slow
def test_jupyters_checkpoint_of_the_class_list_is_searched(petite_classe):
    """Found in review (before this change too): the teacher edits grader/eleves.csv in
    JupyterLab (``make formgrader`` opens it on the course), which keeps its copy in
    grader/.ipynb_checkpoints/eleves-checkpoint.csv; ``.ipynb_checkpoints`` at the top of grader/
    is never searched (``_NOT_DATA``), so ``make oublier-eleve ID=ana CONFIRMER=1`` says
    « Preuve faite » while that copy still holds her line (name and e-mail). The control: the
    same copy in a data folder (rapport/.ipynb_checkpoints/) is listed by the dry run."""
    from grading_course import grading

    c = petite_classe
    grader = c["grader"]
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    base += ("--temoin", "cyr")
    roster = c["roster"].read_bytes()
    control = grader / "rapport" / ".ipynb_checkpoints" / "eleves-checkpoint.csv"
    control.parent.mkdir(parents=True)
    control.write_bytes(roster)
    dry = grading(grader, *base, "--", "ana")  # the control: listed by the dry run
    assert "rapport/.ipynb_checkpoints/eleves-checkpoint.csv" in dry.stdout, dry.stdout + dry.stderr
    control.unlink()
    checkpoint = grader / ".ipynb_checkpoints" / "eleves-checkpoint.csv"
    checkpoint.parent.mkdir()
    checkpoint.write_bytes(roster)
    dry = grading(grader, *base, "--", "ana")
    assert "eleves-checkpoint.csv" in dry.stdout, dry.stdout + dry.stderr
    proc = grading(grader, *base, "--confirmer", "--", "ana")
    out = proc.stdout + proc.stderr
    assert b"ana.martin@exemple.fr" in checkpoint.read_bytes()  # she is still there
    assert proc.returncode != 0 and "Preuve faite" not in out, out


@pytest.mark.slow
def test_a_class_list_beside_the_hubs_recipes_is_searched_when_git_will_not_answer(
    petite_classe,
):
    """Found in review of 57b1f0d: what the course ships is told from the teacher's files by
    ``git ls-files``; when git refuses to answer (a clone owned by the teacher's account, the
    erasure run by root without sudo: « detected dubious ownership », exit 128), ``_tracked``
    returns nothing and the scan takes the clone for a zip download: nothing in grader/hub is
    searched, and ``make oublier-eleve ID=ana CONFIRMER=1`` says « Preuve faite » while the
    class list the teacher keeps there (grader/hub/classe.csv) still names her. The control:
    the same clone owned by the user who runs the erasure names classe.csv."""
    import os
    import subprocess

    from grading_course import grading
    from helpers import REPO

    if os.geteuid() != 0:
        pytest.skip("root gives the clone to another account (chown)")
    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    (grader / "hub").mkdir(exist_ok=True)
    shutil.copy(REPO / "grader" / "hub" / "ADMIN.md", grader / "hub" / "ADMIN.md")
    _clone(course, "grader/hub")
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    base += ("--temoin", "cyr")
    dry = grading(grader, *base, "--", "ana")  # the control: the clone is root's own
    assert "hub/classe.csv" in dry.stdout, dry.stdout + dry.stderr
    subprocess.run(["chown", "-R", "4242:4242", str(course)], check=True)  # the teacher's
    proc = grading(grader, *base, "--confirmer", "--", "ana")
    out = proc.stdout + proc.stderr
    assert kept.is_file() and b"ana.martin" in kept.read_bytes()  # she is still there
    assert "classe.csv" in out, out
    assert proc.returncode != 0, out


def test_a_course_file_the_teacher_changed_and_staged_is_searched(petite_classe):
    """Review2: in a clone, a course file the teacher changed is searched only while git says
    it is modified in the work tree (``git ls-files -m``): once the teacher runs ``git add``
    (or commits the change in her fork), the note naming ana in nbgrader_config.py is « as git
    has it » and never searched, « Preuve faite » while it names her. The README promises « dans
    un clone git, un fichier du cours que vous avez modifié (une note ajoutée à
    nbgrader_config.py) l'est aussi ». Control: the same note unstaged is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader")
    shipped = config.read_bytes()
    assert not re.search(rb"\bana\b", shipped)
    config.write_bytes(shipped + b"\n# ana : tiers-temps, voir avec la vie scolaire\n")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):  # control: unstaged, named
        _erase(c, "ana")
    _git(course, "add", "grader/nbgrader_config.py")  # the same change, staged
    with pytest.raises(ErasureError, match="nbgrader_config.py"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()  # nothing erased while she remains there


def test_a_class_list_the_teacher_committed_in_her_clone_is_searched(petite_classe):
    """Review2: in a clone, « the course's files » are whatever git tracks, so a class list the
    teacher commits in her own fork (grader/hub/classe.csv, kept with the hub's recipes as
    ADMIN.md shows) is taken for the course's and never searched: « Preuve faite » while it
    names ana. The course's own list (COURSE_FILES) does not name it. Control: the same file
    untracked is named."""
    from grading.erase_learner import ErasureError
    from grading.privacy.course_files import LIST

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    kept = grader / "hub" / "classe.csv"
    assert "  hub/classe.csv\n" not in LIST.read_text(encoding="utf-8")
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    _clone(course, "grader/grading", "grader/hub/roster.py", "grader/nbgrader_config.py")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: untracked, named
        _erase(c, "ana")
    _git(course, "add", "grader/hub/classe.csv")
    _git(course, "commit", "-qm", "ma classe")
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


def test_a_teachers_file_in_a_shipped_folder_is_searched_when_her_repo_tracks_one_file(
    petite_classe,
):
    """Review2: a course downloaded as a zip, then kept in the teacher's own git repository
    where she versions only her settings (grader/nbgrader_config.py): git's list, not
    COURSE_FILES, now decides, and every shipped entry git does not track (hub/, templates/…)
    is skipped whole, so her class list grader/hub/classe.csv naming ana gets « Preuve faite ».
    Control: without that repository (the zip as downloaded) the same file is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: no git, named
        _erase(c, "ana")
    _clone(course, "grader/nbgrader_config.py")
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


def test_jupyters_copy_of_a_teachers_class_list_is_searched(petite_classe):
    """Review2: a class list the teacher keeps in grader/hub/ and opens in JupyterLab leaves
    its checkpoint, hub/.ipynb_checkpoints/classe-checkpoint.csv, a copy of her file (not of
    the course's): every .ipynb_checkpoints of a shipped folder is skipped, so once she deletes
    classe.csv as told, « Preuve faite » while the copy still names ana. Control: the file
    itself is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    checkpoint = grader / "hub" / ".ipynb_checkpoints" / "classe-checkpoint.csv"
    checkpoint.parent.mkdir()
    shutil.copy(kept, checkpoint)
    with pytest.raises(ErasureError, match="classe.csv"):  # control: her file is named
        _erase(c, "ana")
    kept.unlink()  # what the refusal tells her to do
    with pytest.raises(ErasureError, match="classe-checkpoint.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_damaged_list_of_the_course_files_is_refused_in_french(petite_classe):
    """Review2: in a course without git, the erasure reads COURSE_FILES as UTF-8; a damaged
    list (bytes that are not UTF-8, a folder in its place) stopped `make oublier-eleve` with a
    Python traceback (UnicodeDecodeError, IsADirectoryError) where the teacher must read
    French. Control: a missing list is refused in French already."""
    c = petite_classe
    grader = c["grader"]
    listed = grader / "grading" / "privacy" / "course_files.txt"
    good = listed.read_bytes()
    common = ("oublier-eleve", "ID=ana", "ELEVES=grader/eleves.csv", "TEMOIN=cyr")
    common += (f"ECHANGE={c['exchange']}",)
    listed.unlink()
    proc = _make_from(c, "", *common)
    assert proc.returncode == 2 and "course_files.txt" in proc.stderr, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    listed.write_bytes(good.replace(b"README.md", "R\u00c9ADME.md".encode("latin-1")))
    proc = _make_from(c, "", *common)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "✘" in proc.stderr, proc.stderr
    listed.unlink()
    listed.mkdir()
    proc = _make_from(c, "", *common)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and "✘" in proc.stderr, proc.stderr


def test_a_changed_course_file_is_searched_in_a_clone_owned_by_another_account(petite_classe):
    """Review2: git refuses to read a clone owned by another account (« dubious ownership »,
    git 2.35.2 and later: a class folder of the shared grading account, the erasure run by root
    or the teacher); ``git ls-files`` then fails, the erasure falls back on COURSE_FILES as for a
    zip, and a course file the teacher changed (a note naming ana in nbgrader_config.py) is no
    longer searched: « Preuve faite » in a clone, where the README promises it is named.
    Control: the same clone owned by the account that runs the erasure names it."""
    import os

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader")
    config.write_bytes(config.read_bytes() + b"\n# ana : tiers-temps\n")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):  # control: her own clone
        _erase(c, "ana")
    for path in [course, *course.rglob("*")]:
        os.lchown(path, 4242, 4242)  # the shared grading account's clone (as root, as make test)
    with pytest.raises(ErasureError, match="nbgrader_config.py"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


def test_the_documented_way_to_write_the_course_files_list_keeps_an_accented_name(tmp_path):
    """Review2: the first recipe for the list, ``git ls-files > …``, quoted a name that is not
    ASCII (core.quotePath: ``"submissions/\\303\\251l\\303\\250ve.md"``), so a course file with
    an accent was listed under a name no file has. The recipe CONTRIBUTING.md gives now,
    ``make course-files``, lists each file by its own name, with the
    digest of its content, line ends read as LF."""
    import hashlib

    from grading.privacy.course_files import listing
    from helpers import REPO

    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert "`make course-files`" in text
    grader = tmp_path / "depot" / "grader"
    (grader / "submissions").mkdir(parents=True)
    (grader / "submissions" / "élève.md").write_bytes(b"ana\r\n")
    (grader / "README.md").write_text("cours\n", encoding="utf-8")
    _git(grader.parent, "init", "-q")
    _git(grader.parent, "add", "grader")
    lf = hashlib.sha256(b"ana\n").hexdigest()
    readme = hashlib.sha256(b"cours\n").hexdigest()
    assert listing(grader) == f"{readme}  README.md\n{lf}  submissions/élève.md\n"


def test_a_course_file_the_teacher_keeps_out_of_her_commits_is_searched(petite_classe):
    """Review2: the usual way to keep local settings out of one's commits, ``git update-index
    --skip-worktree grader/nbgrader_config.py`` (or ``--assume-unchanged``), hides the change
    from ``git ls-files -m`` too: her note naming ana there is never searched, « Preuve faite ».
    Control: the same change without the flag is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader, course = c["grader"], c["grader"].parent
    config = grader / "nbgrader_config.py"
    _clone(course, "grader")
    config.write_bytes(config.read_bytes() + b"\n# ana : tiers-temps\n")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):  # control: named
        _erase(c, "ana")
    _git(course, "update-index", "--skip-worktree", "grader/nbgrader_config.py")
    with pytest.raises(ErasureError, match="nbgrader_config.py"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


def test_compiled_code_in_a_classmates_folder_is_searched(petite_classe):
    """Lead's read of the content rule: ``__pycache__`` and ``.git`` were skipped everywhere,
    also inside the class's data folders, where a classmate's module compiled during grading
    (autograded/cyr/oublier/__pycache__) may hold the learner's name. Only outside them are
    they the course's or git's. Since review4, only the compiled copy of a course file as
    shipped is passed over (control: course_files.py, whose docstring names « ana »); any
    other ``.pyc`` is searched (test_compiled_code_of_a_teachers_script_she_corrected_is_named)."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    source = grader / "grading" / "privacy" / "course_files.py"
    outside = Path(py_compile.compile(str(source), doraise=True))
    assert b"ana" in outside.read_bytes() and outside.parent.name == "__pycache__"
    inside = grader / "submitted" / "cyr" / "oublier" / "__pycache__" / "aide.cpython-311.pyc"
    inside.parent.mkdir()
    inside.write_bytes(b"\x00\x00ana\x00")
    with pytest.raises(ErasureError, match="aide.cpython-311.pyc") as refused:
        _erase(c, "ana")
    assert outside.name not in str(refused.value)
    inside.unlink()
    assert not _erase(c, "ana").failures


_ERASE_AS_USER = """
import site, sys
site.addsitedir(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from grading.erase_learner import ErasureError, Setup, erase
from pathlib import Path
grader = Path(sys.argv[2])
setup = Setup(grader_dir=grader, roster=grader / "eleves.csv", exchange=Path(sys.argv[3]))
try:
    result = erase("ana", setup, confirm=True, control="cyr")
except ErasureError as exc:
    print("REFUS", exc)
else:
    print("ECHECS" if result.failures else "PREUVE FAITE", result.failures)
"""


def _erased_as_another_teacher(c, tag: str, cases: tuple[str, ...], prepare) -> dict[str, str]:
    """For each case, a copy of the small class owned by a real second Unix user (a teacher on
    a shared machine), `prepare(case, here, user)` run as root in it, then the erasure of ana
    run as that user with Debian's python3: what it says, by case."""
    import os
    import subprocess
    import sysconfig
    import tempfile

    from hub.classhub import unix_users

    if os.geteuid() != 0 or not shutil.which("runuser"):
        pytest.skip("crée un vrai utilisateur Unix\u00a0: il faut être root sous Linux")
    purelib = sysconfig.get_paths()["purelib"]
    user = f"prof{os.getpid() % 100000}{tag}"
    base = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir="/tmp"))
    try:
        base.chmod(0o755)
        said = {}
        with unix_users([user]):
            for case in cases:
                here = base / case
                shutil.copytree(c["tmp"] / "cours", here / "cours", symlinks=True)
                shutil.copytree(c["exchange"], here / "echange", symlinks=True)
                grader = here / "cours" / "grader"
                subprocess.run(["chown", "-R", f"{user}:", str(here)], check=True)
                prepare(case, here, user)
                proc = subprocess.run(
                    ["runuser", "-u", user, "--", "/usr/bin/python3", "-c", _ERASE_AS_USER]
                    + [purelib, str(grader), str(here / "echange")],
                    capture_output=True,
                    text=True,
                    timeout=300,
                    cwd=grader,
                )
                said[case] = proc.stdout + proc.stderr
        return said
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_a_file_the_teacher_cannot_read_is_never_taken_for_no_mention(petite_classe):
    """Review3: the class scan passes over a file it cannot read (``except OSError:
    continue``). On a shared machine or a hub, a class list written into grader/hub/ by root
    (``sudo``, mode 0600: its e-mails are private) names ana; the teacher, a normal user, runs
    the erasure: « Preuve faite », while her name is in a file the command never opened. It
    should be named (unreadable: no proof). The same list in a folder of root's she cannot
    open (hub/prive/, 0700) stops the command on a Python traceback (PermissionError).
    Control: the same file readable by the teacher is named."""

    def prepare(case: str, here: Path, user: str) -> None:
        kept = here / "cours" / "grader" / "hub" / "classe.csv"
        kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n")
        if case == "illisible":
            kept.chmod(0o600)  # root's
        elif case == "dossier":  # root's folder, closed to others
            hidden = kept.parent / "prive"
            hidden.mkdir(mode=0o700)
            kept.rename(hidden / "classe.csv")
        else:
            shutil.chown(kept, user)

    cases = ("lisible", "illisible", "dossier")
    said = _erased_as_another_teacher(petite_classe, "r3", cases, prepare)
    assert said["lisible"].startswith("REFUS") and "classe.csv" in said["lisible"], said
    assert not said["illisible"].startswith("PREUVE FAITE"), said["illisible"]
    assert "classe.csv" in said["illisible"], said["illisible"]
    # the same list in a folder of root's the teacher cannot open (hub/prive/, 0700)
    assert "Traceback" not in said["dossier"], said["dossier"]  # in French, named
    assert not said["dossier"].startswith("PREUVE FAITE"), said["dossier"]
    assert "prive" in said["dossier"], said["dossier"]


@pytest.mark.slow
def test_a_class_list_the_teacher_keeps_in_a_pycache_folder_is_searched(petite_classe):
    """Review3: every folder named ``__pycache__`` is skipped by name (« compiled code, its
    source is searched »), whatever it holds: a class list naming ana in
    grader/hub/__pycache__/ (or any file there that is not Python's own) gets « Preuve faite »
    while it names her. Control: the same list one folder up is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    text = "id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n"
    kept = grader / "hub" / "classe.csv"
    kept.write_text(text, encoding="utf-8")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: one folder up, named
        _erase(c, "ana")
    hidden = grader / "hub" / "__pycache__" / "classe.csv"
    hidden.parent.mkdir(exist_ok=True)
    kept.rename(hidden)
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_an_archive_member_over_fifty_megabytes_naming_the_learner_is_searched(petite_classe):
    """Review3: the class scan reads a zip member by member and skips every member over
    50 MiB (``_zip_members(data, 50 * 2**20, …)``) without a word; the archive then counts as
    read, so its bytes are not searched either. A teacher's export of the class kept in
    grader/hub/ (a 60 MiB CSV zipped, ana on its last line) gets « Preuve faite » while it
    names her. Control: the same archive with a small member is named."""
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    archive = grader / "hub" / "export-classe.zip"
    last = "ana,Ana Martin,ana.martin@exemple.fr\n"
    padding = "zoe,Zoé Blanc,zoe.blanc@exemple.fr\n"
    for rows in (10, 60 * 2**20 // len(padding)):
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("classe.csv", "id,nom,courriel\n" + padding * rows + last)
        with pytest.raises(ErasureError, match="export-classe.zip"):
            _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_compressed_file_the_scan_cannot_expand_whole_is_named(petite_classe, monkeypatch):
    """Left at stop 43: a compressed file outside the data folders was searched through its
    first 256 MiB expanded and three levels deep, then counted as read. A gzip of the class's
    export whose learner comes after 256 MiB (a column of zeros, a few hundred kilobytes on
    disk), or a class list gzipped four times, got « Preuve faite ». Each is named now (the cap
    lowered to 1 MiB here: searching 256 MiB takes minutes). Control: the same files with her
    near the start, or gzipped once, are named as holding her."""
    import gzip

    from grading.erase_learner import ErasureError
    from grading.privacy import packed

    monkeypatch.setattr(packed, "EXPANDED_MAX", 2**20)
    c = petite_classe
    kept = c["grader"] / "hub" / "export.csv.gz"
    her = b"ana,Ana Martin,ana.martin@exemple.fr\n"
    for body in (her, b"\0" * (2**20 + 1) + her):
        kept.write_bytes(gzip.compress(body, compresslevel=1))
        with pytest.raises(ErasureError, match="export.csv.gz"):
            _erase(c, "ana")
    for times in (1, 4):
        body = her
        for _ in range(times):
            body = gzip.compress(body)
        kept.write_bytes(body)
        with pytest.raises(ErasureError, match="export.csv.gz"):
            _erase(c, "ana")
    assert (c["grader"] / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_the_course_s_own_demo_never_blocks_the_erasure_of_a_learner(petite_classe):
    """Review3: `make demo-grading` (the grading guide's first step) grades the course's
    samples in grader/demo/, which the course generates and git ignores; one sample writes its
    example learner in dur (``user_id = "alice"``). A class with a learner « alice » then cannot
    erase her: the demo's graded copies, logs and gradebook are named « à corriger à la main »
    though nothing there is hers. The control: before the demo, her erasure is proved."""
    from grading_course import grading

    c = petite_classe
    grader = c["grader"]
    _enrol(c, "alice", "Alice", "Leroy")
    folder = grader / "submitted" / "alice" / "oublier"
    folder.mkdir(parents=True)
    (folder / "oublier.ipynb").write_text('{"copie de": "alice"}')
    assert not _erase(_copy_class(c), "alice").failures  # control: without the demo, proved
    proc = grading(grader, "demo", "--only", "alice_en_dur")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _assert_proved(c, "alice", "la démonstration du cours")


@pytest.mark.slow
def test_a_class_list_linked_into_grader_is_named(petite_classe):
    """Review3: the teacher keeps her class list on another disk and links it beside the hub's
    recipes (grader/hub/classe.csv -> …/disque/classe.csv, naming ana). The class scan skips
    every symbolic link without a word (``child.is_symlink(): continue``), so « Preuve faite »
    while the class folder still leads to her name and e-mail. A linked submitted/ana is named
    « est un lien » (test_a_symlinked_submitted_folder_is_named); this one should be too.
    Control: the same list as a plain file is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: a plain file, named
        _erase(c, "ana")
    elsewhere = c["tmp"] / "disque" / "classe.csv"
    elsewhere.parent.mkdir()
    kept.rename(elsewhere)
    kept.symlink_to(elsewhere)
    with pytest.raises(ErasureError, match="classe.csv"):
        _erase(c, "ana")
    assert elsewhere.read_text(encoding="utf-8").count("ana") == 2  # never followed to erase


@pytest.mark.slow
def test_a_class_list_in_the_history_of_a_git_repository_in_grader_is_named(petite_classe):
    """Review3: a course downloaded as a zip, the teacher versions grader/ (``git init`` there)
    and commits her class list grader/hub/classe.csv naming ana. The erasure names the file;
    she removes it as told (``git rm``, a commit): « Preuve faite », while grader/.git, a
    folder the class scan skips by name, still holds it (``git log -p`` shows ana's e-mail),
    and the summary of what the command cannot reach says nothing of it. Control: the file in
    her working tree is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    kept = grader / "hub" / "classe.csv"
    kept.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    _git(grader, "init", "-q")
    _git(grader, "add", "hub/classe.csv", "nbgrader_config.py")
    _git(grader, "commit", "-qm", "ma classe")
    with pytest.raises(ErasureError, match="classe.csv"):  # control: her file is named
        _erase(c, "ana")
    _git(grader, "rm", "-q", "hub/classe.csv")
    _git(grader, "commit", "-qm", "sans la liste")
    history = subprocess.run(
        ["git", "log", "-p", "--all"], cwd=grader, capture_output=True, text=True, check=True
    ).stdout
    assert "ana.martin@exemple.fr" in history  # she is still in grader/.git
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        assert ".git" in str(exc), exc
        return
    said = "\n".join(str(f) for f in result.failures)
    assert result.failures and ".git" in said, "« Preuve faite », ana dans grader/.git"


@pytest.mark.slow
def test_the_course_s_own_comment_in_a_config_she_adapted_is_no_mention(petite_classe):
    """Review3: the grading guide tells the teacher to adapt nbgrader_config.py (the zip rule
    ``FileNameCollectorPlugin.named_regexp`` to her platform's format). The file then differs
    from the course's, so it is searched whole, and the course's own comment in it (« `nbgrader
    submit --student bob` run by eve ») was a mention of a learner « eve »: her erasure was
    refused, nbgrader_config.py « à corriger à la main », though the teacher wrote nothing
    about her. The file the guide tells her to adapt names no learner. Control: with the file
    as shipped, eve's erasure is proved."""

    c = petite_classe
    grader = c["grader"]
    _enrol(c, "eve", "Ève", "Roux")
    config = grader / "nbgrader_config.py"
    shipped = config.read_text(encoding="utf-8")
    assert not _erase(_copy_class(c), "eve").failures  # control: the course's file as shipped
    rule = 'c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/]+)/(?P<file_id>'
    assert rule in shipped
    # her platform names the files <id>_oublier.ipynb
    adapted = re.sub(
        r"c\.FileNameCollectorPlugin\.named_regexp = .*",
        lambda _: (
            'c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/_]+)_'
            '(?P<file_id>[^/]+\\.ipynb)$"'
        ),
        shipped,
    )
    config.write_text(adapted, encoding="utf-8")
    _assert_proved(c, "eve", "le commentaire du cours")


def _history_naming_ana(c) -> Path:
    """A working repository outside grader/ whose history holds a class list naming ana (added,
    then removed by ``git rm``): only git's objects, zlib-compressed, still name her."""
    work = c["tmp"] / "travail"
    work.mkdir()
    _git(work, "init", "-q")
    text = "id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n"
    (work / "classe.csv").write_text(text, encoding="utf-8")
    _git(work, "add", "classe.csv")
    _git(work, "commit", "-qm", "ma classe")
    _git(work, "rm", "-q", "classe.csv")
    (work / "LISEZMOI").write_text("notes de l'enseignante\n", encoding="utf-8")
    _git(work, "add", "LISEZMOI")
    _git(work, "commit", "-qm", "sans la liste")
    return work


@pytest.mark.slow
def test_a_bare_git_repository_in_grader_is_searched_or_named(petite_classe):
    """Review4: the scan knows a git repository by a folder named ``.git``. A bare repository,
    the teacher's backup remote kept beside the hub's recipes (``git clone --bare`` into
    grader/hub/notes.git, as every git guide makes one), has no ``.git``: its files are walked
    as bytes, its objects are zlib streams the scan never expands, and the class list in its
    history (ana's name and e-mail) gets « Preuve faite ». Control: the same history as a
    normal clone (grader/hub/notes/.git) is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    hub = c["grader"] / "hub"
    clone = hub / "notes"
    subprocess.run(["git", "clone", "-q", str(work), str(clone)], check=True)
    with pytest.raises(ErasureError, match="notes"):  # control: a clone's .git is searched
        _erase(c, "ana")
    shutil.rmtree(clone)
    bare = hub / "notes.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    log = ["git", "--git-dir", str(bare), "log", "-p", "--all"]
    history = subprocess.run(log, capture_output=True, text=True, check=True).stdout
    assert "ana.martin@exemple.fr" in history  # she is still in grader/hub/notes.git
    with pytest.raises(ErasureError, match="notes.git"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_git_repository_in_a_classmates_submission_is_searched_or_named(petite_classe):
    """Review4: a ``.git`` is handed to git only outside the data folders; inside them (Ben
    worked on the TP with Ana in a git repository and handed in the folder, .git included:
    nbgrader's ignore list keeps it) its files are walked as bytes, its objects are zlib
    streams never expanded, and Ana's name and e-mail, the author of Ben's commits, get
    « Preuve faite ». Control: the same text as a plain file in his folder is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    folder = c["grader"] / "submitted" / "ben" / "oublier"
    plain = folder / "classe.csv"
    plain.write_text("ana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="travail d'autres élèves"):  # control: named
        _erase(c, "ana")
    plain.unlink()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(folder / ".git")], check=True)
    log = ["git", "--git-dir", str(folder / ".git"), "log", "-p", "--all"]
    history = subprocess.run(log, capture_output=True, text=True, check=True).stdout
    assert "ana.martin@exemple.fr" in history  # she is still in Ben's folder
    with pytest.raises(ErasureError, match="travail d'autres élèves|.git"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_file_named_after_the_learner_in_grader_is_named(petite_classe):
    """Review4: the class scan reads every file's bytes, never its name (an archive member's
    name is searched, a file's is not). The teacher's follow-up notes, one file per learner
    beside the hub's recipes (grader/hub/suivi/ana-martin.txt: « tiers-temps, 12/20 »), keep
    Ana's grade and accommodation under her name, and the erasure says « Preuve faite ».
    Control: the same note naming her inside is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    folder = c["grader"] / "hub" / "suivi"
    folder.mkdir(parents=True)
    note = folder / "notes.txt"
    note.write_text("ana-martin : tiers-temps, 12/20\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="notes.txt"):  # control: her name inside, named
        _erase(c, "ana")
    note.rename(folder / "ana-martin.txt")
    (folder / "ana-martin.txt").write_text("tiers-temps, 12/20\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="ana-martin.txt"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_pdf_naming_the_learner_in_its_compressed_text_is_named(petite_classe):
    """Review4: a PDF is searched as raw bytes; its text sits in deflate streams (FlateDecode,
    what every office suite and browser writes), which the scan never expands (only gzip,
    bzip2, xz and zip are). The class's grade sheet printed to PDF beside the hub's recipes
    (grader/hub/releve.pdf, « Ana Martin 12/20 ») gets « Preuve faite ». Control: the same
    PDF with its stream left uncompressed is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    text = b"BT /F1 12 Tf 72 712 Td (Ana Martin ana.martin@exemple.fr 12/20) Tj ET"
    pdf = c["grader"] / "hub" / "releve.pdf"
    for body, extra in ((text, b""), (zlib.compress(text), b" /Filter /FlateDecode")):
        pdf.write_bytes(
            b"%%PDF-1.4\n1 0 obj\n<< /Length %d%s >>\nstream\n" % (len(body), extra)
            + body
            + b"\nendstream\nendobj\ntrailer\n<< >>\n%EOF\n"
        )
        with pytest.raises(ErasureError, match="releve.pdf"):
            _erase(c, "ana")


@pytest.mark.slow
def test_a_gradebook_copy_the_teacher_keeps_in_the_backups_folder_is_named(petite_classe):
    """Review4: the class scan skips the whole backups folder (grader/sauvegardes/), and the
    pending list reads only the files named as ``make sauvegarde`` names them
    (sauvegarde-<date>.tar.gz). A copy of the gradebook the teacher put there before the new
    school year (``cp gradebook.db sauvegardes/carnet-juin.db``), or a backup she renamed
    (sauvegarde-avant-rentree.tar.gz), holds ana's row, and the erasure says « Preuve faite »,
    listing no backup to purge. Control: the same copy in grader/hub/ is named."""
    import gzip

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    source = grader / "gradebook.db"
    assert b"ana.martin@exemple.fr" in source.read_bytes()
    control = grader / "hub" / "carnet-juin.db"
    shutil.copy(source, control)
    with pytest.raises(ErasureError, match="carnet-juin.db"):  # control: named
        _erase(c, "ana")
    control.unlink()
    backups = grader / "sauvegardes"
    backups.mkdir(exist_ok=True)
    copy = backups / "carnet-juin.db"
    shutil.copy(source, copy)
    with pytest.raises(ErasureError, match="carnet-juin.db"):
        _erase(c, "ana")
    copy.unlink()
    renamed = backups / "sauvegarde-avant-rentree.tar.gz"
    renamed.write_bytes(gzip.compress(source.read_bytes()))
    with pytest.raises(ErasureError, match="sauvegarde-avant-rentree"):
        _erase(c, "ana")


@pytest.mark.slow
def test_compiled_code_of_a_teachers_script_she_corrected_is_named(petite_classe):
    """Review4: ``__pycache__/*.pyc`` outside the data folders is skipped (« its source is
    searched »). The teacher's script grader/hub/inscrire.py listed ana's e-mail; Python
    compiled it once (grader/hub/__pycache__/inscrire.cpython-3XX.pyc). The erasure names the
    script; she removes ana's line as told: « Preuve faite », while the compiled copy, never
    recompiled, still holds her e-mail. Control: the script itself is named."""
    import subprocess
    import sys

    from grading.erase_learner import ErasureError

    c = petite_classe
    hub = c["grader"] / "hub"
    script = hub / "inscrire.py"
    script.write_text(
        'ELEVES = ["ana.martin@exemple.fr", "ben.durand@exemple.fr"]\n', encoding="utf-8"
    )
    # what Python does on the first import (py_compile: the tests run without bytecode)
    subprocess.run([sys.executable, "-m", "py_compile", "inscrire.py"], cwd=hub, check=True)
    compiled = list((hub / "__pycache__").glob("inscrire.*.pyc"))
    assert compiled and b"ana.martin@exemple.fr" in compiled[0].read_bytes()
    with pytest.raises(ErasureError, match="inscrire.py"):  # control: the script, named
        _erase(c, "ana")
    script.write_text('ELEVES = ["ben.durand@exemple.fr"]\n', encoding="utf-8")
    assert b"ana.martin@exemple.fr" in compiled[0].read_bytes()  # she is still there
    with pytest.raises(ErasureError, match="inscrire"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_git_branch_named_after_the_learner_in_grader_is_named(petite_classe):
    """Review4: a git repository in grader/ is searched through ``git cat-file
    --batch-all-objects``: its objects only, never its refs. The teacher's notes, versioned in
    grader/hub/notes/, keep one branch per learner she follows (``git branch suivi-ana-martin``):
    her name stays in .git/refs (and in the reflog), and the erasure says « Preuve faite ».
    Control: her name in a commit message is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    (notes / "LISEZMOI").write_text("mes notes\n", encoding="utf-8")
    _git(notes, "add", "LISEZMOI")
    _git(notes, "commit", "-qm", "suivi de ana-martin")
    with pytest.raises(ErasureError, match="notes"):  # control: a commit message, named
        _erase(c, "ana")
    _git(notes, "commit", "-q", "--amend", "-m", "mes notes")
    _git(notes, "reflog", "expire", "--expire=now", "--all")
    _git(notes, "gc", "-q", "--prune=now")
    _git(notes, "branch", "suivi-ana-martin")
    refs = ["git", "-C", str(notes), "branch", "--list"]
    assert "suivi-ana-martin" in subprocess.run(refs, capture_output=True, text=True).stdout
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_an_archive_of_many_compressed_members_expanding_beyond_the_cap_is_named(
    petite_classe, monkeypatch
):
    """Review4: the 256 MiB cap is per stream, never per file: a zip of many members, each a
    gzip under the cap, is expanded and searched whole (measured: about 70 ms per MiB, so
    100 members of 250 MiB zeros, a 25 MB zip, take half an hour, twice per erasure; nested
    zips multiply it), then counted as read. A file that expands beyond the cap in total
    should be named « à vérifier à la main », as one stream over it is (the control). The cap
    is lowered to 1 MiB here, as in test_a_compressed_file_the_scan_cannot_expand_whole_is_named:
    40 members of 0.9 MiB, 36 times the cap."""
    import gzip
    import zipfile

    from grading.erase_learner import ErasureError
    from grading.privacy import packed

    monkeypatch.setattr(packed, "EXPANDED_MAX", 2**20)
    c = petite_classe
    kept = c["grader"] / "hub" / "exports.zip"
    member = gzip.compress(b"\0" * (9 * 2**20 // 10), compresslevel=1)
    with zipfile.ZipFile(kept, "w") as zf:  # control: one stream over the cap, named
        zf.writestr("tout.csv.gz", gzip.compress(b"\0" * (2**20 + 1), compresslevel=1))
    with pytest.raises(ErasureError, match="exports.zip"):
        _erase(c, "ana")
    with zipfile.ZipFile(kept, "w") as zf:
        for k in range(40):
            zf.writestr(f"export-{k:02}.csv.gz", member)
    with pytest.raises(ErasureError, match="exports.zip"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_teachers_virtual_environment_in_grader_never_blocks_the_erasure(petite_classe):
    """Review4: a teacher who keeps her own virtual environment in grader/ (``uv venv
    grader/env``, then the course's tools: here Babel, a dependency of JupyterLab in uv.lock)
    cannot erase « ana »: the scan reads every installed file as hers, finds « ana » as a
    whole word in Babel's locale data (blo.dat, eo.dat…: « ana » glued to a byte that is not
    ASCII), and refuses on files she never wrote and cannot edit. Measured with the course's
    whole .venv copied into grader/: 63 such files, 189 s for one scan (the class's own
    erasure, without the venv, is made in every other test of this module)."""
    import subprocess

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    env = c["grader"] / "env"
    uv = str(REPO / ".venv" / "bin" / "uv")
    subprocess.run([uv, "venv", "-q", str(env)], check=True)
    babel = [uv, "pip", "install", "-q", "--offline", "--python", str(env / "bin" / "python")]
    subprocess.run([*babel, "babel==2.19.0"], check=True)
    _assert_proved(c, "ana", "un venv de l'enseignante")
    # what pip installed is left out, not the environment's folder: her class list beside it
    (env / "classe.csv").write_text("ana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="env/classe.csv"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_dropped_in_a_git_repository_s_store_is_named(petite_classe):
    """Lead, after review4: a git repository's objects/ is read through git, its own files
    (loose objects, packs) only; a class list dropped there (objects/classe.csv) is not git's,
    so it is searched. Control: the repository's history alone names her nowhere."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    (notes / "LISEZMOI").write_text("mes notes\n", encoding="utf-8")
    _git(notes, "add", "LISEZMOI")
    _git(notes, "commit", "-qm", "mes notes")
    assert not _erase(_copy_class(c), "ana").failures  # control, on a copy
    dropped = notes / ".git" / "objects" / "classe.csv"
    dropped.write_text("ana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="objects/classe.csv"):
        _erase(c, "ana")


def test_another_name_that_starts_with_hers_is_no_mention(petite_classe):
    """Review4: a mention is « a whole word », the boundary being an ASCII letter, digit or
    « _ » only: in « Anaïs » (UTF-8, the « ï » is two bytes that are not ASCII) the scan finds
    « Ana ». Ben's notebook thanks « Anaïs », a girl of another class: erasing « ana » names
    his file as a mention of her, and ``CAVIARDER=1`` would turn it into « [retiré]ïs ».
    Control: « Ana » herself in the same sentence is found."""

    c = petite_classe
    for name, hers in (("Ana", True), ("Anaïs", False), ("Anaëlle", False)):
        assert _bens_thanks_name(c, "ana", name) is hers, name


@pytest.mark.slow
def test_a_file_bigger_than_the_memory_in_grader_stops_nothing_on_a_traceback(petite_classe):
    """Review4: the class scan reads each file whole (``read_bytes``), a file a link leads to
    as well: a recording of a class kept beside the hub's recipes (grader/hub/seance.mp4, here
    a 3 GiB sparse file) on a machine that cannot hold it makes ``make oublier-eleve`` stop on
    a ``MemoryError`` traceback (the command limited here to 2 GiB of address space; without
    a limit, a small hub's container is killed by the kernel). It should read it in parts, or
    name it « à vérifier à la main ». Control: the same command under the same limit without
    the file runs."""
    import os

    c = petite_classe
    grader = c["grader"]

    def dry_run() -> str:
        return _dry_run_in_two_gigabytes(c, "ana")

    said = dry_run()  # the control
    assert "Traceback" not in said and "submitted/ana" in said, said[-1500:]
    video = grader / "hub" / "seance.mp4"
    with open(video, "wb") as file:
        file.truncate(3 * 2**30)
    try:
        said = dry_run()
    finally:
        os.unlink(video)
    assert "Traceback" not in said and "MemoryError" not in said, said[-1500:]
    assert "seance.mp4" in said, said[-1500:]


# a class list naming ana (line 7 of 14), compressed by ``zstd -19`` (141 bytes)
_ZSTD_LIST = (
    "KLUv/WRXAP0DAEIGFRiAqw4AzB/q9BZT0zMkQ7tLtqbWdAwgFQL/v2fd7/m955xrrTHG1lotBe3YTFgEsAmFDZVS"
    "KSWE0P9lYCYCK4zkh4dd1pWLobsMKBzndJZD5dKKxCOoEVDX0vrWM7CTHAOwWp6FB0EgWE8UGoONVUEgKTYpR3S+"
    "5rj1uwrCvn+t"
)


@pytest.mark.slow
def test_a_class_list_compressed_by_zstd_is_named(petite_classe):
    """Review4: the scan expands gzip, bzip2, xz and zip; any other compressed file is searched
    as its raw bytes and counted as read. ``tar --zstd`` (zstd, the default of several Linux
    distributions' archives) keeps the teacher's old class list beside the hub's recipes
    (grader/hub/classe-2024.csv.zst, naming ana): « Preuve faite ». It should be expanded, or
    named « à vérifier à la main ». Control: the same list uncompressed is named."""
    import base64
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    data = base64.b64decode(_ZSTD_LIST)
    if shutil.which("zstd"):  # what it holds, when zstd is there to say it
        text = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True)
        assert b"ana,Ana Martin,ana.martin@exemple.fr" in text.stdout
    plain = c["grader"] / "hub" / "classe-2024.csv"
    plain.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="classe-2024.csv"):  # control: named
        _erase(c, "ana")
    plain.unlink()
    (c["grader"] / "hub" / "classe-2024.csv.zst").write_bytes(data)
    with pytest.raises(ErasureError, match="classe-2024.csv.zst"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_learner_the_teacher_adds_to_the_demo_s_formgrader_is_named(petite_classe):
    """Review4: the whole demo folder (grader/demo/, marked as the demo's) is skipped: « the
    samples, none a learner's ». The grading guide sends the teacher to the demo's formgrader
    (``make formgrader NOTATION=grader/demo``); trying « Manage Students » there with a real
    learner (here its command-line twin, ``nbgrader db student add`` in grader/demo/) writes
    ana's name and e-mail into grader/demo/gradebook.db, and the erasure says « Preuve
    faite ». Control: the same row in a copy of that gradebook beside the hub's recipes is
    named."""
    from grading.erase_learner import ErasureError
    from grading_course import grading, nbgrader

    c = petite_classe
    grader = c["grader"]
    proc = grading(grader, "demo", "--only", "graine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    demo = grader / "demo"
    add = ("db", "student", "add", "ana", "--first-name", "Ana", "--last-name", "Martin")
    proc = nbgrader(demo, *add, "--email", "ana.martin@exemple.fr")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b"ana.martin@exemple.fr" in (demo / "gradebook.db").read_bytes()
    control = grader / "hub" / "carnet-demo.db"
    shutil.copy(demo / "gradebook.db", control)
    with pytest.raises(ErasureError, match="carnet-demo.db"):  # control: named
        _erase(c, "ana")
    control.unlink()
    with pytest.raises(ErasureError, match="demo"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_truncated_compressed_class_list_is_named(petite_classe):
    """Review4: a compressed file the scan cannot expand to its end (« a damaged archive or
    stream: its raw bytes were searched ») is counted as read, though its raw bytes are the
    compressed ones. A gzipped class list copied while it was written, or a download cut
    short (grader/hub/classe.csv.gz without its last 8 bytes, gzip's checksum: ``zcat`` still
    prints every line, ana's included), gets « Preuve faite »; a damaged backup is named « à
    supprimer à la main » by the same module. Control: the whole file is named."""
    import gzip
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    text = b"id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\nben,Ben Durand,\n"
    kept = c["grader"] / "hub" / "classe.csv.gz"
    whole = gzip.compress(text)
    kept.write_bytes(whole)
    with pytest.raises(ErasureError, match="classe.csv.gz"):  # control: named
        _erase(c, "ana")
    kept.write_bytes(whole[:-8])
    shown = subprocess.run(["gzip", "-dc", str(kept)], capture_output=True).stdout
    assert b"ana.martin@exemple.fr" in shown  # what zcat shows of it
    with pytest.raises(ErasureError, match="classe.csv.gz"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_git_folder_git_no_longer_recognizes_is_never_taken_for_the_course_s(petite_classe):
    """Review4: the scan runs ``git -C <folder holding .git> cat-file --batch-all-objects``.
    When git does not recognize that .git (its empty refs/ folders dropped by a copy or a
    cloud sync, after ``git gc`` packed every ref), git looks upwards and reads the course's
    own repository instead (the teacher's clone of the course): the notes' pack, which holds
    ana's class list, is never searched, and the erasure says « Preuve faite ». It should
    be named, as a repository git will not read is. Control: the intact repository is
    named."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    course = grader.parent
    _git(course, "init", "-q")  # the teacher's clone of the course
    _git(course, "add", "grader/nbgrader_config.py")
    _git(course, "commit", "-qm", "le cours")
    work = _history_naming_ana(c)
    notes = grader / "hub" / "notes"
    shutil.copytree(work, notes)
    _git(notes, "gc", "-q")  # every ref packed: refs/heads and refs/tags are empty
    with pytest.raises(ErasureError, match="notes"):  # control: named
        _erase(c, "ana")
    assert not any(p.is_file() for p in (notes / ".git" / "refs").rglob("*"))
    shutil.rmtree(notes / ".git" / "refs")  # empty folders, dropped by the copy
    packs = list((notes / ".git" / "objects" / "pack").glob("*.pack"))
    assert packs  # her class list is still there, compressed in the pack
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_teachers_comment_on_a_classmate_naming_the_learner_is_named(petite_classe):
    """Review4: the gradebook is searched for her own rows and her row's bytes only (her
    student row, e-mail, submissions), never for a mention in another learner's rows. The
    teacher's comment on Ben's answer in formgrader, « même code qu'Ana Martin »
    (comment.manual_comment, Ben's row), stays in gradebook.db after the erasure, and
    « Preuve faite » is said; the next ``make feedback --force`` writes it into Ben's feedback
    again. Control: the same comment in Ben's feedback page is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.add_assignment("oublier")
        gb.add_notebook("oublier", "oublier")
        gb.add_solution_cell("reponse", "oublier", "oublier")
        gb.add_submission("oublier", "ben")
        comment = gb.find_comment("reponse", "oublier", "oublier", "ben")
        comment.manual_comment = "Même code qu'Ana Martin, à revoir ensemble."
        gb.db.commit()
    page = grader / "feedback" / "ben" / "oublier" / "oublier.html"
    page.parent.mkdir(parents=True)
    page.write_text("<p>Même code qu'Ana Martin, à revoir ensemble.</p>", encoding="utf-8")
    with pytest.raises(
        ErasureError, match="travail d'autres élèves|commentaire à corriger"
    ):  # control: named
        _erase(c, "ana")
    page.unlink()
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        assert "gradebook.db" in str(exc) or "carnet" in str(exc), exc
        return
    held = (grader / "gradebook.db").read_bytes()
    assert b"Ana Martin" in held  # Ben's comment, still there
    said = "\n".join(str(f) for f in result.failures)
    assert result.failures, f"« Preuve faite », ana dans un commentaire de ben\u00a0: {said}"


@pytest.mark.slow
def test_a_classmates_submission_in_the_exchange_naming_the_learner_is_named(petite_classe):
    """Review4: a mention of her in a classmate's work is found in grader/ (and redacted with
    CAVIARDER=1), never in the exchange, where only her own entries are looked at. Ben's
    notebook thanks « Ana Martin »: his collected copy (submitted/ben) is redacted, his
    submission in the exchange (inbound/ben+oublier+…) keeps her name, « Preuve faite » is
    said, and the next ``make collect`` brings her name back. Control: before redaction, his
    collected copy is named."""
    from grading.erase_learner import ErasureError, Setup, erase

    c = petite_classe
    text = '{"copie de": "ben", "merci": "Ana Martin"}'
    copy = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    copy.write_text(text, encoding="utf-8")
    inbound = c["exchange"] / "memoire-tuteur" / "inbound"
    sent = inbound / "ben+oublier+2025-03-14 17:00:00.000000 UTC+abc" / "oublier.ipynb"
    sent.parent.mkdir()
    sent.write_text(text, encoding="utf-8")
    with pytest.raises(
        ErasureError, match="travail d'autres élèves|dans l'échange"
    ):  # control: named
        _erase(c, "ana")
    setup = Setup(grader_dir=c["grader"], roster=c["roster"], exchange=c["exchange"], redact=True)
    try:
        result = erase("ana", setup, confirm=True, control="cyr")
    except ErasureError as exc:
        assert "inbound" in str(exc), exc
        return
    assert "Ana Martin" not in copy.read_text(encoding="utf-8")  # his copy, redacted
    assert "Ana Martin" in sent.read_text(encoding="utf-8")  # his submission, not
    said = "\n".join(str(f) for f in result.failures)
    assert result.failures, f"« Preuve faite », ana dans le rendu de ben (échange)\u00a0: {said}"


@pytest.mark.slow
def test_a_class_list_in_an_interrupted_fetch_of_a_repository_in_grader_is_named(petite_classe):
    """Review5: a git repository's ``objects/`` folder is skipped by the walk (« read through
    git ») and git only lists the objects it has indexed. A ``git fetch`` of the teacher's notes
    cut short (network, Ctrl-C) leaves the pack it received as ``objects/pack/tmp_pack_*``,
    with no index: git never lists it, the walk never reads it, and the class list it holds
    (ana's name and e-mail, deflate-compressed) gets « Preuve faite ». Control: the same pack
    once indexed (the fetch run to its end) is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    work = _history_naming_ana(c)
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    pack = notes / ".git" / "objects" / "pack" / "tmp_pack_Xq3b1z"
    received = subprocess.run(
        ["git", "-C", str(work), "pack-objects", "--all", "--stdout"],
        input=b"",
        capture_output=True,
        check=True,
    ).stdout
    pack.write_bytes(received)  # what git fetch had received when it was stopped
    indexed = notes / ".git" / "objects" / "pack" / "pack-complet.pack"
    shutil.copy(pack, indexed)
    subprocess.run(["git", "index-pack", str(indexed)], check=True, capture_output=True)
    with pytest.raises(ErasureError, match="notes"):  # control: indexed, searched through git
        _erase(c, "ana")
    for part in indexed.parent.glob("pack-complet.*"):
        part.unlink()
    listed = ["git", "--git-dir", str(notes / ".git"), "cat-file", "--batch-all-objects"]
    listed = subprocess.run([*listed, "--batch-check"], capture_output=True, check=True)
    assert listed.stdout == b""  # git lists nothing: the pack is only the walk's to read
    with pytest.raises(ErasureError, match="notes|tmp_pack"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_teachers_folder_with_a_pyvenv_cfg_is_still_searched(petite_classe):
    """Review5: a folder outside the data folders holding ``pyvenv.cfg`` is skipped whole (« a
    Python environment: what pip installed »). A teacher who made her follow-up folder its own
    environment to run a script there (``cd grader/hub/suivi && python3 -m venv .``, as many
    guides show) keeps her class list beside it (suivi/eleves-2025.csv, naming ana): the whole
    folder is never read and the erasure says « Preuve faite ». Control: the same folder before
    ``python3 -m venv .`` is named."""
    import subprocess
    import sys

    from grading.erase_learner import ErasureError

    c = petite_classe
    suivi = c["grader"] / "hub" / "suivi"
    suivi.mkdir()
    (suivi / "eleves-2025.csv").write_text(
        "id,nom,courriel,tiers-temps\nana,Ana Martin,ana.martin@exemple.fr,oui\n", encoding="utf-8"
    )
    with pytest.raises(ErasureError, match="eleves-2025.csv"):  # control: named
        _erase(c, "ana")
    venv = [sys.executable, "-m", "venv", "--without-pip", "."]
    subprocess.run(venv, cwd=suivi, check=True)
    assert (suivi / "pyvenv.cfg").is_file()
    with pytest.raises(ErasureError, match="eleves-2025.csv"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_classmates_work_the_teacher_grades_in_the_demo_naming_the_learner_is_named(
    petite_classe,
):
    """Review5: the demo folder (grader/demo/, made by ``make demo-grading``) is searched only
    for her file names and her gradebook row's bytes (e-mail, id glued to her names), never for
    a mention. A teacher who reuses the demo's formgrader to show a real case (Ben's notebook
    copied to grader/demo/submitted/ben/oublier/, « même code qu'Ana Martin ») keeps Ana's name
    there, and the erasure says « Preuve faite ». Control: the same copy beside the hub's
    recipes is named."""
    from grading.erase_learner import ErasureError
    from grading_course import grading

    c = petite_classe
    grader = c["grader"]
    proc = grading(grader, "demo", "--only", "graine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = '{"cells": [], "copie de": "ben", "note": "même code qu\'Ana Martin"}'
    control = grader / "hub" / "ben-oublier.ipynb"
    control.write_text(text, encoding="utf-8")
    with pytest.raises(ErasureError, match="ben-oublier.ipynb"):  # control: named
        _erase(c, "ana")
    control.unlink()
    copy = grader / "demo" / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    copy.parent.mkdir(parents=True)
    copy.write_text(text, encoding="utf-8")
    with pytest.raises(ErasureError, match="demo"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_classmates_pdf_in_the_exchange_naming_the_learner_is_named(petite_classe):
    """Review5: a classmate's submission in the exchange is searched as raw bytes, never
    expanded as the class folder's files are (PDF streams, gzip, zip). Ben hands in his
    notebook and its PDF export (File > Save and Export as PDF: « binôme : Ana Martin » in a
    FlateDecode stream); before make collect brings it into grader/, the erasure says
    « Preuve faite », and the next collect brings her name back. Control: the same PDF in his
    collected folder (grader/submitted/ben/) is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    text = b"BT /F1 12 Tf 72 712 Td (Ben Durand, binome : Ana Martin) Tj ET"
    body = zlib.compress(text)
    pdf = (
        b"%%PDF-1.4\n1 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body)
        + body
        + b"\nendstream\nendobj\ntrailer\n<< >>\n%EOF\n"
    )
    collected = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.pdf"
    collected.write_bytes(pdf)
    with pytest.raises(ErasureError, match="oublier.pdf"):  # control: named in grader/
        _erase(c, "ana")
    collected.unlink()
    inbound = c["exchange"] / "memoire-tuteur" / "inbound"
    sent = inbound / "ben+oublier+2025-03-14 17:00:00.000000 UTC+abc" / "oublier.pdf"
    sent.parent.mkdir()
    sent.write_bytes(pdf)
    with pytest.raises(ErasureError, match="oublier.pdf"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_compressed_by_lzma_is_named(petite_classe):
    """Review5: since review4, a compressed file is named when it cannot be expanded, but the
    formats are known by a list of first bytes (gzip, bzip2, xz, zstd, lz4, 7z, RAR); any other
    is still searched as raw bytes and counted as read. The class list kept as
    ``tar --lzma`` or ``lzma`` (xz-utils' .lzma format, which review4 named; the same holds for
    lzip, ``compress``'s .Z and lz4's legacy frames) gets « Preuve faite ». Control: the same
    list by ``xz`` is named."""
    import lzma

    from grading.erase_learner import ErasureError

    c = petite_classe
    hub = c["grader"] / "hub"
    text = b"id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\nben,Ben Durand,\n"
    said: dict[str, bool] = {}
    # the bytes ``xz -c`` and ``lzma -c`` write (xz-utils' two formats)
    for form, name in ((lzma.FORMAT_XZ, "classe.csv.xz"), (lzma.FORMAT_ALONE, "classe.csv.lzma")):
        kept = hub / name
        kept.write_bytes(lzma.compress(text, format=form))
        try:
            _erase(c, "ana")
        except ErasureError as exc:
            said[name] = name in str(exc)
        else:
            said[name] = False  # « Preuve faite »
        kept.unlink()
    assert said == dict.fromkeys(said, True), said


@pytest.mark.slow
def test_a_gradebook_whose_comments_cannot_be_read_is_refused_in_french(petite_classe):
    """Review5: the search of the teacher's comments on classmates runs in
    ``suppress(sqlite3.DatabaseError)``; when that query fails (no ``comment`` table: a
    gradebook cut down by hand or by another tool, or its pages damaged), ``comments`` is never
    set and ``make oublier-eleve`` stops on a Python traceback (UnboundLocalError) after the
    gradebook was judged readable. It should refuse in French (« Carnet de notes illisible »),
    as for any other damage, or name it. Control: the intact gradebook erases ana."""
    import sqlite3

    from grading.erase_learner import ErasureError

    c = petite_classe
    db = c["grader"] / "gradebook.db"
    control = c["tmp"] / "controle"
    shutil.copytree(c["tmp"] / "cours", control / "cours", symlinks=True)
    shutil.copytree(c["exchange"], control / "echange", symlinks=True)
    copy = {**c, "grader": control / "cours" / "grader", "exchange": control / "echange"}
    copy["roster"] = copy["grader"] / "eleves.csv"
    assert not _erase(copy, "ana").failures  # control: erased, « Preuve faite »
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE comment")
    try:
        _erase(c, "ana")
    except ErasureError as exc:
        assert "gradebook.db" in str(exc), exc
    except Exception as exc:  # noqa: BLE001 (what the teacher sees: a traceback)
        pytest.fail(f"traceback au lieu d'un refus en français\u00a0: {exc!r}")


def test_a_name_that_ends_with_hers_after_an_accented_letter_is_no_mention(petite_classe):
    """Review5: review4's « Anaïs » is fixed on the right of a mention only. A byte that starts
    a UTF-8 letter now counts as a letter, but the byte before her id in « Amélia » is the
    second byte of « é » (a continuation byte), which counts as a boundary: erasing « lia »
    (Lia Moreau) names Ben's notebook that thanks « Amélia », a girl of another class, as a
    mention of her, and ``CAVIARDER=1`` would turn it into « Amé[retiré] ». Control: « Lia »
    herself in the same sentence is found."""

    c = petite_classe
    roster = c["roster"]
    roster.write_text(
        roster.read_text(encoding="utf-8") + "lia;Lia;Moreau;lia.moreau@exemple.fr\n",
        encoding="utf-8",
    )
    with Gradebook(f"sqlite:///{c['grader'] / 'gradebook.db'}") as gb:
        gb.update_or_create_student("lia", first_name="Lia", last_name="Moreau")
    for name, hers in (("Lia", True), ("Amélia", False), ("Célia", False)):
        assert _bens_thanks_name(c, "lia", name) is hers, name


@pytest.mark.slow
def test_a_gzip_whose_first_member_fills_the_cap_is_never_expanded_beyond_it(petite_classe):
    """Review5: ``_expand`` reads a concatenated gzip member by member, each asked for what is
    left of the cap plus one byte. When the first member expands to exactly the cap plus one
    byte (256 MiB + 1), the next is asked for 0 bytes, which zlib reads as « no limit »: the
    second member (here 2.5 GiB of zeros, 12 MB on disk) is expanded whole into memory. Ben
    hands in ``mesures.csv.gz`` (13 MB, far under nbgrader's 100 MB per file):
    ``make oublier-eleve`` of anyone stops on a MemoryError traceback (limited here to 2 GiB of
    address space; without a limit, a small hub's container is killed). Control: the first
    member alone, under the same limit, is named « plus de 256 Mo une fois décompressé »."""

    c = petite_classe
    grader = c["grader"]

    def dry_run() -> str:
        return _dry_run_in_two_gigabytes(c, "ana")

    def member(size: int) -> bytes:
        packer, zeros, out = zlib.compressobj(1, zlib.DEFLATED, 31), b"\0" * 2**24, []
        out += [packer.compress(zeros) for _ in range(size // 2**24)]
        return b"".join([*out, packer.compress(b"\0" * (size % 2**24)), packer.flush()])

    kept = grader / "submitted" / "ben" / "oublier" / "mesures.csv.gz"
    first = member(256 * 2**20 + 1)
    kept.write_bytes(first)
    said = dry_run()  # control: the first member alone is named, no traceback
    assert "Traceback" not in said and "mesures.csv.gz" in said, said[-1500:]
    kept.write_bytes(first + member(5 * 2**29))
    said = dry_run()
    assert "Traceback" not in said and "MemoryError" not in said, said[-1500:]
    assert "mesures.csv.gz" in said, said[-1500:]


@pytest.mark.slow
def test_a_classmates_submission_the_teacher_cannot_read_in_the_exchange_is_named(petite_classe):
    """Review5: the exchange's classmates' files are found by ``rglob``, which passes over a
    folder it cannot open, and read by ``read_bytes`` with no ``OSError`` handled. On a hub,
    each submission in inbound/ is its student's; Ben closes his (``chmod 700`` on
    inbound/ben+oublier+…/, his own folder): the teacher's erasure of ana never reads it and
    says « Preuve faite », though it names her. Ben closes only his notebook (``chmod 600``):
    the erasure stops on a PermissionError traceback. Both should be named, as an unreadable
    file of grader/ is. Control: the same submission readable by the teacher is named."""

    def prepare(case: str, here: Path, user: str) -> None:
        inbound = here / "echange" / "memoire-tuteur" / "inbound"
        sent = inbound / "ben+oublier+2025-03-14 17:00:00.000000 UTC+abc"
        sent.mkdir()  # Ben's (root stands for his account here)
        notebook = sent / "oublier.ipynb"
        notebook.write_text('{"copie de": "ben", "merci": "Ana Martin"}')
        notebook.chmod(0o644)
        sent.chmod(0o755)
        if case == "dossier":
            sent.chmod(0o700)
        elif case == "fichier":
            notebook.chmod(0o600)

    cases = ("lisible", "dossier", "fichier")
    said = _erased_as_another_teacher(petite_classe, "r5", cases, prepare)
    assert said["lisible"].startswith("REFUS") and "inbound" in said["lisible"], said
    wrong = {
        case: said[case][-600:]
        for case in ("dossier", "fichier")
        if "Traceback" in said[case]
        or said[case].startswith("PREUVE FAITE")
        or "ben+oublier" not in said[case]
    }
    assert not wrong, wrong


@pytest.mark.slow
def test_a_stale_compiled_copy_of_a_course_file_she_restored_is_named(petite_classe):
    """Review5: a ``.pyc`` is passed over when its source, beside it, is a course file as
    shipped; the ``.pyc``'s own bytes are never compared to that source. The teacher let one
    address through the hub's login guard (grader/hub/login_guard.py, « ana.martin@exemple.fr
    », Ana Martin) and the hub compiled it (here ``import login_guard``, as the hub's
    configuration does); when the erasure named the file, she restored the course's version
    (``git checkout``): the source is as shipped, its compiled copy of her edit is not
    (__pycache__/login_guard.cpython-3XX.pyc still holds the address until the hub imports
    it again), and the erasure says « Preuve faite ». Control: with her edit still in the
    source, the compiled copy is named."""
    import os
    import subprocess
    import sys

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    hub = c["grader"] / "hub"
    source = hub / "login_guard.py"
    shutil.copy(REPO / "grader" / "hub" / "login_guard.py", source)  # as the course ships it
    shipped = source.read_bytes()
    edit = b'\nEN_ATTENTE = {"ana.martin@exemple.fr"}  # Ana Martin, compte en attente\n'
    source.write_bytes(shipped + edit)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", "import login_guard"], cwd=hub, env=env, check=True)
    compiled = next((hub / "__pycache__").glob("login_guard.*.pyc"))
    assert b"ana.martin@exemple.fr" in compiled.read_bytes()
    with pytest.raises(ErasureError, match=re.escape(compiled.name)):  # control: named
        _erase(c, "ana")
    source.write_bytes(shipped)  # what git checkout writes back
    assert b"ana.martin@exemple.fr" in compiled.read_bytes()  # her address, still there
    with pytest.raises(ErasureError, match=re.escape(compiled.name)):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_pdf_of_many_pages_is_searched_in_a_time_that_grows_with_its_size(petite_classe):
    """Review5: a PDF's compressed streams are expanded one by one, each ``_expand`` handing
    zlib a view from that stream to the end of the file; zlib returns what follows the stream
    as ``unused_data``, a copy of the rest of the file, once per stream: the cost grows with
    the number of streams times the file's size. Measured on this scan (pages of a 1 KiB text
    stream and a 4 KiB image): 1,000 pages (5 MB) 0.6 s, 6,000 pages (23 MB) 22 s, so a
    printed course book or a scan of the class's papers in grader/hub takes minutes, three
    scans per erasure. Eight times the pages should take about eight times as long, not
    the square: the ratio is measured in one run (500 then 4,000 pages, eight times as many: the
    smaller PDF timed twice, the best kept; under 12 leaves room for a loaded machine)."""
    import os
    import time

    from grading.privacy.learner_places import scan

    c = petite_classe
    pdf = c["grader"] / "hub" / "manuel.pdf"

    def write(pages: int) -> None:
        parts = [b"%PDF-1.4\n"]
        for k in range(pages):
            text = zlib.compress(b"BT /F1 11 Tf 72 712 Td (page %d) Tj ET\n" % k * 40)
            image = os.urandom(4096)  # a DCTDecode photo: not deflate, never expanded
            for body, kind in ((text, b"/FlateDecode"), (image, b"/DCTDecode")):
                parts.append(
                    b"%d 0 obj\n<< /Length %d /Filter %s >>\nstream\n" % (k, len(body), kind)
                    + body
                    + b"\nendstream\nendobj\n"
                )
        pdf.write_bytes(b"".join([*parts, b"trailer\n<< >>\n%%EOF\n"]))

    def timed() -> float:
        start = time.perf_counter()
        scan("ana", _setup(c))
        return time.perf_counter() - start

    timed()  # the scan's own start, paid once
    write(500)
    small = min(timed(), timed())
    write(4000)
    big = timed()
    assert big / small < 12, f"{small:.2f} s pour 500 pages, {big:.2f} s pour 4 000"


@pytest.mark.slow
def test_a_classmates_large_file_in_the_exchange_never_blocks_every_erasure(
    petite_classe, monkeypatch
):
    """Review5: a classmate's file in the exchange over 50 MiB is named « non lu par cette
    commande, à vérifier à la main », whoever is erased, though nbgrader accepts 100 MB per
    file and the class folder's own files are read up to 256 MiB. Ben hands in his tutor's
    database (inbound/ben+oublier+…/memoire.db, 60 MiB): no learner of the class can be erased
    until the teacher deletes Ben's submission from the exchange. Control: the same file in
    his collected folder (grader/submitted/ben/) is read, and ana is erased. (The archive
    member's cap, which the exchange used, is lowered to 1 MiB here, the file made 2 MiB:
    searching 60 MiB four times takes most of a minute.)"""
    from grading.privacy import learner_places, packed

    for module in (packed, learner_places):
        monkeypatch.setattr(module, "MEMBER_MAX", 2**20)
    c = petite_classe
    size = 2 * 2**20
    collected = c["grader"] / "submitted" / "ben" / "oublier" / "memoire.db"
    with open(collected, "wb") as file:
        file.truncate(size)
    assert not _erase(_copy_class(c), "ana").failures  # control: read in grader/
    collected.unlink()
    inbound = c["exchange"] / "memoire-tuteur" / "inbound"
    sent = inbound / "ben+oublier+2025-03-14 17:00:00.000000 UTC+abc" / "memoire.db"
    sent.parent.mkdir()
    with open(sent, "wb") as file:
        file.truncate(size)
    _assert_proved(c, "ana", "le fichier de ben dans l'échange")


def _png_whose_base64_holds(word: bytes) -> str:
    """A real PNG (64×64 pixels of noise, a plot's texture) whose base64 text, as a notebook
    stores an output image, holds `word` between two of base64's « + » and « / »: about one
    image in two thousand does, for three letters."""
    import base64
    import random
    import struct

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body)
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    found = re.compile(rb"[+/]" + word + rb"[+/]", re.I)
    header = chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 2, 0, 0, 0))
    for seed in range(200_000):
        noise = random.Random(seed).randbytes(64 * 193)
        rows = b"".join(b"\0" + noise[r * 193 : r * 193 + 192] for r in range(64))
        png = b"\x89PNG\r\n\x1a\n" + header + chunk(b"IDAT", zlib.compress(rows))
        png += chunk(b"IEND", b"")
        text = base64.b64encode(png)
        if found.search(text):
            return text.decode()
    raise AssertionError("aucune image trouvée")


@pytest.mark.slow
def test_a_classmates_plot_is_no_mention_of_a_short_id(petite_classe):
    """Review5: a notebook's output image is base64 text, whose « + » and « / » are word
    boundaries for the mention pattern: a three-letter id (« ana ») stands between them in
    about one 64×64 plot in two thousand, one per 30 MB of images, so a class's notebooks
    and feedback pages (copied in submitted/, autograded/, feedback/ and, since review4,
    searched in the exchange too) hold such a false mention. Erasing ana then names Ben's
    notebook « mention dans le travail de ben » (refused, the teacher looks for her name in
    his notebook and finds none), and ``CAVIARDER=1`` writes « [retiré] » into his image.
    Control: « Ana » in his notebook's text is found."""
    import json

    from grading.privacy.learner_places import scan

    c = petite_classe
    image = _png_whose_base64_holds(b"ana")
    notebook = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    for text, hers in (("merci Ana", True), ("ma courbe", False)):
        cell = {
            "cell_type": "code",
            "source": "tracer()",
            "outputs": [{"output_type": "display_data", "data": {"image/png": image}}],
        }
        note = {"cell_type": "markdown", "source": text}
        notebook.write_text(json.dumps({"cells": [note, cell]}), encoding="utf-8")
        found = {f.where for f in scan("ana", _setup(c)).found}
        assert (str(notebook) in found) is hers, (text, found)


@pytest.mark.slow
def test_a_backup_holding_a_classmates_mention_of_the_learner_is_pending(petite_classe):
    """Review5: since review4 a backup ``make sauvegarde`` names is skipped by the class scan
    (« _scan_pending »), and ``_backup_holds`` looks there for her folder, roster line and
    SQLite rows only, never for a mention. Ben's notebook names « Ana Martin » (his partner,
    enrolled after the backup); with ``CAVIARDER=1`` his live copy is redacted, the backup
    keeps it, is not listed among the backups to purge, and « Preuve faite » is said; the
    same archive renamed by hand is named by the class scan. Control: a backup holding her own
    folder is pending."""
    from grading.backup import backup
    from grading.privacy.learner_places import _backup_holds, _Who

    c = petite_classe
    grader = c["grader"]
    ana = _Who("ana", "Ana", "Martin", "ana.martin@exemple.fr")
    with_her, *_ = backup(dest_dir=c["tmp"] / "avec", roster=c["roster"], grader_dir=grader)
    assert _backup_holds(with_her, ana)  # control: her folder, her row
    shutil.rmtree(grader / "submitted" / "ana")  # the class before she enrolled
    c["roster"].write_text(ROSTER.replace("ana;Ana;Martin;ana.martin@exemple.fr\n", ""))
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.remove_student("ana")
    import sqlite3

    with closing(sqlite3.connect(grader / "gradebook.db")) as con:
        con.execute("VACUUM")
    notebook = grader / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    notebook.write_text('{"copie de": "ben", "binome": "Ana Martin"}', encoding="utf-8")
    mention, *_ = backup(dest_dir=c["tmp"] / "sans", roster=c["roster"], grader_dir=grader)
    with tarfile.open(mention) as tar:  # Ben's notebook, her name in it
        held = [m for m in tar if m.isfile() and m.name.endswith("ben/oublier/oublier.ipynb")]
        assert b"Ana Martin" in tar.extractfile(held[0]).read()
    assert _backup_holds(mention, ana)


_CHART = """
import sys
import matplotlib
matplotlib.use("pdf")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar(["Ana Martin", "Ben Durand", "Cyr Petit"], [12, 15, 9])
ax.set_title("TP oublier : notes sur 20")
fig.savefig(sys.argv[1], metadata={"Title": sys.argv[2]})
"""


@pytest.mark.slow
def test_a_chart_of_the_class_s_grades_saved_as_pdf_is_named(petite_classe):
    """Review5: since review4, a PDF's deflate streams are expanded and searched for her name
    as plain bytes; but the PDFs a teacher makes never write text plainly: matplotlib (the
    course's own plotting library) draws each glyph or run of glyphs apart (« (A) -30 (na) »),
    a browser's « Imprimer en PDF » writes glyph numbers (checked by hand: Chromium's print of
    the class's report page holds « <0035004400530053…> », and no « Ana »). The teacher's
    chart of the grades, one bar per learner (``plt.savefig("grader/hub/notes.pdf")``), names
    « Ana Martin » under her bar, and the erasure says « Preuve faite ». A PDF should be named
    « à vérifier à la main » unless its text is really read. Control: the same chart whose
    title (the PDF's metadata, plain text) names her is named."""
    import subprocess

    from grading.erase_learner import ErasureError
    from grading_course import BIN

    c = petite_classe
    chart = c["grader"] / "hub" / "notes.pdf"
    draw = [str(BIN / "python"), "-c", _CHART, str(chart)]
    subprocess.run([*draw, "Notes de Ana Martin"], check=True, capture_output=True)
    with pytest.raises(ErasureError, match="notes.pdf"):  # control: her name in its title
        _erase(c, "ana")
    subprocess.run([*draw, "Notes du TP"], check=True, capture_output=True)
    with pytest.raises(ErasureError, match="notes.pdf"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_saved_as_unicode_text_by_a_spreadsheet_is_named(petite_classe):
    """Review5: a file holding a NUL byte is « not text » and searched for her name's UTF-8 or
    Windows-1252 bytes only. Excel's and LibreOffice's « Texte Unicode (*.txt) », Notepad's
    « Unicode » and PowerShell's ``>`` write UTF-16 (« a\\0n\\0a\\0 »): the class list the
    teacher exported that way beside the hub's recipes (grader/hub/eleves-pronote.txt, ana's
    line in it) gets « Preuve faite ». Control: the same list saved as UTF-8 is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    text = (
        "identifiant\tprénom\tnom\tcourriel\r\n"
        "ana\tAna\tMartin\tana.martin@exemple.fr\r\n"
        "ben\tBen\tDurand\tben.durand@exemple.fr\r\n"
    )
    kept = c["grader"] / "hub" / "eleves-pronote.txt"
    kept.write_text(text, encoding="utf-8")
    with pytest.raises(ErasureError, match="eleves-pronote.txt"):  # control: named
        _erase(c, "ana")
    kept.write_bytes("\ufeff".encode("utf-16-le") + text.encode("utf-16-le"))
    with pytest.raises(ErasureError, match="eleves-pronote.txt"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_virtual_environment_a_classmate_handed_in_never_blocks_the_erasure(petite_classe):
    """Review5: review4's venv is skipped outside the data folders only. Ben made his
    environment inside his TP folder (``python -m venv .venv``, as VS Code proposes; nbgrader
    collects it: 30 MB, under its 100 MB per folder), with the course's tools (here Babel, a
    dependency of JupyterLab): the erasure of « ana » is refused on Babel's locale data
    (« ana » in blo.dat, eo.dat…), files nobody of the class wrote. Each file pip installed
    is listed with its SHA-256 in its package's ``RECORD``: a file that matches it is pip's,
    inside a data folder or out (which would also close the ``pyvenv.cfg`` skip to a
    teacher's own files). Control: a file Ben wrote in the same environment naming her is
    named."""
    import subprocess

    from grading.privacy.learner_places import scan
    from helpers import REPO

    c = petite_classe
    env = c["grader"] / "submitted" / "ben" / "oublier" / ".venv"
    uv = str(REPO / ".venv" / "bin" / "uv")
    subprocess.run([uv, "venv", "-q", str(env)], check=True)
    babel = [uv, "pip", "install", "-q", "--offline", "--python", str(env / "bin" / "python")]
    subprocess.run([*babel, "babel==2.19.0"], check=True)
    his = env / "notes-binome.txt"
    his.write_text("binôme : Ana Martin\n", encoding="utf-8")
    found = {f.where for f in scan("ana", _setup(c)).found}
    assert str(his) in found  # control: his own file, named
    his.unlink()
    _assert_proved(c, "ana", "le venv de ben")


@pytest.mark.slow
def test_an_empty_git_folder_a_classmate_handed_in_never_blocks_every_erasure(petite_classe):
    """Review5: any folder named ``.git`` is handed to ``git cat-file``, and one git will not
    read is named « dépôt git illisible », to check by hand. An empty ``.git`` folder in Ben's
    TP folder (a copy that kept the folder and lost its content, or a hostile student's
    ``mkdir .git``) holds nothing, and its files are walked anyway; yet no learner of the class
    can be erased until the teacher edits Ben's submission. Control: the class without it
    erases ana."""

    c = petite_classe
    control = c["tmp"] / "controle"
    shutil.copytree(c["tmp"] / "cours", control / "cours", symlinks=True)
    shutil.copytree(c["exchange"], control / "echange", symlinks=True)
    copy = {**c, "grader": control / "cours" / "grader", "exchange": control / "echange"}
    copy["roster"] = copy["grader"] / "eleves.csv"
    assert not _erase(copy, "ana").failures  # control: « Preuve faite »
    (c["grader"] / "submitted" / "ben" / "oublier" / ".git").mkdir()
    _assert_proved(c, "ana", "un dossier .git vide chez ben")


@pytest.mark.slow
def test_a_course_versioned_in_grader_by_the_teacher_never_blocks_the_erasure(petite_classe):
    """Lead, after review4 (finding 15) and review5: a course downloaded as a zip, the teacher
    runs ``git init`` in grader/ and commits everything, the course's files with hers. The
    repository's objects were searched whole, the course's README and ADMIN.md (which name
    « ana ») with them: erasing « ana » was refused forever. A blob whose content is a course
    file as shipped is no mention now, in git as on disk. Control: her class list committed,
    then removed with ``git rm``, is still named."""
    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    grader = c["grader"]
    (grader / "hub").mkdir(exist_ok=True)
    for shipped in ("README.md", "hub/ADMIN.md"):
        shutil.copy(REPO / "grader" / shipped, grader / shipped)
    assert re.search(rb"\bana\b", (grader / "README.md").read_bytes())
    _git(grader, "init", "-q")
    _git(grader, "add", "README.md", "hub/ADMIN.md", "nbgrader_config.py")
    _git(grader, "commit", "-qm", "le cours, versionné par l'enseignante")
    assert not _erase(_copy_class(c), "ana").failures  # the course's own words: no mention
    (grader / "hub" / "classe.csv").write_text("ana,Ana Martin,ana.martin@exemple.fr\n")
    _git(grader, "add", "hub/classe.csv")
    _git(grader, "commit", "-qm", "ma classe")
    _git(grader, "rm", "-q", "hub/classe.csv")
    _git(grader, "commit", "-qm", "sans la liste")
    with pytest.raises(ErasureError, match="historique git"):
        _erase(c, "ana")


_HIS_FIGURE = """
import sys
import matplotlib
matplotlib.use("pdf")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3, 4], [0.2, 0.5, 0.7, 0.9])
ax.set_title(sys.argv[2])
fig.savefig(sys.argv[1], metadata={"Title": sys.argv[2]})
"""


@pytest.mark.slow
def test_a_pdf_a_classmate_handed_in_never_blocks_every_erasure(petite_classe):
    """Review6: since f62fe1b every PDF is « à vérifier à la main » whatever it holds, and a
    « by hand » item refuses the whole erasure (« Supprimez-les… puis relancez »). Ben saved
    his plot as a PDF in his TP folder (``fig.savefig("courbe.pdf")``; nbgrader collects it,
    as it would his notebook exported « as PDF »): from then on no learner of the class can be
    erased until the teacher deletes a file of Ben's submission, which the course forbids
    (instructor data is sacred). A PDF that cannot name her (its text read, or its words
    absent) never blocks her erasure; one that names her stays named (review5's chart test).
    Control: the class without his PDF erases ana; his PDF names nobody of the class."""
    import subprocess

    from grading_course import BIN

    c = petite_classe
    assert not _erase(_copy_class(c), "ana").failures  # control: « Preuve faite »
    his = c["grader"] / "submitted" / "ben" / "oublier" / "courbe.pdf"
    draw = [str(BIN / "python"), "-c", _HIS_FIGURE, str(his), "Taux de rappel"]
    subprocess.run(draw, check=True, capture_output=True)
    assert his.read_bytes().startswith(b"%PDF") and b"Ana" not in his.read_bytes()
    _assert_proved(c, "ana", "le PDF de ben")


@pytest.mark.slow
@pytest.mark.parametrize("where", ["info/classe.csv", "pack/pack-{sha}.pack"])
def test_what_git_does_not_read_in_a_repository_s_store_is_named(petite_classe, where):
    """Review6: the walk leaves to git every file of ``objects/`` whose name looks like git's
    (``_GIT_OBJECT``), and git lists only the objects it indexed. ``info/.+`` takes any
    file under ``objects/info/`` for git's: the lead's own test drops the class list at
    ``objects/classe.csv`` (named), the same list at ``objects/info/classe.csv`` gets
    « Preuve faite ». A pack whose index is missing (``git index-pack`` stopped, the ``.idx``
    lost in a copy) has git's name ``pack-<sha>.pack`` but git never lists its objects: the
    class list in it gets « Preuve faite » too. Control: the same pack indexed is named."""
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    store = notes / ".git" / "objects"
    if where.startswith("info/"):
        dropped = store / where
        dropped.write_text("ana;Ana;Martin;ana.martin@exemple.fr\n", encoding="utf-8")
        control = _copy_class(c)  # control: the same list one folder up is named
        copied = control["grader"] / "hub" / "notes" / ".git" / "objects"
        (copied / where).rename(copied / "classe.csv")
        with pytest.raises(ErasureError, match="objects/classe.csv"):
            _erase(control, "ana")
    else:
        work = _history_naming_ana(c)
        received = subprocess.run(
            ["git", "-C", str(work), "pack-objects", "--all", "--stdout"],
            input=b"",
            capture_output=True,
            check=True,
        ).stdout
        dropped = store / where.format(sha=received[-20:].hex())  # git's name: its checksum
        dropped.write_bytes(received)
        subprocess.run(["git", "index-pack", str(dropped)], check=True, capture_output=True)
        with pytest.raises(ErasureError, match="notes"):  # control: indexed, read through git
            _erase(_copy_class(c), "ana")
        dropped.with_suffix(".idx").unlink()
        dropped.with_suffix(".rev").unlink(missing_ok=True)
    listed = ["git", "--git-dir", str(notes / ".git"), "cat-file", "--batch-all-objects"]
    listed = subprocess.run([*listed, "--batch-check"], capture_output=True, check=True)
    assert listed.stdout == b""  # git lists nothing: only the walk can read it
    with pytest.raises(ErasureError, match="notes"):
        _erase(c, "ana")


@pytest.mark.slow
def test_her_folder_in_a_long_path_the_teacher_noted_is_named(petite_classe):
    """Review6: since f62fe1b a run of 76 or more characters of base64's alphabet
    (``_BASE64``: letters, digits, « / » and « + ») is taken for an output image and no
    mention inside it counts. A path with no « - », « _ », « . » or space is such a run once
    it is long: the teacher notes in grader/hub/a-revoir.txt the notebook she must reread,
    ``/home/enseignant/Documents/Enseignement/NSI2024/coursIA/grader/submitted/ana/oublier/
    oublier.ipynb`` (as her terminal printed it), and the erasure of ana says « Preuve faite »
    with her id still there. Control: the same note with the path from grader/ is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    note = c["grader"] / "hub" / "a-revoir.txt"
    short = "À relire : grader/submitted/ana/oublier/oublier.ipynb\n"
    note.write_text(short, encoding="utf-8")
    with pytest.raises(ErasureError, match="a-revoir.txt"):  # control, on a copy
        _erase(_copy_class(c), "ana")
    prefix = "/home/enseignant/Documents/Enseignement/NSI2024/coursIA/"
    note.write_text(short.replace("grader/", prefix + "grader/"), encoding="utf-8")
    with pytest.raises(ErasureError, match="a-revoir.txt"):
        _erase(c, "ana")


@pytest.mark.slow
def test_the_course_s_compiled_code_copied_with_the_course_never_blocks_the_erasure(
    petite_classe,
):
    """Review6: a ``.pyc`` of a course file is passed over only when its header holds its
    source's current time and size (f62fe1b). Copying the course folder without the times
    (``cp -r cours-2025 cours-2026`` for the new year, a ``git checkout`` back and forth, an
    unzip) keeps every ``__pycache__`` whose bytes are exactly the compilation of the
    shipped source, but their header no longer names the source's time: each is searched,
    and the docstring of grader/hub/cgroup_caps.py (« for a user `ana` », the hub imports it
    from there) refuses the erasure of every learner called ana until Python happens to
    compile that module again. Control: compiled in place, it is passed over."""
    import marshal
    import py_compile

    from helpers import REPO

    c = petite_classe
    source = c["grader"] / "hub" / "cgroup_caps.py"
    shutil.copy(REPO / "grader" / "hub" / "cgroup_caps.py", source)  # as the course ships it
    assert re.search(rb"\bana\b", source.read_bytes())  # the course's own example name
    compiled = Path(py_compile.compile(str(source), doraise=True))
    assert not _erase(_copy_class(c), "ana").failures  # control: compiled in place, skipped
    os.utime(source, (source.stat().st_atime, source.stat().st_mtime + 3600))  # cp -r
    code = compile(source.read_bytes(), str(source), "exec")
    assert compiled.read_bytes()[16:] == marshal.dumps(code)  # its compilation, byte for byte
    _assert_proved(c, "ana", "le code compilé du cours")


@pytest.mark.slow
def test_a_backup_made_after_her_erasure_holding_only_the_tp_s_text_is_not_pending(
    petite_classe,
):
    """Review6: since f62fe1b ``_backup_holds`` counts a mention of her in any member, but
    with ``mention_pattern(who)`` alone: neither the released TP's lines (the class scan's
    ``released``) nor a classmate's own name are left out. The TP names a sample learner as
    data (« `alice` », its ``user_id``; here « `ana` »), so every classmate's copy in a backup
    holds it: a backup ``make sauvegarde`` made after her erasure, without her folder, row or
    line, is « sauvegarde » pending for her, and so is the fresh one its advice makes
    (« make sauvegarde CONFIRMER=1 GARDER=1 »): the pending list never empties. Control: the
    class scan counts no mention in the same copy; Ben's own words about her are held."""
    import json
    import sqlite3

    from grading.backup import backup
    from grading.privacy.learner_places import Context, _backup_holds, _Who, mention_pattern, scan

    c = petite_classe
    grader = c["grader"]
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    release.parent.mkdir(parents=True)
    given = "Les tests utilisent la base de `ana` (son `user_id`) et de `bob`."
    cell = {"cell_type": "markdown", "id": "c1", "metadata": {}, "source": [given + "\n"]}
    nb = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    release.write_text(json.dumps(nb), encoding="utf-8")
    copy = grader / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    copy.write_text(json.dumps(nb, indent=1), encoding="utf-8")  # the TP as Ben handed it in
    ana = _Who("ana", "Ana", "Martin", "ana.martin@exemple.fr")
    found = {f.where for f in scan("ana", _setup(c)).found}
    assert str(copy) not in found  # control: the TP's own line is no mention in the class
    shutil.rmtree(grader / "submitted" / "ana")  # the class once she is erased
    c["roster"].write_text(ROSTER.replace("ana;Ana;Martin;ana.martin@exemple.fr\n", ""))
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        gb.remove_student("ana")
    with closing(sqlite3.connect(grader / "gradebook.db")) as con:
        con.execute("VACUUM")
    after, *_ = backup(dest_dir=c["tmp"] / "apres", roster=c["roster"], grader_dir=grader)
    mine = {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": ["Relu avec Ana."]}
    copy.write_text(json.dumps({**nb, "cells": [cell, mine]}, indent=1), encoding="utf-8")
    his, *_ = backup(dest_dir=c["tmp"] / "binome", roster=c["roster"], grader_dir=grader)
    ctx = Context(_setup(c))  # what the erasure reads of the class: its released TP
    mentions = mention_pattern(ana, others=ctx.classmates, released=ctx.released_lines)
    assert _backup_holds(his, ana, mentions)  # control: his own words about her
    assert not _backup_holds(after, ana, mentions)


@pytest.mark.slow
def test_a_comment_naming_the_learner_in_the_demo_s_gradebook_is_named(petite_classe):
    """Review6 (review5's finding 4, second half, untested): f62fe1b searches the demo for a
    mention in the work of a learner of the class copied there (``demo/submitted/ben/``), and
    its other files, its gradebook among them, still for her e-mail and row bytes only. The
    teacher who grades Ben's copied work in the demo's formgrader writes on it « même code
    qu'Ana Martin » (comment.manual_comment of Ben's row in grader/demo/gradebook.db): the
    erasure of ana says « Preuve faite » with her name in it, where the same comment in the
    class's gradebook is refused (« commentaire à corriger dans formgrader »). Control: the
    same comment giving her e-mail is named."""
    from grading.erase_learner import ErasureError
    from grading_course import grading
    from nbgrader.api import MissingEntry

    c = petite_classe
    grader = c["grader"]
    proc = grading(grader, "demo", "--only", "graine")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    demo_db = grader / "demo" / "gradebook.db"
    assert demo_db.is_file()

    def comment_on_ben(text: str, db: Path) -> None:
        with Gradebook(f"sqlite:///{db}") as gb:
            gb.update_or_create_student("ben", first_name="Ben", last_name="Durand")
            notebook = gb.find_assignment("oublier").notebooks[0].name
            try:
                submission = gb.find_submission_notebook(notebook, "oublier", "ben")
            except MissingEntry:  # his first grading in the demo
                gb.add_submission("oublier", "ben")
                submission = gb.find_submission_notebook(notebook, "oublier", "ben")
            assert submission.comments
            submission.comments[0].manual_comment = text
            gb.db.commit()

    comment_on_ben("Même code que ana.martin@exemple.fr, à revoir.", demo_db)
    control = _copy_class(c)
    with pytest.raises(ErasureError, match="demo"):  # control: her e-mail, named
        _erase(control, "ana")
    comment_on_ben("Même code qu'Ana Martin, à revoir ensemble.", demo_db)
    with closing(sqlite3.connect(demo_db)) as con:
        con.execute("VACUUM")  # the e-mail's old page gone: only the comment names her
    assert b"ana.martin@" not in demo_db.read_bytes() and b"Ana Martin" in demo_db.read_bytes()
    with pytest.raises(ErasureError, match="demo"):
        _erase(c, "ana")


@pytest.mark.slow
def test_git_s_multi_pack_index_never_blocks_every_erasure(petite_classe):
    """Review6: since f62fe1b a file of a repository's ``objects/`` whose name is not one of
    ``_GIT_OBJECT``'s (loose objects, ``pack-<sha>.*``, ``info/…``) is a stray, and a binary
    stray with no trace is named « fichier binaire dans le magasin d'un dépôt git, que git ne
    lit pas ». git writes its own files there under other names: ``objects/pack/
    multi-pack-index`` (``git multi-pack-index write``, ``git maintenance``'s incremental
    repack, ``scalar``, ``git repack --write-midx``). The teacher's notes repository in
    grader/hub/ then blocks the erasure of every learner. Control: the same repository
    before git wrote it erases ana."""

    c = petite_classe
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    (notes / "LISEZMOI").write_text("mes notes\n", encoding="utf-8")
    _git(notes, "add", "LISEZMOI")
    _git(notes, "commit", "-qm", "mes notes")
    _git(notes, "repack", "-qad")
    assert not _erase(_copy_class(c), "ana").failures  # control: « Preuve faite »
    _git(notes, "multi-pack-index", "write")
    assert (notes / ".git" / "objects" / "pack" / "multi-pack-index").is_file()
    _assert_proved(c, "ana", "l'index de git")


@pytest.mark.slow
def test_the_class_s_own_copy_of_the_course_s_file_list_never_blocks_an_erasure(petite_classe):
    """Review6: the class scan leaves out the list of the course's files (``LIST``) of the code
    that runs, not the class folder's own copy. Run with ``--grader-dir`` on a class folder
    that holds the course (as every test of this module does), its
    ``grading/privacy/course_files.txt`` (never in itself) is a teacher's file: it names
    ``grading/demo.py``, ``hub/…``, ``grading/rapport.py``, so the erasure of « demo » (the
    account a teacher makes to try the hub, enrolled as a learner) is refused on a file of
    the course. Control: « cyr », whose id no file of the course holds, is erased."""

    c = petite_classe
    _enrol(c, "demo", "Compte", "Démonstration")
    folder = c["grader"] / "submitted" / "demo" / "oublier"
    folder.mkdir(parents=True)
    (folder / "oublier.ipynb").write_text('{"copie de": "demo"}', encoding="utf-8")
    listed = c["grader"] / "grading" / "privacy" / "course_files.txt"
    assert re.search(rb"\bgrading/demo\.py\b", listed.read_bytes())
    assert not _erase(_copy_class(c), "cyr", control="ben").failures  # control
    _assert_proved(c, "demo", "la liste des fichiers du cours")


@pytest.mark.slow
def test_git_s_own_folder_names_are_no_mention_of_a_short_id(petite_classe):
    """Lead, after review6: names outside the data folders are searched, but git names its
    loose objects' folders by two hexadecimal digits (objects/fe/): a learner « fe » was named
    in every repository holding such an object. Git's store is read through git, never by its
    names. Control: a note of the teacher's named « fe.txt » is named."""
    import hashlib

    from grading.erase_learner import ErasureError

    c = petite_classe
    _enrol(c, "fe", "Fé", "Lopez")
    notes = c["grader"] / "hub" / "notes"
    notes.mkdir()
    _git(notes, "init", "-q")
    body = next(  # a note whose blob git stores in objects/fe/
        text
        for k in range(100000)
        if hashlib.sha1(b"blob %d\0%s" % (len(text := b"note %d\n" % k), text)).hexdigest()[:2]
        == "fe"
    )
    (notes / "LISEZMOI").write_bytes(body)
    _git(notes, "add", "LISEZMOI")
    _git(notes, "commit", "-qm", "mes notes")
    assert (notes / ".git" / "objects" / "fe").is_dir()
    (c["grader"] / "hub" / "fe.txt").write_text("rien\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="fe.txt"):  # control: her name as a file's, named
        _erase(_copy_class(c), "fe")
    (c["grader"] / "hub" / "fe.txt").unlink()
    assert not _erase(c, "fe").failures


@pytest.mark.slow
def test_a_clone_of_the_course_in_grader_never_blocks_the_erasure(petite_classe):
    """Review4: a git repository in grader/ is searched object by object, with no regard for
    what the course ships: a teacher who clones the course's next version beside her class
    (``git clone … grader/cours-2025`` to compare it) brings the course's own history, whose
    tests and samples name « ana » hundreds of times. Erasing her real learner « ana » is then
    refused on « historique git à réécrire à la main », a history that is not hers to rewrite.
    Measured: the course's whole history, 85 MB through ``git cat-file``, takes 4 min 35 s
    to search, then refuses; here its last commit only (``--depth 1``, nothing checked out:
    only git's objects are there)."""
    import subprocess

    from grading.erase_learner import ErasureError
    from helpers import REPO

    c = petite_classe
    clone = c["grader"] / "cours-2025"
    command = ["git", "clone", "-q", "--depth", "1", "--no-checkout", f"file://{REPO}", str(clone)]
    subprocess.run(command, check=True)
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        said = str(exc)[:1500]
        pytest.fail(f"l'historique du cours bloque l'effacement d'ana\u00a0: {said}")
    assert not result.failures, result.failures


@pytest.mark.slow
def test_a_class_list_committed_in_a_clone_of_the_course_in_grader_is_named(petite_classe, capsys):
    """The other side of the clone above: what the teacher commits in it (a class list, then
    ``git rm``) is the class's, not the course's history, and is searched; the summary names
    the clone beside the course's own repository, whose history it copies and which no
    erasure searches."""
    import subprocess

    from grading.erase_learner import ErasureError, main
    from helpers import REPO

    c = petite_classe
    clone = c["grader"] / "cours-2025"
    command = ["git", "clone", "-q", "--depth", "1", f"file://{REPO}", str(clone)]
    subprocess.run(command, check=True)
    (clone / "liste-groupe-b.csv").write_text("ana;Ana;Martin\n", encoding="utf-8")
    _git(clone, "add", "liste-groupe-b.csv")
    _git(clone, "commit", "-qm", "groupe B")
    _git(clone, "rm", "-q", "liste-groupe-b.csv")
    _git(clone, "commit", "-qm", "sans la liste")
    with pytest.raises(ErasureError, match="historique git à réécrire à la main"):
        _erase(c, "ana")
    places = ["--eleves", str(c["roster"]), "--echange", str(c["exchange"])]
    assert main(["ana", "--temoin", "cyr", *places, "--grader-dir", str(c["grader"])]) == 0
    said = capsys.readouterr().out
    assert f"clone du dépôt du cours\u00a0: {clone / '.git'}" in said, said[-1500:]


@pytest.mark.slow
def test_compiled_code_of_a_module_an_update_of_the_course_moved_never_blocks_the_erasure(
    petite_classe,
):
    """Review6: an update of the course that moves or removes a module (1141a1c moved
    ``grading/learner_places.py`` to ``grading/privacy/``; issue 35 moves most of grading/)
    leaves the teacher's ``grading/__pycache__/learner_places.cpython-311.pyc``, compiled when
    she last ran ``make oublier-eleve``: git never removes it and Python never compiles it
    again. Its source is gone, so ``_compiled_course_file`` says « not the course's », and it
    is searched: the old module's docstrings (« ``ana/oublier/oublier.ipynb`` », the course's
    example learner) refuse the erasure of ana, and the teacher is told to delete a file of
    the course. Control: the class before the update erases ana."""
    import py_compile

    from grading.erase_learner import ErasureError

    c = petite_classe
    # a function of the module before 1141a1c, its docstring as the course shipped it
    old = (
        b"def _owned(path: str, sid: str) -> bool:\n"
        b'    """Whether a download member (``/<archive stem>/<member>``) is the learner\'s.\n\n'
        b"    The first folder inside the archive that names a learner of the class (or\n"
        b"    `sid`) decides: an ENT that puts each copy one folder deeper\n"
        b"    (``ana/oublier/oublier.ipynb``,\n"
        b"    ``ana/brouillon/\xe2\x80\xa6``) keeps them Ana's; a file name is never an owner\n"
        b'    (``ben/ana.ipynb`` is Ben\'s)."""\n'
        b"    return path.split('/')[1] == sid\n"
    )
    assert re.search(rb"\bana/oublier\b", old)  # the course's own example, in a docstring
    assert not _erase(_copy_class(c), "ana").failures  # control: « Preuve faite »
    source = c["grader"] / "grading" / "learner_places.py"
    source.write_bytes(old)  # the course before the update, as she ran it
    py_compile.compile(str(source), doraise=True)
    source.unlink()  # git pull: the module moved to grading/privacy/
    try:
        result = _erase(c, "ana")
    except ErasureError as exc:
        said = str(exc)[:1500]
        pytest.fail(f"le code compilé d'une version du cours bloque l'effacement\u00a0: {said}")
    assert not result.failures, result.failures


@pytest.mark.slow
def test_compiled_code_of_a_script_she_deleted_is_deleted_with_the_learner(petite_classe):
    """The other side of the moved module: the compiled copy of a teacher's script she deleted
    (its list of the class in a constant) names the learner; Python no longer uses it, so the
    erasure deletes it and proves it gone. One that names nobody stays, as does a classmate's
    (test_compiled_code_in_a_classmates_folder_is_searched)."""
    import py_compile

    c = petite_classe
    folder = c["grader"] / "outils"
    folder.mkdir()
    for name, text in (("groupes", "GROUPE_B = ['ana', 'ben']\n"), ("vide", "X = 1\n")):
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
        py_compile.compile(str(folder / f"{name}.py"), doraise=True)
        (folder / f"{name}.py").unlink()
    compiled = {p.name.split(".")[0]: p for p in (folder / "__pycache__").iterdir()}
    result = _erase(c, "ana")
    assert not result.failures, result.failures
    assert any(f.kind == "code compilé sans sa source" for f in result.before.found)
    assert not compiled["groupes"].exists() and compiled["vide"].exists()
