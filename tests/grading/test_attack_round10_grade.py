"""Round 10 of the attacks on the grading tools (``make sauvegarde``, ``make grade``, the report,
...): inputs a student controls, or what a busy teacher does, that crash a tool with a
traceback, lose or hide data, or mislead. Each test states the behaviour expected; all failed
when written."""

from __future__ import annotations

import json
import subprocess
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from grading.samples import build_submission
from grading_course import REPO, generated_course, grading, register, start_grading, submit
from read_only import changes, freeze, snapshot, thaw


def _notebook_json(grader: Path, sample: str = "complete_vacuum") -> dict:
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (REPO / "grader" / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
    return json.loads(nbformat.writes(build_submission(release, text)))


def _put(grader: Path, student: str, text: str) -> Path:
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "oublier.ipynb").write_text(text, encoding="utf-8")
    return folder


# --- make sauvegarde: a submitted notebook nested deeper than Python's JSON decoder goes ---------


@pytest.mark.timeout(300)
def test_a_deeply_nested_submission_does_not_stop_the_class_backup(course, tmp_path):
    """A student's notebook whose metadata nests 100,000 JSON arrays (valid JSON, 200 kB: any
    editor writes it, ``make grade`` names it as a failure) must be backed up like any file:
    ``make sauvegarde`` reads each notebook with ``json.loads`` to see whether it is being
    written, and ``RecursionError`` (not a ``ValueError``) escaped as a traceback, no backup
    written at all, the whole class's grades unsaved (a nightly cron backup fails every night)."""
    register(course, "ana", "dan")
    _put(course, "ana", json.dumps(_notebook_json(course)))
    nb = _notebook_json(course)
    nb["metadata"]["x"] = "PLACEHOLDER"
    deep = json.dumps(nb).replace('"PLACEHOLDER"', "[" * 100_000 + "]" * 100_000)
    _put(course, "dan", deep)
    folder = tmp_path / "sauv"
    folder.mkdir()
    proc = grading(course, "backup", "sauvegarder", "--dossier", str(folder))
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    archives = sorted(folder.glob("sauvegarde-*.tar.gz"))
    assert len(archives) == 1, proc.stdout + proc.stderr
    with tarfile.open(archives[0]) as tar:
        names = tar.getnames()
    assert "submitted/dan/oublier/oublier.ipynb" in names, names
    assert "submitted/ana/oublier/oublier.ipynb" in names, names


# --- make grade interrupted (Ctrl-C), then run again ---------------------------------------------


