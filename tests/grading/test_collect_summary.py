"""``make collect`` and ``make release-feedback`` say in French what they did (issue 22,
point 5), from nbgrader's own records, with real Unix users and nbgrader's exchange: who was
collected (and when), replaced, left as it was, set aside; a collected id the class list does not
have; whose feedback page was given back and who is still waiting for one. nbgrader's English
stays in the log."""

from __future__ import annotations

import subprocess

import pytest
from exchange_class import Student, exchange_root, released_copy, tag, unix_users
from grading.collect import read_collect_log
from grading_course import copy_course, grading, register
from helpers import REPO
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NBSP = "\u00a0"
ENGLISH = ("Collecting submission", "Updating submission", "Releasing feedback", "[CollectApp")


def _said(proc: subprocess.CompletedProcess) -> str:
    out = proc.stdout + proc.stderr
    assert not any(word in out for word in ENGLISH), out  # nbgrader's English: the log only
    return out


def q(text: str) -> str:
    return f"«{NBSP}{text}{NBSP}»"


def test_collect_and_release_feedback_say_who_in_french(course):
    t = tag()
    ana, bob, eve, zoe = (f"c22{t}{name}" for name in ("ana", "bob", "eve", "zoe"))
    zoe_registered = f"c22{t}zoé"  # the class list's spelling; her account cannot have an accent
    last_names = {ana: "Martin", bob: "Durand", zoe_registered: "Roux"}
    register(course, *last_names, last_names=last_names)
    exchange_arg = []
    with unix_users([ana, bob, eve, zoe]), exchange_root() as exchange:
        exchange_arg = [f"--Exchange.root={exchange}"]
        released_copy(exchange)
        for user, sample in ((ana, "complete_vacuum"), (bob, "graine"), (zoe, "ebauche")):
            written = "Sessions, puis VACUUM." if user == ana else None  # to grade by hand
            done = Student.account(user).submit(course, exchange, sample, written=written)
            assert done.returncode == 0, done.stdout + done.stderr
        forged = Student.account(eve).submit(course, exchange, "ebauche", f"--student={bob}")
        assert forged.returncode == 0, forged.stdout + forged.stderr

        first = grading(course, "collect", "oublier", *exchange_arg)
        said = _said(first)
        assert first.returncode == 1, said  # a copy set aside, a student not on the list
        assert "3 rendu(s) ramassé(s)" in said, said
        for user in (ana, bob, zoe):
            assert f"{q(user)} (" in said, said  # named, with the time of the copy
        assert "1 rendu(s) mis de côté" in said and f"appartient à {q(eve)}" in said, said
        assert f"{q(zoe)}{NBSP}; le plus proche inscrit est {q(zoe_registered)}" in said, said
        log = (course / "rapport" / "collect.log").read_text(encoding="utf-8")
        assert f"Collecting submission: {ana} oublier" in log  # nbgrader's own record, kept
        assert sorted(read_collect_log(log, "oublier").of("collected")) == sorted([ana, bob, zoe])

        again = Student.account(bob).submit(course, exchange, "complete_vacuum")
        assert again.returncode == 0, again.stdout + again.stderr
        kept = _said(grading(course, "collect", "oublier", *exchange_arg))
        assert "gardé(s) tel(s) quel(s)" in kept and "ARGS=--update" in kept, kept
        updated = grading(course, "collect", "oublier", "--update", *exchange_arg)
        said = _said(updated)
        assert f"1 rendu(s) remplacé(s) par un plus récent{NBSP}: {q(bob)} (" in said, said
        assert "rien de plus récent" in said and q(ana) in said, said

        graded = grading(course, "autograde", "oublier", f"--student={ana}")
        # graded; the command still names zoe's folder (not on the list) and fails for it
        assert "1 rendu(s) noté(s)" in graded.stdout, graded.stdout + graded.stderr
        pages = grading(course, "feedback", "oublier", f"--student={ana}")
        assert pages.returncode == 0, pages.stdout + pages.stderr
        given = grading(course, "release_feedback", "oublier", *exchange_arg)
        said = _said(given)
        assert given.returncode == 0, said
        assert f"1 page(s) de retour rendue(s){NBSP}: {q(ana)}" in said, said
        assert "sans page de retour (make feedback d'abord)" in said, said
        assert q(bob) in said and q(zoe) in said, said
        released = list((exchange / "memoire-tuteur" / "feedback").glob("*.html"))
        assert len(released) == 1, released
        # given back before her written answer was graded: said, whom to give back again
        assert "1 page(s) rendue(s) avec une note provisoire" in said and q(ana) in said, said
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
            grade = gb.find_grade("documentation", "oublier", "oublier", ana)
            grade.manual_score, grade.needs_manual_grade = 1.5, False  # as formgrader saves it
            gb.db.commit()
        said = _said(grading(course, "release_feedback", "oublier", *exchange_arg))
        assert "provisoire" not in said, said
        assert "plus ancienne(s) que le carnet de notes (make feedback" in said, said
        assert grading(course, "feedback", "oublier", f"--student={ana}").returncode == 0
        said = _said(grading(course, "release_feedback", "oublier", *exchange_arg))
        assert "⚠" not in said and f"1 page(s) de retour rendue(s){NBSP}: {q(ana)}" in said, said


