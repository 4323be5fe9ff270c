"""A written answer cannot stall the instructor's pages (issue 32 point 5): ``"<ul><li>" * 20000``
(160 KB) took 78 s in `make feedback` and froze formgrader's whole server for about a minute when
the submission was opened. With the bounds of grading/nbgrader_ext/safe_html.py, the real `make
feedback` (``python -m grading.feedback``) and a real formgrader render it in seconds, its head
sanitised and the rest shown as text after the French note; a classmate's ordinary Markdown, in the
same run, still renders as Markdown (no note). Budgets are wall time on a shared machine: generous,
and far under the time measured before the bound."""

from __future__ import annotations

import html
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from grading.nbgrader_ext.safe_html import OVERFLOW_NOTE
from grading.samples import build_submission
from grading_course import formgrader_server, generated_course, grading, register
from helpers import REPO
from nbgrader.api import Gradebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
TOKEN = "jeton-de-test-pages-lineaires"
PATHOLOGICAL = "<ul><li>" * 20000 + "\n\n" + "[" * 40000
ORDINARY = "## Ma démarche\n\nJe supprime **d'abord** les événements, puis `user_states`.\n"
FEEDBACK_BUDGET = 60  # seconds, the whole command for two students (the page alone took 78 s)
PAGE_BUDGET = 15  # seconds, formgrader's submission view (about 60 s before)


def _submit(grader: Path, student: str, written: str) -> None:
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    code = (REPO / "grader" / "submissions" / "graine.py").read_text(encoding="utf-8")
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True)
    nbformat.write(build_submission(release, code, written), folder / "oublier.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> tuple[Path, float]:
    """zed wrote the pathological answer, ana an ordinary one; both graded, then the feedback
    pages written by the course's command, timed. Returns grader/ and that time."""
    grader = generated_course(tmp_path_factory.mktemp("lineaire") / "cours")
    register(grader, "zed", "ana")
    _submit(grader, "zed", PATHOLOGICAL)
    _submit(grader, "ana", ORDINARY)
    proc = grading(grader, "autograde", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    started = time.monotonic()
    proc = grading(grader, "feedback", "oublier")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return grader, elapsed


def test_feedback_pages_render_in_time_with_the_rest_as_text(graded):
    grader, elapsed = graded
    print(f"make feedback, two students, one pathological answer: {elapsed:.1f} s")
    assert elapsed < FEEDBACK_BUDGET, f"{elapsed:.1f} s"
    zed = (grader / "feedback" / "zed" / "oublier" / "oublier.html").read_text("utf-8")
    ana = (grader / "feedback" / "ana" / "oublier" / "oublier.html").read_text("utf-8")
    assert OVERFLOW_NOTE in html.unescape(zed) and "&lt;ul&gt;&lt;li&gt;" in zed  # rest as text
    assert zed.count("<ul><li>") <= 40  # the head, nested as far as the bound
    assert OVERFLOW_NOTE not in html.unescape(
        ana
    )  # control: ordinary Markdown still renders as Markdown
    assert "<h2>Ma démarche</h2>" in ana and "<code>user_states</code>" in ana


def _get(url: str) -> tuple[int, str, float]:
    req = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    started = time.monotonic()
    with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - localhost only
        body = resp.read().decode()
    return resp.status, body, time.monotonic() - started


def test_formgrader_opens_the_submission_in_time(graded, tmp_path):
    grader, _ = graded
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}") as gb:
        ids = {s: gb.find_submission_notebook("oublier", "oublier", s).id for s in ("zed", "ana")}
    with formgrader_server(grader, tmp_path, TOKEN) as url:
        _get(f"{url}/formgrader/submissions/{ids['ana']}/")  # formgrader's first page warms up
        status, zed, elapsed = _get(f"{url}/formgrader/submissions/{ids['zed']}/")
        print(f"formgrader, pathological submission: {elapsed:.1f} s")
        assert status == 200 and elapsed < PAGE_BUDGET, f"{elapsed:.1f} s"
        assert OVERFLOW_NOTE in html.unescape(zed)
        status, ana, _ = _get(f"{url}/formgrader/submissions/{ids['ana']}/")
        assert (
            status == 200
            and OVERFLOW_NOTE not in html.unescape(ana)
            and "<h2>Ma démarche</h2>" in ana
        )
