"""The class report and a feedback page as an instructor and a student see them: rendered by
Debian's chromium (headless, 1280 px wide, no network), no chart wider than the page, every
criterion title on the report, no literal Markdown in the feedback's messages."""

from __future__ import annotations

import os
import shutil

import nbformat
import pytest
from grading.nbgrader_ext.criterion_titles import criterion_title
from helpers import REPO

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900)]
VIEWPORT = {"width": 1280, "height": 900}
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture
def browser_page():
    """One headless Debian chromium page; every request that is not a local file is refused."""
    from playwright.sync_api import sync_playwright

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium introuvable\u00a0: lancez `make system-deps`")
    refused: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, headless=True, args=FLAGS)
        try:
            page = browser.new_page(viewport=VIEWPORT, locale="fr-FR")

            def guard(route):
                if route.request.url.startswith(("file:", "data:")):
                    route.continue_()
                else:
                    refused.append(route.request.url)
                    route.abort()

            page.route("**/*", guard)
            yield page, refused
        finally:
            browser.close()


def test_report_fits_the_page_and_names_every_criterion(graded_class, browser_page):
    page, refused = browser_page
    page.goto((graded_class.report_dir / "rapport.html").as_uri())
    page.wait_for_load_state("load")
    layout = page.evaluate(
        """() => ({
            page: document.documentElement.clientWidth,
            scroll: document.documentElement.scrollWidth,
            images: [...document.images].map(i => ({
                alt: i.alt, right: i.getBoundingClientRect().right,
                shown: i.getBoundingClientRect().width, natural: i.naturalWidth,
                complete: i.complete && i.naturalWidth > 0})),
            text: document.body.innerText,
        })"""
    )
    assert layout["scroll"] <= layout["page"], "la page défile de côté"
    assert len(layout["images"]) == 2
    for image in layout["images"]:
        assert image["complete"], image["alt"]
        assert image["right"] <= layout["page"], image  # inside the page
        assert image["natural"] <= image["shown"] + 1, image  # shown whole, not shrunk
    nb = nbformat.read(REPO / "solutions" / "oublier" / "oublier.ipynb", as_version=4)
    titles = {
        criterion_title(c.metadata.nbgrader["grade_id"])
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata.nbgrader.get("solution")
    }
    for title in titles:
        assert title in layout["text"], title
    for name in ("Ana Martin", "Ben Durand", "Cyr Petit", "Dou Leroy"):
        assert name in layout["text"]
    assert "pas de rendu" in layout["text"] and "1 j 12 h (−2\u00a0pt)" in layout["text"]
    assert not refused
    if os.environ.get("COURSE_SCREENSHOTS"):
        shots = REPO / ".artefacts" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "rapport-de-classe.png"), full_page=True)


def test_feedback_page_shows_messages_without_markdown(graded_class, browser_page):
    page, refused = browser_page
    page.goto(graded_class.feedback_page("cyr").as_uri())
    page.wait_for_load_state("load")
    outputs = page.eval_on_selector_all(".output_subarea", "els => els.map(e => e.innerText)")
    messages = [text for text in outputs if "Échec" in text]
    assert messages, outputs
    assert not any("`" in text for text in messages), messages
    # the stub's message quotes the code to replace between « », as the notebook shows it
    assert any("«\u00a0raise NotImplementedError()\u00a0»" in text for text in messages), messages
    heading = page.locator(".panel-heading h4").inner_text()
    assert heading.startswith("oublier — note") and "Score" not in page.inner_text("body")
    assert page.evaluate("document.documentElement.lang") == "fr"
    assert page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
    assert not refused  # the page opens offline
