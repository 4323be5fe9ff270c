"""Fixtures of the browser tests: one JupyterLab and one headless Chromium for the session.

Both are stopped by their process ids at the end, even when a test fails, and the teardown
asserts that nothing is left running (server, kernels, browser processes, listening port).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from browser_harness import (  # noqa: E402
    CHROMIUM_FLAGS,
    NOTEBOOK_TREES,
    REPO,
    VIEWPORT,
    Browser,
    JupyterLab,
    LabPage,
    alive,
    descendants,
    notebook_paths,
    pids_with_argument,
    port_open,
    start_jupyterlab,
    stop_jupyterlab,
    stop_pids,
)

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Debian's chromium (installed by .ci/system-deps), never a browser downloaded by a tool."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium introuvable : lancez `make system-deps` (apt-get install chromium)")
    return path


def _copy_tree(src: Path, dst: Path) -> None:
    shutil.copytree(
        src,
        dst,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.db", "*.db-*"),
        dirs_exist_ok=True,
    )


@pytest.fixture(scope="session")
def lab_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary copy of notebooks/ and solutions/ that the server serves and may dirty."""
    root = tmp_path_factory.mktemp("lab-root")
    for tree in NOTEBOOK_TREES:
        if (REPO / tree).is_dir():
            _copy_tree(REPO / tree, root / tree)
    return root


@pytest.fixture(scope="session")
def jupyterlab(tmp_path_factory: pytest.TempPathFactory, lab_root: Path) -> Iterator[JupyterLab]:
    """One JupyterLab for the whole session, stopped by its pid (and its kernels') at the end."""
    lab = start_jupyterlab(tmp_path_factory.mktemp("jupyterlab"), lab_root)
    try:
        yield lab
    finally:
        survivors = stop_jupyterlab(lab)
        assert lab.process.poll() is not None, "le serveur JupyterLab tourne encore"
        assert not survivors, f"processus restés après l'arrêt de JupyterLab : {survivors}"
        assert not port_open(lab.port), f"le port {lab.port} répond encore"


# Module scope, not session: Playwright's sync API keeps an event loop running in the main
# thread until it stops, and every async test collected after it would fail to start its own.
@pytest.fixture(scope="module")
def browser(
    chromium_path: str, jupyterlab: JupyterLab, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Browser]:
    """Headless Chromium with a fresh profile; every non-local request is blocked and recorded."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    before = set(descendants(os.getpid()))
    pw = sync_playwright().start()
    context, started = None, set()
    try:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=chromium_path,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport=VIEWPORT,
            locale="fr-FR",
        )
        started = set(descendants(os.getpid())) - before  # Playwright's driver and Chromium
        assert_debian_chromium(started)
        state = Browser(context, jupyterlab.base_url)

        def route(r: Any) -> None:
            url = r.request.url
            if state.local(url):
                r.continue_()
            else:
                state.blocked.append(url)
                r.abort()

        context.route("**/*", route)
        yield state
    finally:
        if context is not None:
            context.close()
        pw.stop()
        ours = started | set(pids_with_argument(str(profile)))
        leftovers = [p for p in ours if alive(p)]
        survivors = stop_pids(leftovers, grace=5.0)
        assert not survivors, f"processus Chromium restés : {survivors}"
        assert not leftovers, f"processus du navigateur à arrêter à la main : {leftovers}"


def assert_debian_chromium(pids: set[int]) -> None:
    """The browser really is Debian's package, not one downloaded by Playwright."""
    exes = set()
    for pid in pids:
        try:
            exes.add(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            continue
    browsers = {e for e in exes if "chrom" in Path(e).name}
    assert browsers, f"aucun processus Chromium lancé (exécutables vus : {exes})"
    for exe in browsers:
        assert "ms-playwright" not in exe, f"navigateur téléchargé par Playwright : {exe}"
        if shutil.which("dpkg"):
            owner = subprocess.run(["dpkg", "-S", exe], capture_output=True, text=True)
            assert owner.returncode == 0, f"{exe} n'appartient à aucun paquet Debian"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "course_notebook" in metafunc.fixturenames:
        paths = notebook_paths()
        metafunc.parametrize("course_notebook", paths, ids=paths)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    """Each phase's report on the test (``lab_page`` renews its page after a failure)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(scope="module")
def lab_tabs(browser: Browser, jupyterlab: JupyterLab) -> Iterator[list[LabPage]]:
    """The module's page, in a one-element list so that ``lab_page`` can replace it."""
    tabs = [LabPage(browser, jupyterlab, browser.context.new_page())]
    try:
        yield tabs
    finally:
        tabs[0].page.close()


@pytest.fixture
def lab_page(
    lab_tabs: list[LabPage],
    browser: Browser,
    jupyterlab: JupyterLab,
    request: pytest.FixtureRequest,
) -> Iterator[LabPage]:
    """The module's page, JupyterLab loaded once (LabPage.open); at the end every document is
    closed and every kernel shut down. After a failure, or when something stays open, the page
    is replaced by a fresh one: the next notebook never starts from a broken page."""
    try:
        yield lab_tabs[0]
    finally:
        reports = [getattr(request.node, f"report_{when}", None) for when in ("setup", "call")]
        failed = any(report is not None and report.failed for report in reports)
        if failed or not lab_tabs[0].close_documents():
            lab_tabs[0].page.close()
            lab_tabs[0] = LabPage(browser, jupyterlab, browser.context.new_page())
        jupyterlab.shutdown_kernels()