def test_make_runs_the_french_commands():
    """``make collect`` and ``make release-feedback`` run these commands, not raw nbgrader."""
    dry = subprocess.run(
        ["make", "-n", "-C", str(REPO), "collect", "release-feedback", "A=oublier"],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
    )
    assert "-m grading.collect oublier" in dry.stdout, dry.stdout + dry.stderr
    assert "-m grading.release_feedback oublier" in dry.stdout, dry.stdout + dry.stderr


def test_a_set_aside_name_cannot_drive_the_teachers_terminal():
    """A folder name is the student's text: its control characters are shown, never sent."""
    log = (
        "[CollectApp | CRITICAL] 1 copie(s) de «\u00a0oublier\u00a0» mise(s) de côté, non "
        "collectée(s)\u00a0:\n"
        "      - bob+oublier+x\x1b]0;pwned\x07 : nom de dépôt illisible ; laissée dans l'échange\n"
    )
    from grading.classroom.ids import shown as _shown
    from grading.collect import read_collect_log

    (line,) = read_collect_log(log, "oublier").set_aside
    assert "\x1b" in line and "\x1b" not in _shown(line) and "\\x1b]0;pwned\\x07" in _shown(line)


@pytest.mark.parametrize(
    ("written", "shown_as"),
    [
        (b"2025-03-14 16:59:00.000000 UTC", "14/03/2025"),
        (b"\xff\xfe pas une date", "\ufffd\ufffd pas une date"),
        (b"demain\x1b]0;pwned\x07", "demain\\x1b]0;pwned\\x07"),
    ],
    ids=["heure", "pas-utf8", "sequence"],
)
def test_a_collected_copy_s_time_is_shown_whatever_its_file_holds(tmp_path, written, shown_as):
    """The summary's time of a copy comes from its ``timestamp.txt``: one that is not UTF-8
    stopped ``make collect`` on a traceback (found by the shrink-collect helper); one that is not
    a date is shown as it is, never as an escape sequence sent to the teacher's terminal."""
    from grading.collect import _stamp

    (tmp_path / "timestamp.txt").write_bytes(written)
    said = _stamp(tmp_path)
    assert shown_as in said and "\x1b" not in said, said
    assert _stamp(tmp_path / "absent") == ""


def test_a_course_folder_that_is_not_there_is_one_french_sentence(tmp_path):
    absent = tmp_path / "absent" / "grader"
    here = copy_course(tmp_path / "cours")  # where the tools run: a course's grader/
    for module in ("collect", "release_feedback"):
        proc = grading(here, module, "oublier", "--grader-dir", str(absent))
        assert proc.returncode == 2, proc
        assert proc.stderr.strip().endswith(f"dossier du cours introuvable{NBSP}: {absent}"), proc
        assert "Traceback" not in proc.stderr and not absent.exists()


def test_collect_before_the_class_is_registered_makes_no_gradebook(tmp_path):
    """Review2 (89a5214 says no reader creates a gradebook): ``make collect`` still does, through
    stock ``nbgrader collect`` (its ``Gradebook(db_url)`` for the due date): run before ``make
    students``, or after the gradebook was lost, it leaves an empty gradebook.db, and ``make
    grade`` then says « inscrivez d'abord la classe » instead of « introuvable ; restaurez la
    dernière sauvegarde »: a lost gradebook is masked, the restore hint gone. Control: the
    collect itself succeeds and says there was nothing to collect."""
    here = copy_course(tmp_path / "cours")
    exchange = tmp_path / "echange"
    (exchange / "memoire-tuteur" / "inbound").mkdir(parents=True)
    gradebook = here / "gradebook.db"
    assert not gradebook.exists()
    proc = grading(here, "collect", "oublier", f"--Exchange.root={exchange}")
    assert proc.returncode == 0 and "aucun rendu déposé" in proc.stdout, proc
    assert not gradebook.exists(), "make collect a créé un carnet de notes vide"


