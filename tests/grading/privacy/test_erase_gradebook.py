"""The gradebook (learner_places ``_scan_gradebook``): her row in another Unicode form, its
bytes in a WAL file, a gradebook on a server (the unknown-id check, a URL that cannot be read and
its password never shown), the teacher's comments on classmates that name her, and copies of the
gradebook (SQLite files, named, never rewritten)."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3
import unicodedata
from contextlib import closing
from pathlib import Path

import pytest
from erase_scenes import _copy_class, _erase, _make_from, _setup
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(300)]


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
def test_a_wal_gradebook_read_meanwhile_keeps_no_byte_of_her(petite_classe):
    """A gradebook in WAL mode (journal_mode=wal) that another process reads meanwhile (the
    formgrader open, a report being made): VACUUM goes to the -wal, `wal_checkpoint(TRUNCATE)`
    is silently busy, and the main file keeps her old pages (her e-mail), while the command says
    « Preuve faite ». The proof cannot see it: after the erasure her name and e-mail are no
    longer known (roster line and gradebook row gone), so the rescan looks for her id only."""

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


def _sqlite_ok(path: Path) -> bool:

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
def test_a_gradebook_whose_comments_cannot_be_read_is_refused_in_french(petite_classe):
    """Review5: the search of the teacher's comments on classmates runs in
    ``suppress(sqlite3.DatabaseError)``; when that query fails (no ``comment`` table: a
    gradebook cut down by hand or by another tool, or its pages damaged), ``comments`` is never
    set and ``make oublier-eleve`` stops on a Python traceback (UnboundLocalError) after the
    gradebook was judged readable. It should refuse in French (« Carnet de notes illisible »),
    as for any other damage, or name it. Control: the intact gradebook erases ana."""

    from grading.erase_learner import ErasureError

    c = petite_classe
    db = c["grader"] / "gradebook.db"
    copy = _copy_class(c, "controle")
    assert not _erase(copy, "ana").failures  # control: erased, « Preuve faite »
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE comment")
    try:
        _erase(c, "ana")
    except ErasureError as exc:
        assert "gradebook.db" in str(exc), exc
    except Exception as exc:  # noqa: BLE001 (what the teacher sees: a traceback)
        pytest.fail(f"traceback au lieu d'un refus en français\u00a0: {exc!r}")
