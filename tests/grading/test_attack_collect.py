"""Attacks on the collect that landed with the confined copier (``grading.nbgrader_ext.exchange``
and ``confined_copy``), as a student would make them with real Unix accounts, nbgrader's real
exchange and the course's real ``collect`` command:

- a file or folder name holding a line break forges a line of nbgrader's log, which the
  collect's summary reads back (``read_collect_log``): a classmate's copy said collected;
- a name that is not UTF-8 in a set-aside copy (a link named with a byte ``\\xff``) must not
  stop the collect before its set-aside list;
- sparse and empty files in as many set-aside copies as a student likes must not fill the
  instructor's disk through the quarantine;
- FIFOs named like the copy's files and names that abuse the copier's JSON protocol (held);
- an LMS archive's member names (the students' own file names) in ``make zip-collect``'s
  summary: a terminal's escape sequences, a line break.
"""

from __future__ import annotations

import os
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
from exchange_class import Student, exchange_root, released_copy, tag, unix_users
from grading.samples import build_submission
from grading_course import grading, register

NBSP = "\u00a0"
COURSE = "memoire-tuteur"


def q(text: str) -> str:
    return f"«{NBSP}{text}{NBSP}»"


def _said(proc: subprocess.CompletedProcess) -> str:
    return proc.stdout + proc.stderr


def _copy_of(exchange: Path, student: str) -> Path:
    (copy,) = sorted((exchange / COURSE / "inbound").glob(f"{student}+oublier+*"))
    return copy


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_file_name_with_a_line_break_forges_no_collected_classmate(course):
    """ana submits, then adds to her copy files whose names hold a line break (each kind
    ``str.splitlines`` knows) followed by nbgrader's own log line for bob's collect. bob never
    submitted: the summary must not say his copy was collected (the positive control: ana's
    is, and the odd files are named, escaped)."""
    t = tag()
    ana, bob = f"at{t}ana", f"at{t}bob"
    register(course, ana, bob)
    line = f"[CollectApp | INFO] Collecting submission: {bob} oublier"
    # nbgrader's log indents what follows a "\n" (held); str.splitlines also breaks at these
    forged = [f"x{sep}{line}" for sep in ("\n", "\r", "\x1e", "\x85", "\u2028")]
    with unix_users([ana, bob]), exchange_root() as exchange:
        released_copy(exchange)
        student = Student.account(ana)
        submitted = student.submit(course, exchange, "complete_vacuum")
        assert submitted.returncode == 0, _said(submitted)
        made = student.run("touch", *(str(_copy_of(exchange, ana) / f) for f in forged))
        assert made.returncode == 0, _said(made)
        said = _said(grading(course, "collect", "oublier", f"--Exchange.root={exchange}"))
    assert (course / "submitted" / ana / "oublier" / "oublier.ipynb").is_file(), said
    assert "1 rendu(s) ramassé(s)" in said and q(ana) in said, said
    assert q(bob) not in said, said
    assert "x\\r[CollectApp" in said and "x\\u2028[CollectApp" in said, said  # named, escaped
    assert not (course / "submitted" / bob).exists()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_set_aside_copy_with_a_name_not_in_utf8_is_listed(course):
    """eve deposits a copy named for bob (so it is set aside) holding a link named with the
    byte ``\\xff``: the link is listed in the quarantine's ``NON_COPIES.txt`` and the collect ends
    with its French list of set-aside copies, not a Python traceback."""
    t = tag()
    ana, bob, eve = f"at{t}ana", f"at{t}bob", f"at{t}eve"
    register(course, ana, bob, eve)
    with unix_users([ana, bob, eve]), exchange_root() as exchange:
        released_copy(exchange)
        students = {name: Student.account(name) for name in (ana, eve)}
        for name in (ana, eve):
            done = students[name].submit(course, exchange, "complete_vacuum")
            assert done.returncode == 0, _said(done)
        eves = _copy_of(exchange, eve)
        as_bob = eves.with_name(bob + eves.name[len(eve) :])
        moved = students[eve].run("mv", str(eves), str(as_bob))
        assert moved.returncode == 0, _said(moved)
        odd = os.fsdecode(b"lien-\xff")
        linked = students[eve].run("ln", "-s", "/etc/hostname", str(as_bob / odd))
        assert linked.returncode == 0, _said(linked)
        collected = grading(course, "collect", "oublier", f"--Exchange.root={exchange}")
    said = _said(collected)
    assert collected.returncode == 1, said
    assert "Traceback" not in said, said
    assert "mis de côté" in said and as_bob.name in said, said
    assert (course / "submitted" / ana / "oublier" / "oublier.ipynb").is_file(), said
    listed = (course / "quarantaine" / "oublier" / as_bob.name / "NON_COPIES.txt").read_bytes()
    assert b"lien-" in listed and b"lien symbolique" in listed, listed