def test_collect_with_a_damaged_gradebook_is_refused_in_french(tmp_path):
    """Review2: ``make collect`` reads the registered students (``registered_students``) after
    nbgrader's run, with no check of the gradebook first: a damaged gradebook (a truncated
    file) ends the command on a Python traceback (GradebookError) where the teacher must read
    one French refusal with the restore hint, as ``make grade`` and ``make export`` give."""
    here = copy_course(tmp_path / "cours")
    exchange = tmp_path / "echange"
    (exchange / "memoire-tuteur" / "inbound").mkdir(parents=True)
    (here / "gradebook.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 84)
    proc = grading(here, "collect", "oublier", f"--Exchange.root={exchange}")
    assert proc.returncode != 0, proc
    assert "carnet de notes" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr


def test_collect_before_the_class_is_registered_makes_no_gradebook_on_a_server(
    tmp_path, postgres_cluster
):
    """Review3: f60fa71 has the exchange open the gradebook only when its SQLite file exists;
    a gradebook on a server (CourseDirectory.db_url on PostgreSQL, which the course reads) is
    always opened with nbgrader's ``Gradebook(db_url)``, which creates its tables: ``make
    collect`` before ``make students`` leaves an empty gradebook in the class's database,
    and ``make grade`` says « inscrivez d'abord la classe » where it said « introuvable ».
    Control: before the collect, the course reads no gradebook there."""
    import sqlalchemy
    from grading.classroom.gradebook import gradebook_rows
    from grading.classroom.paths import course_dirs

    here = copy_course(tmp_path / "cours")
    exchange = tmp_path / "echange"
    (exchange / "memoire-tuteur" / "inbound").mkdir(parents=True)
    url = postgres_cluster.creer_base("carnet_avant_inscription").replace("+asyncpg", "")
    config = here / "nbgrader_config.py"
    config.write_text(
        config.read_text(encoding="utf-8") + f"\nc.CourseDirectory.db_url = {url!r}\n",
        encoding="utf-8",
    )
    assert course_dirs(here).db_url == url
    assert gradebook_rows(url, "select 1") is None  # the control: no gradebook there yet
    proc = grading(here, "collect", "oublier", f"--Exchange.root={exchange}")
    assert proc.returncode == 0 and "aucun rendu déposé" in proc.stdout, proc
    engine = sqlalchemy.create_engine(url)
    try:
        with engine.connect() as con:
            tables = sqlalchemy.inspect(con).get_table_names()
    finally:
        engine.dispose()
    assert "student" not in tables, f"make collect a créé un carnet de notes vide\u00a0: {tables}"


def test_without_an_exchange_collect_and_release_feedback_say_why_in_french(tmp_path):
    """Teacher's walk, stop 60: without a hub, `make release-feedback` said « nbgrader
    release_feedback failed » (nbgrader's closing line, its reason « Unwritable directory,
    please contact your instructor » left in the log) and named every collected student
    « sans page de retour (make feedback d'abord) », those whose page make feedback had just
    written included; `make collect` said « nbgrader collect failed ». Each says, in French, that
    the exchange is missing and what to do without a hub; only a student without a page is
    sent to make feedback."""
    here = copy_course(tmp_path / "cours")
    absent = tmp_path / "pas-d-echange"
    for student in ("ana", "ben"):
        (here / "submitted" / student / "oublier").mkdir(parents=True)
        (here / "submitted" / student / "oublier" / "oublier.ipynb").write_text("{}")
    (here / "feedback" / "ana" / "oublier").mkdir(parents=True)
    (here / "feedback" / "ana" / "oublier" / "oublier.html").write_text("<p>retour</p>")
    for module in ("collect", "release_feedback"):
        proc = grading(here, module, "oublier", f"--Exchange.root={absent}")
        said = _said(proc)
        assert proc.returncode == 1, said
        assert f"dossier de l'échange de nbgrader{NBSP}: {absent}" in said, said
        assert "failed" not in said and "Unwritable" not in said, said
        assert "make zip-collect" in said and "grader/hub/ADMIN.md" in said, said
        if module == "release_feedback":
            waiting = f"1 rendu(s) ramassé(s) sans page de retour (make feedback d'abord){NBSP}: "
            assert waiting + q("ben") in said, said
    assert not absent.exists()
