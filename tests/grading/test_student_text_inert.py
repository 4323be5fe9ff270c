"""No student text is live in a page an instructor opens, in Debian's chromium: the hostile
written answer (grader/submissions/reponse_ecrite_piegee.md: <script>, event handlers, iframes,
SVG, MathML and javascript: links, object, meta refresh, form, CSS url()), hostile HTML, SVG,
JavaScript and Markdown outputs, hostile names. Each page (the feedback page of `make feedback`,
the class report, formgrader's submission view on a real Jupyter server) is hovered, clicked and
tabbed through; no script runs (window.__pwned stays unset in every frame), no request leaves
the page, no terminal is opened, and the French answer still reads as written. A positive control
shows the same probe catches the payloads when nbconvert renders them unsanitised.

Nor can a written answer stall those pages (issue 32 point 5): ``"<ul><li>" * 20000`` (160 KB)
took 78 s in `make feedback` and froze formgrader's whole server for about a minute when the
submission was opened. With the bounds of grading/nbgrader_ext/safe_html.py, the real `make
feedback` (``python -m grading.feedback``) and a real formgrader render it in seconds, its head
sanitised and the rest shown as text after the French note; a classmate's ordinary Markdown, in the
same run, still renders as Markdown (no note). Budgets are wall time on a shared machine: generous,
and far under the time measured before the bound.

One class holds every page's author (one grading, one feedback run, one formgrader): eve with the
hostile names, answer and outputs, zed with the pathological answer, ana with an ordinary one."""

from __future__ import annotations

import json
import shutil
import time
import urllib.request
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from grading.nbgrader_ext.safe_html import OVERFLOW_NOTE
from grading.samples import build_submission
from grading_course import (
    formgrader_server,
    generated_course,
    grading,
    nbgrader,
    register,
    submit,
)
from helpers import REPO, tp_points
from nbgrader.api import Gradebook

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

# the browser's tests are marked one by one: the pages' time budgets need none
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"]
STUDENT = "eve"
FIRST = "<img src=x onerror=\"window.__pwned='prenom'\">"
LAST = "<script>window.__pwned='nom'</script>"
TOKEN = "jeton-de-test-pages-inertes"
ATTACKER = "127.0.0.1:9"
VISIBLE_OUTPUT = "sortie HTML visible"
PATHOLOGICAL = "<ul><li>" * 20000 + "\n\n" + "[" * 40000
ORDINARY = "## Ma démarche\n\nJe supprime **d'abord** les événements, puis `user_states`.\n"
FEEDBACK_BUDGET = 60  # seconds, the whole command for the class (the page alone took 78 s)
PAGE_BUDGET = 15  # seconds, formgrader's submission view (about 60 s before)
OUTPUTS = [
    nbformat.v4.new_output(
        "display_data",
        data={
            "text/html": "<img src=x onerror=\"window.__pwned='sortie-html'\">"
            "<script>window.__pwned='sortie-script'</script>"
            f'<iframe src="http://{ATTACKER}/sortie-iframe"></iframe>'
            f"<b>{VISIBLE_OUTPUT}</b>",
            "text/plain": "html",
        },
    ),
    nbformat.v4.new_output(
        "display_data",
        data={"application/javascript": "window.__pwned='sortie-js'", "text/plain": "js"},
    ),
    nbformat.v4.new_output(
        "display_data",
        data={
            "image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' "
            "onload=\"window.__pwned='sortie-svg'\"><script>window.__pwned='svg-script'</script>"
            f"<image href='http://{ATTACKER}/sortie-svg-image' width='9' height='9'/></svg>",
            "text/plain": "svg",
        },
    ),
    nbformat.v4.new_output(
        "display_data",
        data={
            "text/markdown": "[md](javascript:window.__pwned='sortie-md') "
            "<img src=x onerror=\"window.__pwned='sortie-md-img'\">",
            "text/plain": "md",
        },
    ),
    nbformat.v4.new_output(
        "display_data",
        data={"text/html": "<script>window.__pwned='isolee'</script>", "text/plain": "i"},
        metadata={"text/html": {"isolated": True}},
    ),
    nbformat.v4.new_output(  # an image whose path (metadata) is any URL
        "display_data",
        data={"image/png": "iVBORw0KGgo=", "text/plain": "png"},
        metadata={"filenames": {"image/png": f"http://{ATTACKER}/sortie-png"}},
    ),
    nbformat.v4.new_output(
        "execute_result",
        data={"text/html": "<svg><script>window.__pwned='resultat'</script></svg>"},
        execution_count=1,
    ),
]