def _interrupted_grading(grader: Path, student: str) -> bool:
    """``make grade`` started as a terminal starts it, then Ctrl-C (SIGINT to its process group)
    while nbgrader grades `student`: its graded copy is written, its grades are not yet. Whether
    that copy is still there once the command ended: nbgrader gets the Ctrl-C too, and removes
    the copy itself when it handles it before ``make grade`` kills it (CI, stop 59)."""
    import os
    import signal
    import sqlite3
    import time

    proc = start_grading(grader, "autograde", "oublier")
    graded = grader / "autograded" / student / "oublier" / "oublier.ipynb"
    rows = (  # nbgrader's rows of the submission: written before the answer runs
        "SELECT count(*) FROM submitted_notebook n JOIN submitted_assignment a "
        "ON a.id = n.assignment_id WHERE a.student_id = ?"
    )

    def rows_written() -> bool:  # read-only: never a write lock on the gradebook
        try:
            with sqlite3.connect(f"file:{grader / 'gradebook.db'}?mode=ro", uri=True) as db:
                return db.execute(rows, (student,)).fetchone()[0] > 0
        except sqlite3.OperationalError:  # locked while nbgrader writes: asked again
            return False

    try:
        deadline = time.monotonic() + 240
        # its copy, then its rows (fresh clone, stop 57: a fixed 1 s after the copy was not
        # always enough on a busy machine, and the next run saw a submission never graded)
        while not (graded.exists() and rows_written()):
            assert proc.poll() is None, "make grade ended before grading the submission"
            assert time.monotonic() < deadline, "make grade never reached the submission"
            time.sleep(0.05)
        time.sleep(0.5)  # the answer is running in the sandbox (10 s): mid-grading
        os.killpg(proc.pid, signal.SIGINT)
        proc.communicate(timeout=60)  # read as it ends: a full pipe would hold it
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    return graded.exists()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_submission_interrupted_by_ctrl_c_is_graded_by_the_next_make_grade(course):
    """A teacher presses Ctrl-C during ``make grade`` while ben's submission is being graded, then
    runs ``make grade`` again. nbgrader had already written ben's graded copy and his submission's
    rows, every automatic grade still empty (``needs_manual_grade``): the second ``make grade``
    said « 0 rendu(s) noté(s), 1 déjà noté(s) », exit 0, and left him so for good: the report
    gives him 0 / 12 « noté », every criterion « note à la main à revoir », ``make feedback``
    writes him a page at 0. Then (stop 55) it named him and failed, and only ``FORCE=1``, which
    regrades the whole class, finished him, while the README says « relancez-la pour finir ».
    The next run grades him again, and him only. Which of the two states the Ctrl-C leaves is a
    race (nbgrader removes its copy when it handles the Ctrl-C first): both end graded, and
    the state kept is tested without the race below."""
    from nbgrader.api import Gradebook

    register(course, "ben")
    submit(course, "ben", "sommeil")  # 10 s asleep in the sandbox: time to interrupt
    copy_kept = _interrupted_grading(course, "ben")
    again = grading(course, "autograde", "oublier")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        sub = gb.find_submission("oublier", "ben")
        ungraded = [
            g.name
            for nb in sub.notebooks
            for g in nb.grades
            if g.auto_score is None and g.cell.cell_type == "code"
        ]
    said = again.stdout + again.stderr
    assert again.returncode == 0 and not ungraded, (ungraded, again.returncode, said)
    if copy_kept:
        assert "ben\u00a0: noté à nouveau (sa notation avait été interrompue)" in said, said
    else:
        assert "oublier\u00a0: 1 rendu(s) noté(s), 0 déjà noté(s)" in said, said


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_graded_copy_whose_tests_have_no_score_is_graded_by_the_next_make_grade(
    graded_class_copy,
):
    """The state a Ctrl-C leaves when ``make grade`` kills nbgrader first, made without the
    race: ana's graded copy is there, her automatic tests' rows have no score
    (``auto_score`` NULL, as nbgrader writes them before running her answer). The next ``make
    grade`` grades her again, forced, and leaves her classmates as they are."""
    import sqlite3

    grader = graded_class_copy.grader
    cyr = (grader / "autograded" / "cyr" / "oublier" / "oublier.ipynb").stat().st_mtime_ns
    with sqlite3.connect(grader / "gradebook.db") as db:
        emptied = db.execute(
            "UPDATE grade SET auto_score = NULL WHERE id IN (SELECT g.id FROM grade g "
            "JOIN grade_cells gc ON gc.id = g.cell_id "
            "JOIN submitted_notebook sn ON sn.id = g.notebook_id "
            "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
            "WHERE sa.student_id = 'ana' AND gc.cell_type = 'code')"
        ).rowcount
    assert emptied > 0
    again = grading(grader, "autograde", "oublier")
    said = again.stdout + again.stderr
    assert again.returncode == 0, said
    assert "ana\u00a0: noté à nouveau (sa notation avait été interrompue)" in said, said
    with sqlite3.connect(grader / "gradebook.db") as db:
        left = db.execute(
            "SELECT count(*) FROM grade g JOIN grade_cells gc ON gc.id = g.cell_id "
            "JOIN submitted_notebook sn ON sn.id = g.notebook_id "
            "JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
            "WHERE sa.student_id = 'ana' AND gc.cell_type = 'code' AND g.auto_score IS NULL"
        ).fetchone()[0]
    assert left == 0, said
    assert (grader / "autograded" / "cyr" / "oublier" / "oublier.ipynb").stat().st_mtime_ns == cyr


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_graded_copy_left_as_nbgrader_copied_it_is_graded_by_the_next_make_grade(
    graded_class_copy,
):
    """Attack, stop 56: a Ctrl-C after nbgrader saved ana's scores but before it wrote her graded
    notebook leaves that notebook as the submission it copied, never run: the next ``make
    grade`` skipped her and blamed « un carnet de notes remplacé par une copie plus ancienne »,
    and ``make feedback`` sent the teacher to restore a backup. The next run grades her again
    (her classmates are left as they are)."""
    import shutil

    grader = graded_class_copy.grader
    graded = grader / "autograded" / "ana" / "oublier" / "oublier.ipynb"
    shutil.copyfile(grader / "submitted" / "ana" / "oublier" / "oublier.ipynb", graded)
    cyr = (grader / "autograded" / "cyr" / "oublier" / "oublier.ipynb").stat().st_mtime_ns
    again = grading(grader, "autograde", "oublier")
    said = again.stdout + again.stderr
    assert again.returncode == 0, said
    assert "ana\u00a0: noté à nouveau (sa notation avait été interrompue)" in said, said
    assert (
        graded.read_bytes()
        != (grader / "submitted" / "ana" / "oublier" / "oublier.ipynb").read_bytes()
    )
    assert (grader / "autograded" / "cyr" / "oublier" / "oublier.ipynb").stat().st_mtime_ns == cyr