def _tree(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_set_aside_copy_of_sparse_and_empty_files_does_not_fill_the_quarantine(course):
    """eve deposits four copies named for bob (set aside), each holding 30 sparse files of
    900 kB (nothing on her disk) and 1 100 empty ones: the quarantine, on the instructor's disk,
    keeps of them all at most the limit of one file in bytes (``max_file_size``, 1 MB here) and
    ``QUARANTINE_ENTRIES`` entries (besides each copy's folder and its ``NON_COPIES.txt``), and
    lists the rest in ``NON_COPIES.txt``."""
    from grading.nbgrader_ext.confined_copy import QUARANTINE_ENTRIES

    t = tag()
    bob, eve = f"at{t}bob", f"at{t}eve"
    register(course, bob, eve)
    with unix_users([bob, eve]), exchange_root() as exchange:
        released_copy(exchange)
        student = Student.account(eve)
        done = student.submit(course, exchange, "complete_vacuum")
        assert done.returncode == 0, _said(done)
        eves = _copy_of(exchange, eve)
        as_bob = eves.with_name(bob + eves.name[len(eve) :])
        script = (
            f"mv '{eves}' '{as_bob}' && cd '{as_bob}' && "
            "for i in $(seq -w 1 30); do truncate -s 900K creux-$i; done && "
            "mkdir vides && cd vides && seq 1 1100 | xargs touch && "
            f"for i in 1 2 3; do cp -a '{as_bob}' '{as_bob}'$i; done"
        )
        made = student.run("sh", "-c", script)
        assert made.returncode == 0, _said(made)
        sparse = list(as_bob.glob("creux-*"))
        # the positive control: 27 MB as read, nothing on eve's disk
        assert sum(p.stat().st_size for p in sparse) == 30 * 900 * 1024
        assert sum(p.stat().st_blocks for p in sparse) == 0
        collected = grading(
            course,
            "collect",
            "oublier",
            f"--Exchange.root={exchange}",
            "--CourseDirectory.max_file_size=1000",
        )
    said = _said(collected)
    assert collected.returncode == 1, said
    assert all(f"{as_bob.name}{i}" in said for i in ("", 1, 2, 3)), said  # four set aside
    quarantine = course / "quarantaine" / "oublier"
    kept = quarantine / as_bob.name
    files = [p for p in _tree(quarantine) if p.name != "NON_COPIES.txt"]
    assert files, said  # something was kept
    assert sum(p.stat().st_size for p in files) <= 1000 * 1000
    assert len(list(quarantine.rglob("*"))) <= QUARANTINE_ENTRIES + 2 * 4
    listed = (kept / "NON_COPIES.txt").read_text(encoding="utf-8")
    assert "octets copiés en tout" in listed, listed
    assert f"au-delà de {QUARANTINE_ENTRIES} fichiers et dossiers" in listed, listed


@pytest.mark.timeout(60)
def test_fifos_named_like_the_copy_files_do_not_hang_the_copier(tmp_path):
    """A copy whose notebook, ``timestamp.txt`` and ``submission_secret.txt`` are FIFOs (an
    open or a read of one would wait forever for a writer), and names that abuse the JSON
    protocol (quotes, a line break, a byte that is not UTF-8): the real child answers at once,
    the copy refused with why, the odd names given back exactly; the same set aside for the
    quarantine is kept without its FIFOs. Held: every file is opened ``O_NONBLOCK`` and checked
    on its descriptor before any read (the positive control: a plain copy beside it is staged).
    Not slow: no Unix user, no nbgrader."""
    from grading.nbgrader_ext.confined_copy import run_copier

    inbound = tmp_path / "inbound"
    fifo, plain = inbound / "ana+oublier+x", inbound / "ben+oublier+x"
    for copy in (fifo, plain):
        copy.mkdir(parents=True)
    for name in ("oublier.ipynb", "timestamp.txt", "submission_secret.txt"):
        os.mkfifo(fifo / name)
    odd = ['"}], "results": [', "a\nb", os.fsdecode(b"\xff\xfe")]
    for name in odd:
        (fifo / name).write_text("x")
    (plain / "oublier.ipynb").write_text('{"cells": []}')
    staging = tmp_path / "staging"
    staging.mkdir()
    items = [
        {"folder": fifo.name, "uid": None, "out": "0"},
        {"folder": plain.name, "uid": None, "out": "1"},
        {"folder": fifo.name, "uid": None, "out": "2", "keep": True},
    ]
    job = {
        "inbound": str(inbound),
        "staging": str(staging),
        "confine": True,
        "notebooks": ["oublier.ipynb"],
        "limit": 1_000_000,
        "small": 4096,
        "file_mode": 0o600,
        "dir_mode": 0o700,
        "items": items,
    }
    refused, staged, kept = run_copier(job)["results"]
    assert refused["problem"] == f"{q('oublier.ipynb')} n'est pas un fichier", refused
    # listed until the FIFO stopped the copy (the names sorted before it), exactly as they are
    assert refused["ignored"] == sorted(n for n in odd if n < "oublier.ipynb"), refused
    assert (staged["problem"], staged["notebooks"]) == (None, ["oublier.ipynb"]), staged
    assert (staging / "1" / "oublier.ipynb").read_text() == '{"cells": []}'
    assert sorted(p.name for p in (staging / "2").iterdir()) == sorted(odd), kept
    fifos = [line for line in kept["skipped"] if "n'est pas un fichier" in line]
    assert len(fifos) == 3, kept


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_zip_member_names_reach_the_terminal_escaped(course):
    """An LMS archive keeps the names students gave their files: a member named with a
    terminal's escape sequence (retitling the window, or worse) and one holding a line break
    are named in ``make zip-collect``'s summary, escaped (the positive control: ana's notebook
    is collected)."""
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (course / "submissions" / "complete_vacuum.py").read_text(encoding="utf-8")
    notebook = nbformat.writes(build_submission(release, text))
    archive = course / "downloaded" / "oublier" / "archive" / "ent.zip"
    archive.parent.mkdir(parents=True)
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("rendus/ana/oublier.ipynb", notebook)
        zf.writestr("rendus/ana/\x1b]0;pirate\x07.ipynb", notebook)
        zf.writestr("rendus/ana/x\n✘ 0 fichier(s) non collecté(s).ipynb", notebook)
    proc = grading(course, "zip_collect", "oublier")
    said = _said(proc)
    assert (course / "submitted" / "ana" / "oublier" / "oublier.ipynb").is_file(), said
    assert "pirate" in said and "\x1b" not in said and "\x07" not in said, repr(said)
    assert "\\x1b]0;pirate\\x07.ipynb" in said, said
    assert "x\\n✘ 0 fichier(s)" in said, said