def _submit_written(grader: Path, student: str, written: str) -> None:
    """The lesson's seed answer with `written` as the written answer, submitted as `student`."""
    release = grader.parent / "notebooks" / "oublier" / "oublier.ipynb"
    code = (REPO / "grader" / "submissions" / "graine.py").read_text(encoding="utf-8")
    folder = grader / "submitted" / student / "oublier"
    folder.mkdir(parents=True)
    nbformat.write(build_submission(release, code, written), folder / "oublier.ipynb")


@pytest.fixture(scope="module")
def graded_pages(tmp_path_factory) -> tuple[Path, float]:
    """A course graded with the course's tools: eve (hostile names) submitted the hostile
    written answer and a code cell whose outputs are hostile, zed the pathological written
    answer, ana an ordinary one; the feedback pages written (that command timed) and the class
    report. Returns grader/ and the feedback command's time."""
    grader = generated_course(tmp_path_factory.mktemp("pieges") / "cours")
    # the hostile names written as `nbgrader db student add` writes them (its gradebook call),
    # in this process: registering is the set-up here, not what is shown
    with Gradebook(f"sqlite:///{grader / 'gradebook.db'}", "memoire-tuteur") as gb:
        gb.update_or_create_student(STUDENT, first_name=FIRST, last_name=LAST)
    register(grader, "zed", "ana")
    folder = submit(grader, STUDENT, "reponse_ecrite_piegee")
    nb = nbformat.read(folder / "oublier.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("1 + 1"))
    nbformat.write(nb, folder / "oublier.ipynb")
    _submit_written(grader, "zed", PATHOLOGICAL)
    _submit_written(grader, "ana", ORDINARY)
    proc = grading(grader, "autograde", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the graded copy holds the outputs as the cell's run would leave them (display(HTML(...))…)
    graded = grader / "autograded" / STUDENT / "oublier" / "oublier.ipynb"
    nb = nbformat.read(graded, as_version=4)
    # the cell eve added is not in the graded copy (rebuilt on the release): the hostile outputs
    # go in the last code cell, as any output a page shows
    [c for c in nb.cells if c.cell_type == "code"][-1].outputs = OUTPUTS
    nbformat.write(nb, graded)
    started = time.monotonic()
    proc = grading(grader, "feedback", "oublier")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = nbgrader(
        grader, "export", "--exporter=grading.report.ClassReport", "--assignment=oublier"
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return grader, elapsed


@pytest.fixture(scope="module")
def hostile_course(graded_pages) -> Path:
    """The graded course's grader/ folder."""
    return graded_pages[0]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium introuvable\u00a0: lancez `make system-deps`")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=path, headless=True, args=FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _probe(browser, url: str, own: tuple[str, ...]) -> dict:
    """Open `url`, move the mouse over the whole page, click every link and every element of
    the written answer, tab through it; report what ran and every request the page made (those
    outside `own` prefixes are refused and recorded)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="fr-FR")
    page = context.new_page()
    requests: list[str] = []
    refused: list[str] = []
    dialogs: list[str] = []

    def guard(route):
        requests.append(route.request.url)
        if route.request.url.startswith(own):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(url)
        page.wait_for_load_state("load")
        for x in range(0, 1280, 80):
            for y in range(0, 900, 60):
                page.mouse.move(x, y)
        cell = page.locator(".text_cell_render", has_text="Ma procédure").first
        for element in cell.locator("*").all():
            if element.is_visible():
                element.hover(timeout=2000, force=True)
                element.click(timeout=2000, force=True, no_wait_after=True)
        for _ in range(10):
            page.keyboard.press("Tab")
        page.wait_for_timeout(1500)  # a meta refresh of 0 s, a late onerror
        flags = [
            frame.evaluate("() => window.__pwned === undefined ? null : String(window.__pwned)")
            for frame in page.frames
            if not frame.is_detached()
        ]
        return {
            "flags": [f for f in flags if f is not None],
            "requests": requests,
            "refused": refused,
            "dialogs": dialogs,
            "url": page.url,
            "answer": cell.inner_html(),
            "answer_text": cell.inner_text(),
            "text": page.inner_text("body"),
        }
    finally:
        context.close()


def _reads_as_written(seen: dict) -> None:
    text, html = seen["answer_text"], seen["answer"]
    assert "Ma procédure" in text and "puis je lance VACUUM" in text
    assert "il n'en reste « rien » de lisible" in text
    assert "<code>user_states</code>" in html and "<strong>d'abord</strong>" in html
    assert html.count("<li>") == 3 and "lister les sessions de l'élève" in text
    assert "<script>window.__pwned" in text  # the refused markup is shown, as text


def _inert(seen: dict, url: str) -> None:
    assert seen["flags"] == [], seen["flags"]
    assert seen["dialogs"] == []
    assert seen["url"].split("?")[0] == url  # no refresh, no navigation
    assert not [r for r in seen["requests"] if ATTACKER in r or "javascript:" in r], seen


@pytest.mark.browser
def test_feedback_page_runs_nothing_and_fetches_nothing(hostile_course, browser):
    page = hostile_course / "feedback" / STUDENT / "oublier" / "oublier.html"
    html = page.read_text(encoding="utf-8")
    assert VISIBLE_OUTPUT in html and "Content-Security-Policy" in html  # outputs are there
    assert _live_payloads(html) == []
    url = page.as_uri()
    seen = _probe(browser, url, ("file:", "data:"))
    _inert(seen, url)
    assert seen["refused"] == [] and seen["requests"] == [url]  # the page, nothing else
    _reads_as_written(seen)
    assert VISIBLE_OUTPUT in seen["text"]


@pytest.mark.browser
def test_class_report_runs_nothing_with_hostile_names(hostile_course, browser):
    url = (hostile_course / "rapport" / "rapport.html").as_uri()
    context = browser.new_context()
    page = context.new_page()
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    page.wait_for_load_state("load")
    page.mouse.move(300, 300)
    page.wait_for_timeout(500)
    pwned = page.evaluate("() => window.__pwned === undefined ? null : String(window.__pwned)")
    text = page.inner_text("body")
    context.close()
    assert pwned is None
    assert FIRST in text and LAST in text  # shown as text, not markup
    assert [r for r in requests if not r.startswith("data:")] == [url]


@pytest.mark.browser
def test_the_probe_catches_the_payloads_when_unsanitised(browser, tmp_path):
    """Positive control: nbconvert's stock filter leaves the payloads live; the probe sees
    the script run and the requests leave."""
    from helpers import REPO
    from nbconvert.filters import markdown2html

    written = (REPO / "grader" / "submissions" / "reponse_ecrite_piegee.md").read_text("utf-8")
    # without the payloads that navigate away (the probe reads the page afterwards)
    written = "\n".join(
        line for line in written.splitlines() if "http-equiv" not in line and "<form" not in line
    )
    raw = tmp_path / "brut.html"
    raw.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
        f'<div class="text_cell_render">{markdown2html(written)}</div></body></html>',
        encoding="utf-8",
    )
    url = raw.as_uri()
    seen = _probe(browser, url, ("file:", "data:"))
    assert seen["flags"], "la sonde ne voit pas le script"
    assert any(ATTACKER in r for r in seen["refused"]), seen["refused"]


@pytest.fixture(scope="module")
def formgrader(hostile_course, tmp_path_factory):
    """A real Jupyter server with nbgrader's formgrader on the graded course, started as
    `make formgrader` starts it (from grader/, the course's configuration)."""
    with formgrader_server(hostile_course, tmp_path_factory.mktemp("formgrader"), TOKEN) as url:
        yield url


class _Live(HTMLParser):
    """The payloads an HTML parser would make live: a script's code or an attribute's value
    that mentions window.__pwned (escaped text is data, not markup)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        self.found += [f"{tag} {name}" for name, value in attrs if "__pwned" in (value or "")]

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script and "__pwned" in data:
            self.found.append(f"script: {data[:60]}")


def _live_payloads(html: str) -> list[str]:
    parser = _Live()
    parser.feed(html)
    parser.close()
    return parser.found


def _api(url: str, path: str) -> tuple[int, str]:
    req = urllib.request.Request(url + path, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(req, timeout=20) as resp:  # noqa: S310 - localhost only
        return resp.status, resp.read().decode()


@pytest.mark.browser
def test_formgrader_submission_view_runs_nothing(hostile_course, formgrader, browser):
    with Gradebook(f"sqlite:///{hostile_course / 'gradebook.db'}") as gb:
        submission = gb.find_submission_notebook("oublier", "oublier", STUDENT).id
        # the sample's expected score (attendus.json): the complete answer, full marks
        assert gb.find_submission("oublier", STUDENT).code_score == FULL
    status, raw = _api(formgrader, f"/formgrader/submissions/{submission}/")
    assert status == 200 and VISIBLE_OUTPUT in raw  # the hostile copy is the one shown
    assert _live_payloads(raw) == []
    page = f"{formgrader}/formgrader/submissions/{submission}/"
    seen = _probe(browser, f"{page}?token={TOKEN}", (formgrader, "data:"))
    _inert(seen, page)
    # the page's own resources only: formgrader's scripts and API (MathJax's CDN is refused)
    outside = [r for r in seen["refused"] if "mathjax" not in r.lower()]
    assert outside == [], outside
    assert not [r for r in seen["requests"] if "/api/terminals" in r or "/api/kernels" in r]
    assert json.loads(_api(formgrader, "/api/terminals")[1]) == []  # no terminal opened
    _reads_as_written(seen)
    assert LAST in seen["text"] or FIRST in seen["text"] or STUDENT in seen["text"]


def test_feedback_pages_render_in_time_with_the_rest_as_text(graded_pages):
    grader, elapsed = graded_pages
    print(f"make feedback, three students, one pathological answer: {elapsed:.1f} s")
    assert elapsed < FEEDBACK_BUDGET, f"{elapsed:.1f} s"
    zed = (grader / "feedback" / "zed" / "oublier" / "oublier.html").read_text("utf-8")
    ana = (grader / "feedback" / "ana" / "oublier" / "oublier.html").read_text("utf-8")
    assert OVERFLOW_NOTE in unescape(zed) and "&lt;ul&gt;&lt;li&gt;" in zed  # rest as text
    assert zed.count("<ul><li>") <= 40  # the head, nested as far as the bound
    assert OVERFLOW_NOTE not in unescape(
        ana
    )  # control: ordinary Markdown still renders as Markdown
    assert "<h2>Ma démarche</h2>" in ana and "<code>user_states</code>" in ana


def _get(url: str) -> tuple[int, str, float]:
    req = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    started = time.monotonic()
    with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - localhost only
        body = resp.read().decode()
    return resp.status, body, time.monotonic() - started


def test_formgrader_opens_the_submission_in_time(hostile_course, formgrader):
    with Gradebook(f"sqlite:///{hostile_course / 'gradebook.db'}") as gb:
        ids = {s: gb.find_submission_notebook("oublier", "oublier", s).id for s in ("zed", "ana")}
    url = formgrader
    _get(f"{url}/formgrader/submissions/{ids['ana']}/")  # formgrader's first page warms up
    status, zed, elapsed = _get(f"{url}/formgrader/submissions/{ids['zed']}/")
    print(f"formgrader, pathological submission: {elapsed:.1f} s")
    assert status == 200 and elapsed < PAGE_BUDGET, f"{elapsed:.1f} s"
    assert OVERFLOW_NOTE in unescape(zed)
    status, ana, _ = _get(f"{url}/formgrader/submissions/{ids['ana']}/")
    assert status == 200 and OVERFLOW_NOTE not in unescape(ana) and "<h2>Ma démarche</h2>" in ana