# --- make grade JOBS=2 while the teacher grades by hand in formgrader ----------------------------


def _hand_grade(grader: Path, student: str, score: float | None, comment: str | None) -> tuple:
    """The written answer's hand grade and comment, set as formgrader sets them (nbgrader's API)
    when `score` is given; what the gradebook holds, read back."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        grade = gb.find_grade("documentation", "oublier", "oublier", student)
        note = gb.find_comment("documentation", "oublier", "oublier", student)
        if score is not None:
            grade.manual_score, grade.needs_manual_grade = score, False
            note.manual_comment = comment
            gb.db.commit()
        return grade.manual_score, note.manual_comment


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_hand_grade_given_during_a_parallel_regrade_is_not_erased(graded_class_copy):
    """``make grade JOBS=2 FORCE=1`` (a due date changed: README) runs a minute or more on a
    class; meanwhile the teacher goes on grading written answers in formgrader. The workers grade
    copies of the gradebook taken at the start, and ``merge_gradebook`` then writes every grade's
    ``manual_score`` and every comment's ``manual_comment`` from those copies: the hand grade
    and comment given during the run were silently erased (with ``JOBS=1`` nbgrader keeps them).
    No command may overwrite a grade the teacher gave. The class is the run's graded class
    (graded_class: its ``make grade`` succeeded), ben's answer replaced by one that sleeps until
    the sandbox's 10 s deadline: ana and cyr fall to one worker, ben to the other, still grading
    when ana's hand grade is given."""
    import time

    course = graded_class_copy.grader
    submit(course, "ben", "sommeil")  # 10 s asleep: the run lasts long enough to grade by hand
    graded = course / "autograded" / "ana" / "oublier" / "oublier.ipynb"
    before = graded.stat().st_mtime_ns
    proc = start_grading(course, "autograde", "oublier", "--jobs", "2", "--force")
    deadline = time.monotonic() + 240
    while not (graded.exists() and graded.stat().st_mtime_ns != before):  # ana regraded
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    _hand_grade(course, "ana", 2.0, "Très bonne procédure")  # in formgrader, during the run
    assert proc.poll() is None, "the run ended before the hand grade was given"
    out, err = proc.communicate(timeout=300)
    kept = _hand_grade(course, "ana", None, None)
    assert kept == (2.0, "Très bonne procédure"), (kept, out[-600:], err[-600:])


