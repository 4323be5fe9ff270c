"""One command at a time writes a class: a second `make grade` (a teacher's second terminal, a
colleague on the same hub folder) started while the first grades would rewrite the same
autograded/ folders, the same gradebook and the same log. It is refused in French, naming the
command at work, and the first ends as if alone; a command killed outright holds nothing."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from grading.classroom.class_lock import LOCK_FILE, class_lock
from grading_course import REPO, grading, register, start_grading, submit
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.timeout(600)]
GRADER_MK = REPO / "grader" / "grader.mk"


def _wait_for_lock(course: Path, first: subprocess.Popen) -> str:
    """What the lock file says once the first command holds it (it writes it after the lock)."""
    lock = course / LOCK_FILE
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert first.poll() is None, first.communicate()
        if lock.is_file() and (said := lock.read_text(encoding="utf-8")).strip():
            return said
        time.sleep(0.05)
    raise AssertionError("la première notation n'a jamais pris le verrou")


# every class command that writes the class (grader/README.md, « Une seule commande à la fois »)
SECOND = {
    "make grade": ("autograde", "oublier"),
    "make feedback": ("feedback", "oublier"),
    "make collect": ("collect", "oublier"),
    "make zip-collect": ("zip_collect", "oublier"),
    "make release-feedback": ("release_feedback", "oublier"),
    "make duedate": ("duedate", "oublier", "2030-01-01 00:00:00 Europe/Paris"),
    "make export": ("export",),
    "make rapport": ("rapport", "oublier"),
    "make students": ("roster_csv", "eleves.csv"),
    "make oublier-eleve": ("erase_learner", "ana"),
    "make donnees-eleve": ("learner_export", "ana"),
    "make restauration": ("backup", "restaurer", "sauvegarde.tar.gz"),
}


# what `make` starts that never writes the class: reads it (a backup is consistent while a
# grading runs, grader/README.md), writes only its own folder (notebooks/ for student_version),
# or measures
UNLOCKED = {("backup", "sauvegarder"), ("backup", "purger"), ("bench",), ("student_package",)}
UNLOCKED |= {("student_version",)}


def test_every_class_command_that_writes_the_class_is_locked():
    """CONTRIBUTING.md, « a class command »: a new target of grader/grader.mk that writes the
    class takes the lock (its line in SECOND), or says here why not."""
    started = set()
    for module, verb in re.findall(r"\$\(GRADING\)(\w+)(?: (\w+))?", GRADER_MK.read_text()):
        started.add((module, verb) if module == "backup" else (module,))
    locked = {argv[:2] if argv[0] == "backup" else argv[:1] for argv in SECOND.values()}
    assert started == locked | UNLOCKED


@pytest.mark.slow
def test_a_second_command_while_grading_is_refused_and_the_grading_ends_alone(course):
    register(course, "ana", "ben", "cyr")
    for student in ("ana", "cyr"):  # sleep past the sandbox's limit: the grading lasts
        submit(course, student, "sommeil")
    submit(course, "ben", "complete_vacuum")
    first = start_grading(course, "autograde", "oublier")
    try:
        said = _wait_for_lock(course, first)
        assert str(first.pid) in said and "make grade" in said
        assert (course / LOCK_FILE).stat().st_mode & 0o007 == 0  # the group's at most
        # held however long the others take to start on a busy machine: make grade stopped
        # (Ctrl-Z), its nbgrader grading on, until they have all been answered
        os.kill(first.pid, signal.SIGSTOP)
        try:
            seconds = {target: start_grading(course, *argv) for target, argv in SECOND.items()}
            ended = {target: proc.communicate(timeout=300) for target, proc in seconds.items()}
        finally:
            os.kill(first.pid, signal.SIGCONT)
        for target, (out, err) in ended.items():
            assert seconds[target].returncode == 2, (target, out, err)
            assert "✘ Une autre commande travaille sur cette classe" in err, (target, err)
            assert f"make grade (processus {first.pid}, lancée le " in err, (target, err)
            # stopped, as Ctrl-Z stops it: waiting would be for ever, the refusal says so
            assert "elle est suspendue (Ctrl-Z) et garde la classe\u00a0: reprenez-la" in err
            assert "attendez" not in err and "Traceback" not in err, (target, err)
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    assert "3 rendu(s) noté(s)" in out, out + err
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_submission("oublier", "ben").score == 10
    log = (course / "rapport" / "autograde.log").read_text(encoding="utf-8")
    assert "Une autre commande" not in log
    assert not (course / LOCK_FILE).read_text(encoding="utf-8")  # nobody holds it now


@pytest.mark.slow
def test_a_grading_killed_outright_holds_nothing(course):
    register(course, "ana")
    submit(course, "ana", "sommeil")
    first = start_grading(course, "autograde", "oublier")
    try:
        _wait_for_lock(course, first)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # no handler runs: the kernel drops the lock
    first.wait()
    again = grading(course, "autograde", "oublier", "--force")
    assert "Une autre commande" not in again.stderr, again.stderr
    assert "1 rendu(s) noté(s)" in again.stdout, again.stdout + again.stderr


def test_a_class_this_user_can_only_read_is_read_without_a_lock(tmp_path):
    """A dry run (``make oublier-eleve`` without CONFIRMER, ``make donnees-eleve``) in a class
    folder this user cannot write (immutable here, as root too) is not refused for want of a
    lock file; with the lock file already there, it is taken read-only."""
    from read_only import freeze, thaw

    folder = tmp_path / "grader"
    folder.mkdir()
    if not freeze(folder):
        pytest.skip("pas de dossier immuable sur ce système de fichiers")
    try:
        with class_lock(folder, "make oublier-eleve"):
            assert not (folder / LOCK_FILE).exists()
    finally:
        thaw(folder)
    (folder / LOCK_FILE).write_text("")
    freeze(folder)
    try:
        with class_lock(folder, "make oublier-eleve"):
            busy = _refusal_seen(folder)
        assert "Une autre commande travaille sur cette classe\u00a0: une commande." in busy
        assert "attendez qu'elle se termine" in busy and "suspendue" not in busy
    finally:
        thaw(folder)


def _refusal_seen(folder: Path) -> str:
    """What a second process is told while this one holds `folder`'s class."""
    code = (
        "import sys\n"
        "from grading.classroom.class_lock import class_lock\n"
        "try:\n"
        "    with class_lock(sys.argv[1], 'make export'): pass\n"
        "except Exception as exc: print(exc)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(folder)],
        capture_output=True,
        text=True,
        cwd=REPO / "grader",  # where the class commands import grading from
        check=True,
    ).stdout


