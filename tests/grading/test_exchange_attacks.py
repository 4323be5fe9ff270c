"""The exchange's second attack pass (issue 32, points 1, 2 and 6), with real Unix users,
nbgrader's exchange and stock nbgrader commands from ``grader/`` (the course's collect and
feedback release classes, through ``nbgrader_config.py``):

- a file swapped for a link to the gradebook between the collect's check and its copy (the race
  is won every time: the collect stops at that point until the student has swapped it) is
  never followed, and no byte of the instructor's files leaves; a student's extra file
  (``leak.html``) is neither collected nor published;
- a submission dated by the student three days back is dated by its deposit, the claim named
  in the summary, and the late penalty counts from the deposit;
- a 200 MB notebook, a 200 MB extra file, an empty ``submission_secret.txt``, a full disk stop
  nobody else: set aside or left out and named, the classmates collected and given their page,
  the earlier collected copy kept whole, the command failing.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import threading
import time
from pathlib import Path

import nbformat
import pytest
from exchange_class import (
    Student,
    answer_of,
    exchange_root,
    released_copy,
    sample_text,
    student_nbgrader,
    tag,
    unix_users,
)
from grading.samples import build_submission
from grading_course import grading, nbgrader, register
from helpers import REPO
from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash, parse_utc

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]

NBSP = "\u00a0"
COURSE = "memoire-tuteur"


def q(text: str) -> str:
    return f"«{NBSP}{text}{NBSP}»"


def _inbound(exchange: Path) -> Path:
    return exchange / COURSE / "inbound"


def _copies_of(exchange: Path, student: str) -> list[Path]:
    return sorted(_inbound(exchange).glob(f"{student}+oublier+*"))


def _said(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


def _canary(course: Path, t: str, *students: str) -> bytes:
    """A classmate registered in the gradebook under a name found nowhere else (with
    `students`, the class list's other names)."""
    name = f"CANARI{t}GRADEBOOK"
    register(course, f"canari{t}", *students, last_names={f"canari{t}": name})
    assert name.encode() in (course / "gradebook.db").read_bytes()  # the positive control
    return name.encode()


def _holding(root: Path, needle: bytes, besides: set[Path]) -> list[Path]:
    """Every file under `root` (links not followed) whose bytes hold `needle`."""
    found = []
    for path in root.rglob("*"):
        if path in besides or path.is_symlink() or not path.is_file():
            continue
        if needle in path.read_bytes():
            found.append(path)
    return found


def _ids(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_uid, info.st_gid


def _extra_file(student: Student, name: str, text: str) -> None:
    """A file of the student's own beside the notebook they submit (nbgrader submit takes it)."""
    made = student.run("sh", "-c", f"printf %s '{text}' > oublier/{name}")
    assert made.returncode == 0, _said(made)


RACING = '''"""The course's collect, stopped between its check and its copy until told."""

import os
import time
from pathlib import Path

from grading.nbgrader_ext.exchange import OwnerCheckedCollect

GO, DONE = Path({go!r}), Path({done!r})


class RacingCollect(OwnerCheckedCollect):
    def _stage(self, todo, staging):
        if not GO.exists():
            GO.write_text(" ".join(record["filename"] for record, _ in todo))
            deadline = time.monotonic() + 120
            while not DONE.exists():
                if time.monotonic() > deadline:
                    raise RuntimeError("the test never swapped the file")
                time.sleep(0.05)
        return super()._stage(todo, staging)
'''


def test_a_link_swapped_in_at_the_copy_step_leaves_nothing(course):
    """eve submits her notebook and a ``leak.html``, both regular files when the collect checks
    them; at the copy step she swaps both for links to ``grader/gradebook.db``. Her copy is set
    aside (never followed), ana's is collected; ana's own ``leak.html`` is not collected, and
    the feedback release publishes ana's notebook page only (not a ``leak.html`` put in her
    feedback folder either). No file outside the gradebook holds its canary."""
    t = tag()
    ana, eve = f"x32{t}ana", f"x32{t}eve"
    canary = _canary(course, t, ana, eve)
    gradebook = course / "gradebook.db"
    go, done = course / "course-go", course / "course-done"
    (course / "racing_collect.py").write_text(
        RACING.format(go=str(go), done=str(done)), encoding="utf-8"
    )
    with unix_users([ana, eve]), exchange_root() as exchange:
        released_copy(exchange)
        students = {name: Student.account(name) for name in (ana, eve)}
        for name, sample in ((ana, "complete_vacuum"), (eve, "graine")):
            (students[name].home / "oublier").mkdir(exist_ok=True)
            os.chown(students[name].home / "oublier", *_ids(students[name].home))
            _extra_file(students[name], "leak.html", f"{name}-extra")
            done_submit = students[name].submit(course, exchange, sample)
            assert done_submit.returncode == 0, _said(done_submit)
        (eves,) = _copies_of(exchange, eve)

        def swap() -> None:
            deadline = time.monotonic() + 300
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            for name in ("oublier.ipynb", "leak.html"):
                linked = students[eve].run("ln", "-sfn", str(gradebook), str(eves / name))
                assert linked.returncode == 0, _said(linked)
            done.write_text("go")

        swapper = threading.Thread(target=swap)
        swapper.start()
        try:
            collected = nbgrader(
                course,
                "collect",
                "oublier",
                f"--Exchange.root={exchange}",
                "--ExchangeFactory.collect=racing_collect.RacingCollect",
                "--student=" + eve,
            )
        finally:
            done.write_text("go")
            swapper.join()
        out = _said(collected)
        assert go.read_text() == eves.name, out  # the collect did stop at the copy step
        for name in ("oublier.ipynb", "leak.html"):  # and eve's files were links by then
            assert os.readlink(eves / name) == str(gradebook)
            assert canary in (eves / name).read_bytes()  # what following the link would read
        assert collected.returncode != 0, out
        assert eves.name in out and f"{q('oublier.ipynb')} est un lien symbolique" in out, out
        assert not (course / "submitted" / eve).exists()
        kept = course / "quarantaine" / "oublier" / eves.name
        listed = (kept / "NON_COPIES.txt").read_text(encoding="utf-8")
        assert "leak.html" in listed and "oublier.ipynb" in listed, listed

        # ana, through the French command: her notebook only, then graded, and given back
        said = _said(grading(course, "collect", "oublier", f"--Exchange.root={exchange}"))
        mine = course / "submitted" / ana / "oublier"
        assert answer_of(mine / "oublier.ipynb") == sample_text("complete_vacuum"), said
        assert sorted(p.name for p in mine.iterdir()) == [
            "claimed_timestamp.txt",
            "oublier.ipynb",
            "submission_secret.txt",
            "timestamp.txt",
        ]
        assert "fichiers non ramassés (seuls les notebooks du devoir le sont)" in said, said
        assert "leak.html" in said, said
        graded = grading(course, "autograde", "oublier", f"--student={ana}")
        assert graded.returncode == 0, _said(graded)
        pages = grading(course, "feedback", "oublier", f"--student={ana}")
        assert pages.returncode == 0, _said(pages)
        planted = course / "feedback" / ana / "oublier" / "leak.html"
        planted.write_bytes(gradebook.read_bytes())  # as if a page came from a student's file
        given = grading(course, "release_feedback", "oublier", f"--Exchange.root={exchange}")
        assert given.returncode == 0, _said(given)
        secret = (mine / "submission_secret.txt").read_text()
        published = sorted(p.name for p in (exchange / COURSE / "feedback").iterdir())
        assert published == [f"{notebook_hash(secret=secret, notebook_id='oublier')}.html"]

        leaks = _holding(exchange, canary, set()) + _holding(
            course.parent, canary, {gradebook, planted}
        )
        assert leaks == [], leaks

        # positive controls: nbgrader's own classes follow both links
        stock = "nbgrader.exchange.default"
        taken = nbgrader(
            course,
            "collect",
            "oublier",
            f"--Exchange.root={exchange}",
            f"--ExchangeFactory.collect={stock}.collect.ExchangeCollect",
            f"--student={eve}",
        )
        assert taken.returncode == 0, _said(taken)
        assert canary in (course / "submitted" / eve / "oublier" / "leak.html").read_bytes()
        with exchange_root() as other:
            given = nbgrader(
                course,
                "release_feedback",
                "oublier",
                f"--Exchange.root={other}",
                f"--ExchangeFactory.release_feedback={stock}.release_feedback."
                "ExchangeReleaseFeedback",
                f"--student={ana}",
            )
            assert given.returncode == 0, _said(given)
            leak = notebook_hash(secret=secret, notebook_id="leak")
            assert canary in (other / COURSE / "feedback" / f"{leak}.html").read_bytes()


def _utc_text(moment: datetime.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def test_a_forged_date_is_replaced_by_the_deposit_and_counted_late(course):
    """ana writes her copy straight into inbound/, its folder name and timestamp.txt dated three
    days back (before the due date, twelve hours ago): it is collected with its deposit time,
    the claim kept aside and named in the summary, and graded late."""
    t = tag()
    ana = f"x32{t}ana"
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    due = now - datetime.timedelta(hours=12)
    forged = _utc_text(now - datetime.timedelta(days=3))
    # the due date set as `nbgrader db assignment add --duedate=…` sets it (its gradebook
    # call, which parses the zone), in this process: the set-up, not what is shown
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "memoire-tuteur") as gb:
        gb.update_or_create_assignment("oublier", duedate=f"{due} UTC")
    register(course, ana)  # the class is registered before grading (make students)
    with unix_users([ana]), exchange_root() as exchange:
        released_copy(exchange)
        student = Student.account(ana)
        nb = build_submission(
            course.parent / "notebooks" / "oublier" / "oublier.ipynb",
            (REPO / "grader" / "submissions" / "complete_vacuum.py").read_text(encoding="utf-8"),
        )
        source = student.home / "oublier.ipynb"
        nbformat.write(nb, source)
        os.chown(source, *_ids(student.home))
        folder = _inbound(exchange) / f"{ana}+oublier+{forged}+x"
        script = (
            f"mkdir '{folder}' && cp '{source}' '{folder}/oublier.ipynb' && "
            f"printf %s '{forged}' > '{folder}/timestamp.txt' && "
            f"touch -d '{forged}' '{folder}/oublier.ipynb' '{folder}/timestamp.txt' '{folder}'"
        )
        made = student.run("sh", "-c", script)
        assert made.returncode == 0, _said(made)
        # the student's own clock is set back as far as she can: mtime, not ctime
        assert parse_utc(forged) < due

        collected = grading(course, "collect", "oublier", f"--Exchange.root={exchange}")
        said = _said(collected)
        assert collected.returncode == 0, said
        mine = course / "submitted" / ana / "oublier"
        deposit = parse_utc((mine / "timestamp.txt").read_text())
        assert abs((deposit - now).total_seconds()) < 600, deposit
        assert (mine / "claimed_timestamp.txt").read_text() == forged
        assert "l'heure déclarée par l'élève précède le dépôt" in said, said
        assert f"{q(ana)}{NBSP}: heure déclarée " in said, said
        # the positive control: nbgrader's own collect takes the student's word
        stock = nbgrader(
            course,
            "collect",
            "oublier",
            f"--Exchange.root={exchange}",
            "--ExchangeFactory.collect=nbgrader.exchange.default.collect.ExchangeCollect",
            "--CourseDirectory.submitted_directory=grader/submitted-stock",
        )
        assert stock.returncode == 0, _said(stock)
        taken = course / "submitted-stock" / ana / "oublier" / "timestamp.txt"
        assert taken.read_text() == forged

        graded = grading(course, "autograde", "oublier", f"--student={ana}")
        assert graded.returncode == 0, _said(graded)
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", COURSE) as gb:
            submission = gb.find_submission("oublier", ana)
            assert submission.timestamp == deposit
            assert submission.total_seconds_late > 0
            assert submission.late_submission_penalty == 1  # a started day, the course's rule


def _newest(exchange: Path, student: str) -> Path:
    return _copies_of(exchange, student)[-1]


def test_oversized_files_and_an_empty_secret_stop_nobody_else(course):
    """ana's newest notebook is a 200 MB sparse file: her copy is set aside and named, her
    earlier collected copy kept. bob's newer copy holds a 200 MB sparse extra file: it is
    collected (the extra file is not). cam empties her ``submission_secret.txt``: she is graded,
    and left out of the feedback release, named; bob gets his page and fetches it."""
    t = tag()
    ana, bob, cam = f"x32{t}ana", f"x32{t}bob", f"x32{t}cam"
    register(course, ana, bob, cam)  # the class is registered before grading (make students)
    with unix_users([ana, bob, cam]), exchange_root() as exchange:
        args = [f"--Exchange.root={exchange}"]
        released_copy(exchange)
        students = {name: Student.account(name) for name in (ana, bob, cam)}
        for name in (ana, bob, cam):
            done = students[name].submit(course, exchange, "graine")
            assert done.returncode == 0, _said(done)
        first = grading(course, "collect", "oublier", *args)
        assert first.returncode == 0, _said(first)

        time.sleep(1.1)  # nbgrader's folder names count seconds
        for name in (ana, bob):
            done = students[name].submit(course, exchange, "complete_vacuum")
            assert done.returncode == 0, _said(done)
        big = students[ana].run(
            "truncate", "-s", "200M", str(_newest(exchange, ana) / "oublier.ipynb")
        )
        assert big.returncode == 0, _said(big)
        extra = students[bob].run(
            "truncate", "-s", "200M", str(_newest(exchange, bob) / "gros.bin")
        )
        assert extra.returncode == 0, _said(extra)
        (cams,) = _copies_of(exchange, cam)
        emptied = students[cam].run("truncate", "-s", "0", str(cams / "submission_secret.txt"))
        assert emptied.returncode == 0, _said(emptied)
        (course / "submitted" / cam).rename(course / "cam-avant")  # cam collected again below

        updated = grading(course, "collect", "oublier", "--update", *args)
        said = _said(updated)
        assert updated.returncode == 1, said
        assert _newest(exchange, ana).name in said and "est trop gros" in said, said
        submitted = course / "submitted"
        assert answer_of(submitted / ana / "oublier" / "oublier.ipynb") == sample_text("graine")
        assert answer_of(submitted / bob / "oublier" / "oublier.ipynb") == sample_text(
            "complete_vacuum"
        )
        assert not (submitted / bob / "oublier" / "gros.bin").exists()
        assert "gros.bin" in said, said
        assert (submitted / cam / "oublier" / "submission_secret.txt").read_bytes() == b""
        # the positive control: nbgrader's own collect stops at the first 200 MB copy
        stock = nbgrader(
            course,
            "collect",
            "oublier",
            *args,
            "--ExchangeFactory.collect=nbgrader.exchange.default.collect.ExchangeCollect",
            "--CourseDirectory.submitted_directory=grader/submitted-stock",
        )
        assert stock.returncode != 0 and "Directory size is too big" in _said(stock)
        kept = course / "quarantaine" / "oublier" / _newest(exchange, ana).name
        assert sum(p.stat().st_blocks for p in kept.rglob("*")) * 512 < 10_000_000
        assert "trop gros" in (kept / "NON_COPIES.txt").read_text(encoding="utf-8")

        # bob and cam, one run each step (ana's copy left as it is)
        for step, done in (("autograde", "2 rendu(s) noté(s)"), ("feedback", "2 page(s) de")):
            run = grading(course, step, "oublier", f"--student=x32{t}[bc]*")
            assert run.returncode == 0 and done in run.stdout, _said(run)
        given = grading(course, "release_feedback", "oublier", *args)
        said = _said(given)
        assert given.returncode == 1, said
        assert q(cam) in said and "secret de dépôt vide" in said, said
        assert f"page(s) de retour rendue(s){NBSP}: {q(bob)}" in said, said
        fetched = students[bob].run(
            *student_nbgrader(), "fetch_feedback", "oublier", f"--course={COURSE}", *args
        )
        assert fetched.returncode == 0, _said(fetched)
        pages = list((students[bob].home / "oublier" / "feedback").rglob("oublier.html"))
        assert len(pages) == 1, _said(fetched)


def test_a_full_disk_keeps_the_earlier_copy(course, tmp_path):
    """The replacement of ana's collected copy cannot be written (submitted/ on a full disk: a
    3 MB tmpfs, her new notebook 4 MB): her earlier copy is still whole, nothing half-written is
    left, her copy is named, and bob is collected in the same run."""
    t = tag()
    ana, bob = f"x32{t}ana", f"x32{t}bob"
    submitted = course / "submitted"
    submitted.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m,mode=0700", "tmpfs", str(submitted)],
        capture_output=True,
        text=True,
    )
    assert mounted.returncode == 0, _said(mounted)
    try:
        with unix_users([ana, bob]), exchange_root() as exchange:
            args = [f"--Exchange.root={exchange}"]
            released_copy(exchange)
            students = {name: Student.account(name) for name in (ana, bob)}
            done = students[ana].submit(course, exchange, "graine")
            assert done.returncode == 0, _said(done)
            first = grading(course, "collect", "oublier", *args)
            assert first.returncode == 0, _said(first)

            time.sleep(1.1)  # nbgrader's folder names count seconds
            padding = "x" * 4_000_000
            notebook = students[ana].home / "oublier" / "oublier.ipynb"
            for name, sample in ((ana, "complete_vacuum"), (bob, "graine")):
                done = students[name].submit(course, exchange, sample)
                assert done.returncode == 0, _said(done)
            big = nbformat.read(_newest(exchange, ana) / "oublier.ipynb", as_version=4)
            big.cells.append(nbformat.v4.new_markdown_cell(padding))
            nbformat.write(big, notebook)
            os.chown(notebook, *_ids(students[ana].home))
            moved = students[ana].run(
                "cp", str(notebook), str(_newest(exchange, ana) / "oublier.ipynb")
            )
            assert moved.returncode == 0, _said(moved)

            updated = grading(course, "collect", "oublier", "--update", *args)
            said = _said(updated)
            assert updated.returncode == 1, said
            assert _newest(exchange, ana).name in said and "disque plein" in said, said
            mine = submitted / ana / "oublier"
            assert answer_of(mine / "oublier.ipynb") == sample_text("graine")
            assert sorted(p.name for p in (submitted / ana).iterdir()) == ["oublier"]
            theirs = submitted / bob / "oublier" / "oublier.ipynb"
            assert answer_of(theirs) == sample_text("graine")
    finally:
        subprocess.run(["umount", str(submitted)], check=True)