# --- the late rule once the written answer is graded by hand --------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_late_penalty_counts_the_hand_graded_written_answer(course):
    """The rule the TP and the report state: « chaque jour de retard commencé retire 1 point à la
    note, sans descendre sous 0 ». ``PointsPerDayLate`` caps the penalty at the score *at
    grading time*, before the written answer (2 points) is graded by hand in formgrader, and
    nothing computes it again: ana, 3 started days late, code 0/10, written answer 2/2, is
    exported at 2 / 12 (penalty 0) where the rule gives 0; ``make grade FORCE=1`` after the
    hand grade gives 0. Following the README's cycle (grade, grade by hand, export) must apply
    the rule."""
    import csv

    register(course, "ana")
    due = grading(course, "duedate", "oublier", "2025-03-14 18:00:00 Europe/Paris")
    assert due.returncode == 0, due.stdout + due.stderr
    submit(course, "ana", "ebauche", timestamp="2025-03-16 19:00:00 Europe/Paris")  # 3 days
    graded = grading(course, "autograde", "oublier")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    _hand_grade(course, "ana", 2.0, "Procédure complète")  # formgrader, after the grading
    export = grading(course, "export")
    assert export.returncode == 0, export.stdout + export.stderr
    with open(course / "rapport" / "grades.csv", encoding="utf-8", newline="") as file:
        row = next(r for r in csv.DictReader(file) if r["student_id"] == "ana")
    assert float(row["raw_score"]) == 2.0, row
    assert float(row["score"]) == 0.0, row  # 2 - 3 points, never below 0


# --- an answer cell of several megabytes in the pages the teacher opens ---------------------------


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_huge_answer_cell_keeps_make_feedback_in_time_and_its_page_small(course):
    """The grading refuses an ``oublier`` cell past 100,000 characters (0 with the reason), but
    ``RebuildFromRelease`` keeps the whole cell in the graded copy: a 6.4 MB cell (the complete
    answer, then a 400,000-line data literal) made ``make feedback`` take about 100 s for that
    one student and write a 21 MB page; formgrader's submission view took 120 s, during which
    the teacher's whole Jupyter server answered nothing (``/api/status`` waited 118 s). Student
    text must not be slow in a page an instructor opens: the same budget as the Markdown
    answer's (``test_student_text_inert.FEEDBACK_BUDGET``, 60 s for a class)."""
    import time

    from grading.samples import build_submission as build

    register(course, "ben")
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (REPO / "grader" / "submissions" / "complete_vacuum.py").read_text(encoding="utf-8")
    text += "\nDONNEES = [\n" + "    1,\n" * 400_000 + "]\n"
    _put(course, "ben", nbformat.writes(build(release, text)))
    graded = grading(course, "autograde", "oublier")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    started = time.monotonic()
    feedback = grading(course, "feedback", "oublier")
    elapsed = time.monotonic() - started
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    page = course / "feedback" / "ben" / "oublier" / "oublier.html"
    assert elapsed < 60, f"make feedback: {elapsed:.0f} s for one student"
    assert page.stat().st_size < 2_000_000, page.stat().st_size


# --- make donnees-eleve: a copy a classmate deposited under the learner's name --------------------


def test_a_learner_s_export_holds_nothing_of_the_classmate_who_deposited_in_her_name(tmp_path):
    """eve deposited her own notebook as ben's (``nbgrader submit --student ben``): the collect set
    it aside, owned by eve, into ``quarantaine/oublier/ben+oublier+…/`` with ``DEPOSE_PAR.txt``
    naming eve. ben's data export (``make donnees-eleve ID=ben``, RGPD) took that folder as his
    (« named ben+… »): eve's answers, and her login as the depositor, went to ben, where the
    README promises « rien d'un autre élève n'y entre ». (Her own export and her erasure rightly
    take it: ``test_attack_places``.)"""
    import zipfile

    from grading.learner_export import export_learner

    grader = generated_course(tmp_path / "cours")
    register(grader, "ben", "eve", "ana")
    _put(grader, "ben", json.dumps(_notebook_json(grader)))
    kept = grader / "quarantaine" / "oublier" / "ben+oublier+2026-12-01 10:00:00 UTC+x"
    kept.mkdir(parents=True)
    secret = "Eve Martin, mon numero : 06 12 34 56 78"
    (kept / "oublier.ipynb").write_text(json.dumps({"reponse": secret}), encoding="utf-8")
    (kept / "DEPOSE_PAR.txt").write_text("eve\n", encoding="utf-8")  # what collect writes
    roster = tmp_path / "eleves.csv"
    roster.write_text("identifiant;prénom;nom\nben;Ben;B\neve;Eve;Martin\nana;Ana;A\n", "utf-8")
    path, _ = export_learner("ben", tmp_path / "exports", roster, grader)
    with zipfile.ZipFile(path) as zf:
        leaked = [
            n
            for n in zf.namelist()
            if secret.encode() in zf.read(n) or zf.read(n).strip() == b"eve"
        ]
    assert leaked == [], leaked


