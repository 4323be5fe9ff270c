"""The course's demo (``make demo-grading``, grader/demo/, learner_places ``_scan_class``): its
samples never block an erasure; a learner added to its formgrader, a classmate's work copied
there, a comment in its gradebook that names her are named.

Each test puts in its own small class the demo the real command graded once for the run
(graded_demo.py: ``python -m grading.demo --only graine alice_en_dur``), rather than grading it
again: the same files, naming the test's class."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from erase_scenes import _assert_proved, _copy_class, _enrol, _erase
from graded_demo import graded_demo
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.slow
def test_the_course_s_own_demo_never_blocks_the_erasure_of_a_learner(petite_classe):
    """Review3: `make demo-grading` (the grading guide's first step) grades the course's
    samples in grader/demo/, which the course generates and git ignores; one sample writes its
    example learner in dur (``user_id = "alice"``). A class with a learner « alice » then cannot
    erase her: the demo's graded copies, logs and gradebook are named « à corriger à la main »
    though nothing there is hers. The control: before the demo, her erasure is proved. The demo
    (graded_demo.py) holds that sample and the seed answer graded."""
    c = petite_classe
    grader = c["grader"]
    _enrol(c, "alice", "Alice", "Leroy")
    folder = grader / "submitted" / "alice" / "oublier"
    folder.mkdir(parents=True)
    (folder / "oublier.ipynb").write_text('{"copie de": "alice"}')
    assert not _erase(_copy_class(c), "alice").failures  # control: without the demo, proved
    demo = graded_demo(grader)
    assert (demo / "autograded" / "alice_en_dur" / "oublier" / "oublier.ipynb").is_file()
    _assert_proved(c, "alice", "la démonstration du cours")


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
    from grading_course import nbgrader

    c = petite_classe
    grader = c["grader"]
    demo = graded_demo(grader)
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

    c = petite_classe
    grader = c["grader"]
    graded_demo(grader)
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
    from nbgrader.api import MissingEntry

    c = petite_classe
    grader = c["grader"]
    demo_db = graded_demo(grader) / "gradebook.db"
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