def test_only_a_stopped_holder_is_called_suspended():
    """The refusal tells the teacher to resume a command stopped by Ctrl-Z (waiting for it would
    be for ever), and to wait for one at work; a holder gone, or named by no pid, is waited
    for."""
    from grading.classroom.class_lock import _suspended

    holder = subprocess.Popen(["sleep", "60"])
    said = f"make grade (processus {holder.pid}, lancée le 07/12/2026 09:02:11)"
    try:
        assert not _suspended(said)
        os.kill(holder.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 30
        while not _suspended(said) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _suspended(said)
        os.kill(holder.pid, signal.SIGCONT)
        while _suspended(said) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not _suspended(said)
    finally:
        holder.kill()
        holder.wait()
    assert not _suspended(said)  # gone
    assert not _suspended("une commande")


def test_the_demo_holds_its_own_folder(course):
    """``make demo-grading`` regrades the samples in grader/demo with ``--force``: two at once
    (two terminals, two colleagues) would grade the same copies and write the same gradebook. A
    second one is refused like any class command; the real class is another lock."""
    from grading.classroom.paths import CONFIG, DEMO_FOLDER
    from grading.demo import demo_config

    demo = course / DEMO_FOLDER
    demo.mkdir()
    (demo / CONFIG).write_text(demo_config(course / CONFIG, demo, course.parent))
    with class_lock(demo, "make demo-grading"):
        second = grading(course, "demo")
        with class_lock(course, "make grade"):  # the class itself: not the demo's lock
            pass
    assert second.returncode == 2, second.stdout + second.stderr
    assert (
        "✘ Une autre commande travaille sur cette classe\u00a0: make demo-grading" in second.stderr
    )
    assert not (demo / "gradebook.db").exists()  # nothing done