# --- a due date of 31/12/9999 (« no due date », as many French tools write it) --------------------


@pytest.mark.timeout(300)
def test_a_due_date_in_9999_is_refused_or_shown_never_a_traceback(course):
    """``make duedate DATE="9999-12-31 23:59:59"`` (the « never » of many French tools) stored
    the date, then stopped on ``OverflowError`` (a traceback) while writing it back at Paris time
    (one hour later: year 10000); from then on ``make export`` stopped on the same traceback for
    the whole class, and so did ``make rapport`` and ``make donnees-eleve``. The same comes from a
    ``timestamp.txt`` in 9999, which ``make grade`` accepts. Refuse the date in French, or write
    it, never a traceback."""
    register(course, "ana")
    due = grading(course, "duedate", "oublier", "9999-12-31 23:59:59")
    assert "Traceback" not in due.stderr, due.stderr[-2000:]
    export = grading(course, "export")
    assert "Traceback" not in export.stderr, export.stderr[-2000:]
    assert export.returncode == 0 or due.returncode != 0, export.stdout + export.stderr


# --- make grade on notebooks a student controls: one class, graded once, for the next three tests -

UNREADABLE = ("bea", "cle", "dan", "gus")  # notebooks nbformat cannot read, each its own way
ESCAPING = "eli"  # a notebook whose failure reason holds escape sequences
HOSTILE = ("ana", "ben", *UNREADABLE, ESCAPING)  # the class registered


@dataclass(frozen=True)
class HostileClass:
    grader: Path
    grade: subprocess.CompletedProcess  # its one ``make grade``


