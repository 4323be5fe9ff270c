"""A submission belongs to its submitter (issue 18, point 7): with nbgrader's exchange between
real Unix users, a copy dropped under a classmate's name (``nbgrader submit --student bob`` run by
eve) is set aside, named, and collect fails, while the classmate's own work is collected; a
student's own resubmission still replaces the earlier one. Stock ``nbgrader collect`` from
``grader/`` (what ``make collect`` runs) uses the course's collect class through
``nbgrader_config.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from exchange_class import (
    answer_of,
    exchange_root,
    release,
    sample_text,
    student_submit,
    tag,
    unix_users,
)
from grading_course import nbgrader

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _inbound(exchange: Path) -> Path:
    return exchange / "memoire-tuteur" / "inbound"


def test_copy_under_a_classmates_name_is_set_aside(course):
    t = tag()
    bob, eve = f"h18{t}bob", f"h18{t}eve"
    with unix_users([bob, eve]), exchange_root() as exchange:
        release(course, exchange)
        done = student_submit(bob, course, exchange, "complete_vacuum")
        assert done.returncode == 0, done.stdout + done.stderr
        forged = student_submit(eve, course, exchange, "ebauche", f"--student={bob}")
        assert forged.returncode == 0, forged.stdout + forged.stderr  # nbgrader accepts it
        copies = sorted(p.name for p in _inbound(exchange).iterdir())
        assert len(copies) == 2 and all(c.startswith(f"{bob}+oublier+") for c in copies)
        eves = [c for c in copies if (_inbound(exchange) / c).owner() == eve]
        assert len(eves) == 1, copies

        collected = nbgrader(course, "collect", "oublier", f"--Exchange.root={exchange}")
        out = collected.stdout + collected.stderr
        assert collected.returncode != 0, out
        assert eves[0] in out and f"appartient à « {eve} », pas à « {bob} »" in out, out
        mine = course / "submitted" / bob / "oublier" / "oublier.ipynb"
        assert answer_of(mine) == sample_text("complete_vacuum")
        kept = course / "quarantaine" / "oublier" / eves[0] / "oublier.ipynb"
        assert answer_of(kept) == sample_text("ebauche")

        # formgrader's Collect passes --update: eve's newer copy still never replaces bob's
        again = nbgrader(course, "collect", "--update", "oublier", f"--Exchange.root={exchange}")
        assert again.returncode != 0 and eves[0] in again.stdout + again.stderr
        assert answer_of(mine) == sample_text("complete_vacuum")

        # bob's own resubmission replaces his earlier one
        resubmitted = student_submit(bob, course, exchange, "graine")
        assert resubmitted.returncode == 0, resubmitted.stdout + resubmitted.stderr
        update = nbgrader(course, "collect", "--update", "oublier", f"--Exchange.root={exchange}")
        assert update.returncode != 0  # eve's copy is still in the exchange, and still named
        assert answer_of(mine) == sample_text("graine")
        assert answer_of(kept) == sample_text("ebauche")


def test_honest_class_collects_with_status_zero(course):
    t = tag()
    ana, bob = f"h18{t}ana", f"h18{t}bob"
    with unix_users([ana, bob]), exchange_root() as exchange:
        release(course, exchange)
        for user, sample in ((ana, "complete_vacuum"), (bob, "graine")):
            done = student_submit(user, course, exchange, sample)
            assert done.returncode == 0, done.stdout + done.stderr
        collected = nbgrader(course, "collect", "oublier", f"--Exchange.root={exchange}")
        assert collected.returncode == 0, collected.stdout + collected.stderr
        for user, sample in ((ana, "complete_vacuum"), (bob, "graine")):
            notebook = course / "submitted" / user / "oublier" / "oublier.ipynb"
            assert answer_of(notebook) == sample_text(sample)
        assert not (course / "quarantaine").exists()


def test_link_and_unparsable_name_in_the_exchange(course):
    """bob links his exchange folder to ana's home copy (the instructor's collect would follow
    it); he also drops a folder whose name nbgrader cannot parse (stock collect then stops for
    the whole class). Both are set aside; ana is collected."""
    t = tag()
    ana, bob = f"h18{t}ana", f"h18{t}bob"
    with unix_users([ana, bob]), exchange_root() as exchange:
        release(course, exchange)
        done = student_submit(ana, course, exchange, "complete_vacuum")
        assert done.returncode == 0, done.stdout + done.stderr
        inbound = _inbound(exchange)
        from exchange_class import student_run

        link = f"{bob}+oublier+2099-01-01 00:00:00.000000 UTC+abc"
        target = os.path.expanduser(f"~{ana}/oublier")
        made = student_run(bob, "ln", "-s", target, str(inbound / link))
        assert made.returncode == 0, made.stderr
        bad = f"{bob}+oublier+pas-une-date+xyz"
        made = student_run(bob, "mkdir", str(inbound / bad))
        assert made.returncode == 0, made.stderr
        collected = nbgrader(course, "collect", "oublier", f"--Exchange.root={exchange}")
        out = collected.stdout + collected.stderr
        assert collected.returncode != 0, out
        assert link in out and "lien symbolique" in out, out
        assert bad in out and "nom de dépôt illisible" in out, out
        assert (course / "submitted" / ana / "oublier" / "oublier.ipynb").is_file()
        assert not (course / "submitted" / bob).exists()