@pytest.fixture(scope="module")
def hostile_class(tmp_path_factory) -> Iterator[HostileClass]:
    """A class graded by one ``make grade`` for the three tests below (each ran the same
    commands on a class of its own: the students registered, their submissions put in place,
    ``make grade``; they differ in the submissions they read): ana (the complete answer) and ben
    (the seed answer) with a pair's copy in ``submitted/ana,ben/``; bea, cle, dan and gus with a
    notebook nbformat cannot read; eli with a failure reason holding escape sequences. Frozen
    once graded (read_only): the tests only read it, and a write would fail."""
    grader = generated_course(tmp_path_factory.mktemp("classe-hostile") / "cours")
    register(grader, *HOSTILE)
    submit(grader, "ana", "complete_vacuum")
    submit(grader, "ben", "graine")
    submit(grader, "ana,ben", "complete")  # the pair's copy: an unknown folder with a comma
    source_list, version_5, deep, array = UNREADABLE
    nb = _notebook_json(grader)
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            cell["source"] = [1, "texte"]
    _put(grader, source_list, json.dumps(nb))
    nb = _notebook_json(grader)
    nb["nbformat"] = 5
    _put(grader, version_5, json.dumps(nb))
    nb = _notebook_json(grader)
    nb["metadata"]["x"] = "PLACEHOLDER"
    _put(grader, deep, json.dumps(nb).replace('"PLACEHOLDER"', "[" * 5000 + "]" * 5000))
    _put(grader, array, "[1, 2, 3]")
    nb = _notebook_json(grader)
    nb["nbformat"] = "X\n\x1b[1A\x1b[2K\x1b[1A\x1b[2K\x1b[32mRendu de eli noté : 10/10\x1b[0m\x07"
    _put(grader, ESCAPING, json.dumps(nb))
    grade = grading(grader, "autograde", "oublier")
    folder = grader.parent
    before = snapshot(folder)
    freeze(folder)
    try:
        yield HostileClass(grader, grade)
    finally:
        thaw(folder)
    assert changes(before, folder) == [], "a test wrote into the shared class"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_unreadable_notebook_is_named_in_french_not_by_a_python_exception(hostile_class):
    """Notebooks any student can hand in (a text editor, a script): a cell whose ``source`` is a
    list holding a number (bea), ``"nbformat": 5`` (cle), nesting deeper than Python's JSON
    decoder (dan), a JSON array (gus). ``make grade`` names each failure by nbformat's raw
    exception (« TypeError: sequence item 0: expected str instance, int found », « NBFormatError:
    Unsupported nbformat version 5 », « RecursionError: maximum recursion depth exceeded… »,
    « AttributeError: 'list' object has no attribute 'get' »): no French, nothing that tells the
    teacher the notebook is damaged and what to do. (The report then lists « note à la main à
    revoir » for every test of them.)"""
    import re

    proc = hostile_class.grade
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # the five damaged notebooks are the run's failures (its exit status has a second cause
    # here: the unknown folder « ana,ben/ »)
    assert f"{len(UNREADABLE) + 1} en échec" in proc.stdout, proc.stdout
    out = proc.stdout.splitlines()
    lines = {s: [ln for ln in out if ln.strip().startswith(f"- {s}")] for s in UNREADABLE}
    raw = {s: ln for s, found in lines.items() for ln in found if re.search(r"\b\w+Error\b", ln)}
    assert all(lines.values()), proc.stdout
    assert raw == {}, raw


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_unknown_folder_with_a_comma_is_left_out_and_the_class_graded(
    hostile_class, expected_scores
):
    """A teacher without a hub copies a pair's notebook into ``submitted/ana,ben/oublier/`` (README:
    « copier dans grader/submitted/<id>/… »). ``make grade`` names it (« pas un élève inscrit »)
    and leaves it out through nbgrader's ``--CourseDirectory.student_id_exclude=ana,ben``, a
    comma-separated list: nbgrader excluded ana and ben (« nbgrader ne l'a pas traité »), graded
    the folder ``ana,ben`` itself and created the student « ana,ben » in the gradebook, a ghost
    in every export and report after. The unknown folder must stay ungraded, the others graded
    (``hostile_class``: ana, ben and ``ana,ben/`` among its submissions)."""
    from nbgrader.api import Gradebook

    grader, proc = hostile_class.grader, hostile_class.grade
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        students = sorted(s.id for s in gb.students)
        graded = sorted(s.student_id for s in gb.assignment_submissions("oublier"))
        scores = {s: gb.find_submission("oublier", s).score for s in ("ana", "ben")}
    assert students == sorted(HOSTILE), (students, proc.stdout)
    # every registered student's submission (a damaged notebook's too), never « ana,ben »
    assert graded == sorted(HOSTILE), (graded, proc.stdout)
    expected = {"ana": expected_scores["complete_vacuum"]["score"]}
    expected["ben"] = expected_scores["graine"]["score"]
    assert scores == expected, (scores, proc.stdout)  # ana and ben graded, neither excluded
    assert not (grader / "autograded" / "ana,ben").exists(), proc.stdout


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_failure_reason_from_the_notebook_reaches_the_terminal_escaped(hostile_class):
    """nbformat's « Unsupported nbformat version %s » quotes the notebook's own ``nbformat`` value,
    and ``make grade`` prints nbgrader's last error line as the failure's reason: eli's value
    ``"X\\n\\x1b[1A\\x1b[2K…\\x1b[32mRendu de eli noté : 10/10"`` printed its escape sequences raw
    in the teacher's terminal (the lines above erased, a green « noté : 10/10 » in their place),
    where zip-collect's names are escaped (``classroom.ids.shown``)."""
    proc = hostile_class.grade
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"  - {ESCAPING}\u00a0: " in proc.stdout, proc.stdout  # its failure and reason shown
    assert "\x1b" not in proc.stdout + proc.stderr, repr(proc.stdout[-600:])
    assert "\x07" not in proc.stdout + proc.stderr, repr(proc.stdout[-600:])


# --- make feedback after a hand grade ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_make_feedback_rewrites_a_page_whose_hand_grade_changed(graded_class_copy):
    """The README's cycle: grade (5), feedback (7), then the written answer graded by hand in
    formgrader (11), then ``make feedback`` again before ``make release-feedback``. The second
    ``make feedback`` said « 0 page(s) de retour écrite(s), 1 déjà à jour » and kept the page
    without the hand grade and comment: the release would publish it so. A page is stale when
    the gradebook changed since it was written, not only its graded copy. Steps 5 and 7 are the
    run's graded class's (graded_class: ``make grade`` then ``make feedback``, both succeeded)."""
    course = graded_class_copy.grader
    page = graded_class_copy.feedback_page("ana")
    comment = "Procedure claire, il manque la preuve par un temoin"
    assert comment not in page.read_text(encoding="utf-8")  # the first page, before the grade
    _hand_grade(course, "ana", 1.5, comment)  # formgrader, after the first pages
    again = grading(course, "feedback", "oublier")
    assert again.returncode == 0, again.stdout + again.stderr
    assert comment in page.read_text(encoding="utf-8"), again.stdout


# --- make zip-collect SANS_HEURE=retard: « l'arrivée de l'archive chez vous » ---------------------


@pytest.mark.timeout(300)
def test_the_arrival_of_a_student_archive_is_not_its_modification_time(course):
    """``SANS_HEURE=retard`` dates a student's archive « de l'arrivée de l'archive chez vous, sa
    date sur le disque »: the file's *modification* time, which the student sets (``touch -d``)
    and a copy from their USB key keeps (file managers preserve it). ben's ``ben.zip`` reached
    the teacher today, after the due date, with its mtime set to 10/03/2025: collected « à
    l'heure » (timestamp 2025-03-10). Its change time (``st_ctime``, what ``make collect``
    trusts) says when it arrived."""
    import os
    import zipfile
    from datetime import UTC, datetime

    register(course, "ben")
    due = grading(course, "duedate", "oublier", "2025-03-14 18:00:00 Europe/Paris")
    assert due.returncode == 0, due.stdout + due.stderr
    folder = course / "downloaded" / "oublier" / "archive"
    folder.mkdir(parents=True)
    archive = folder / "ben.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ben/oublier.ipynb", json.dumps(_notebook_json(course)))
    claimed = datetime(2025, 3, 10, 12, 0, tzinfo=UTC).timestamp()
    os.utime(archive, (claimed, claimed))  # the student's own date, kept by the copy
    proc = grading(course, "zip_collect", "oublier", "--sans-heure=retard")
    stamp = (course / "submitted" / "ben" / "oublier" / "timestamp.txt").read_text("utf-8")
    assert not stamp.startswith("2025-03-10"), (stamp, proc.stdout)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_graded_copy_handed_in_as_a_submission_is_no_interrupted_grading(graded_class_copy):
    """Attack, stop 56: a student who hands in exactly the notebook grading writes back for her
    (run once with the course's public code) had her graded copy byte-identical to her
    submission, taken for a grading stopped before nbgrader ran it: « noté à nouveau (sa
    notation avait été interrompue) », forced, on every make grade. A graded lab notebook
    carries its outcome record; a copy that carries one is no unrun copy."""
    import shutil

    grader = graded_class_copy.grader
    graded = grader / "autograded" / "ana" / "oublier" / "oublier.ipynb"
    shutil.copyfile(graded, grader / "submitted" / "ana" / "oublier" / "oublier.ipynb")
    again = grading(grader, "autograde", "oublier")
    said = again.stdout + again.stderr
    assert "interrompue" not in said, said
