"""The learner's JupyterLab (`make lab`) and the instructor's, as each one sees it.

`make lab` adds course/jupyter-config/eleve to JUPYTER_CONFIG_PATH for its own server only:
nbgrader's formgrader, course list and Create Assignment panel are off there, as in the hub's
student configuration (the assignment list stays). A server with the environment's configuration
alone, as `make formgrader` starts one (here the session's server), keeps the instructor's tools.
Both speak French (course.save_hook's settings override). Screenshots go to .artefacts/.
"""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from browser_harness import (
    REPO,
    SCREENSHOTS,
    Browser,
    JupyterLab,
    port_open,
    start_make_lab,
    stop_jupyterlab,
)

pytestmark = pytest.mark.browser

START = "lecons/00_commencer_ici.ipynb"
INSTRUCTOR_PLUGINS = ("formgrader", "course-list", "create-assignment")
# French labels of JupyterLab's menu bar (jupyterlab-language-pack-fr-FR), English ones
FRENCH_MENUS = {"Fichier", "Édition", "Affichage", "Exécution", "Noyau", "Paramètres", "Aide"}
ENGLISH_MENUS = {"File", "Edit", "View", "Run", "Kernel", "Settings", "Help"}

JS_VIEW = """() => {
  const app = window.jupyterapp;
  const config = JSON.parse(document.getElementById('jupyter-config-data').textContent);
  return {
    menus: Array.from(document.querySelectorAll('#jp-menu-panel .lm-MenuBar-itemLabel'))
      .map(e => e.textContent),
    right: Array.from(app.shell.widgets('right')).map(w => w.title.caption || w.title.label),
    plugins: Object.fromEntries(
      ['formgrader', 'course-list', 'create-assignment', 'assignment-list']
        .map(p => [p, app.hasPlugin('@jupyter/nbgrader:' + p)])),
    disabled: config.disabledExtensions || [],
    build: [config.buildCheck, config.buildAvailable],
    path: location.pathname,
    current: app.shell.currentWidget && app.shell.currentWidget.context
      ? app.shell.currentWidget.context.path : null,
  };
}"""


@pytest.fixture(scope="module")
def make_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterLab]:
    """`make lab`'s server, stopped by its process group at the end."""
    checkpoints = REPO / "notebooks" / "lecons" / ".ipynb_checkpoints"
    existed = checkpoints.exists()
    lab = start_make_lab(tmp_path_factory.mktemp("make-lab"))
    try:
        yield lab
    finally:
        survivors = stop_jupyterlab(lab)
        if not existed:  # JupyterLab's checkpoint of the start page opened in the checkout
            shutil.rmtree(checkpoints, ignore_errors=True)
        assert not survivors, f"processus restés après l'arrêt de make lab : {survivors}"
        assert not port_open(lab.port), f"le port {lab.port} répond encore"


def status(lab: JupyterLab, path: str) -> int:
    try:
        with urllib.request.urlopen(f"{lab.base_url}{path}?token={lab.token}", timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def view(browser: Browser, lab: JupyterLab, shot: str, url_path: str = "/lab?reset") -> dict:
    """Load ``url_path`` of ``lab`` (by default a fresh workspace: no notebook reopened from an
    earlier test), read what the page offers, open the Nbgrader menu and read its items."""
    if lab.base_url != browser.base_url:
        browser.other_servers.append(lab.base_url)
    page = browser.context.new_page()
    try:
        page.goto(f"{lab.base_url}{url_path}{'&' if '?' in url_path else '?'}token={lab.token}")
        page.wait_for_function(
            "() => window.jupyterapp && window.jupyterapp.shell && document.querySelector("
            "'#jp-menu-panel .lm-MenuBar-itemLabel')",
            timeout=90_000,
        )
        page.wait_for_timeout(1500)  # plugins that add menus and panels after start-up
        shown = page.evaluate(JS_VIEW)
        shown["nbgrader_menu"] = []
        if "Nbgrader" in shown["menus"]:
            page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
            items = page.locator(".lm-Menu:visible .lm-Menu-itemLabel")
            items.first.wait_for(timeout=10_000)
            shown["nbgrader_menu"] = items.all_inner_texts()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.evaluate("() => window.jupyterapp.shell.expandRight()")
        page.wait_for_timeout(300)
        page.screenshot(path=str(SCREENSHOTS / f"{shot}.png"))
        return shown
    finally:
        page.close()
        lab.shutdown_kernels()


def test_make_lab_shows_the_learner_view_in_french(make_lab: JupyterLab, browser: Browser):
    assert status(make_lab, "/formgrader") == 404  # nbgrader's instructor server extensions
    assert status(make_lab, "/formgraders") == 404
    browser.reset()
    shown = view(browser, make_lab, "vue-eleve-make-lab", url_path="/")
    assert browser.blocked == []  # nothing leaves 127.0.0.1
    assert FRENCH_MENUS <= set(shown["menus"]), shown["menus"]
    for plugin in INSTRUCTOR_PLUGINS:
        assert not shown["plugins"][plugin], shown["plugins"]
        assert f"@jupyter/nbgrader:{plugin}" in shown["disabled"]
    assert shown["plugins"]["assignment-list"]
    assert not any("Create Assignment" in title for title in shown["right"]), shown["right"]
    assert "Formgrader" not in shown["nbgrader_menu"], shown["nbgrader_menu"]
    # no build check at each page load (a `node` run) and no language-server search (an `npm`
    # run) at each server start: course.save_hook's page config, the learner's server config
    assert shown["build"] == [False, False], shown["build"]
    assert status(make_lab, "/lsp/status") == 404
    # `make lab` opens the start notebook once it exists, else JupyterLab's file browser
    if (REPO / "notebooks" / START).is_file():
        assert (shown["path"], shown["current"]) == (f"/lab/tree/{START}", START), shown
    else:
        assert shown["path"] == "/lab", shown


def test_french_is_the_course_default_not_the_browser_locale(
    make_lab: JupyterLab, browser: Browser
):
    """The environment's settings override makes fr_FR the default locale; a learner who picks
    another one gets JupyterLab's English strings, whatever the browser's locale."""
    with urllib.request.urlopen(
        f"{make_lab.base_url}/lab/api/settings/@jupyterlab/translation-extension:plugin"
        f"?token={make_lab.token}",
        timeout=10,
    ) as response:
        plugin = json.load(response)
    assert plugin["schema"]["properties"]["locale"]["default"] == "fr_FR"
    # and no news prompt on the first screen (JupyterLab asks while fetchNews is "none")
    with urllib.request.urlopen(
        f"{make_lab.base_url}/lab/api/settings/@jupyterlab/apputils-extension:notification"
        f"?token={make_lab.token}",
        timeout=10,
    ) as response:
        news = json.load(response)
    assert news["schema"]["properties"]["fetchNews"]["default"] == "false"
    assert news["schema"]["properties"]["checkForUpdates"]["default"] is False
    assert make_lab.settings is not None
    chosen = make_lab.settings / "@jupyterlab/translation-extension/plugin.jupyterlab-settings"
    chosen.parent.mkdir(parents=True, exist_ok=True)
    chosen.write_text(json.dumps({"locale": "en"}))
    try:
        shown = view(browser, make_lab, "vue-eleve-locale-en")
    finally:
        chosen.unlink()
    assert ENGLISH_MENUS <= set(shown["menus"]), shown["menus"]


def test_an_instructor_server_keeps_the_instructors_tools(jupyterlab: JupyterLab, browser):
    """Configured like `make formgrader` (the environment's configuration): formgrader's menu,
    the Create Assignment panel, the course list; in French too."""
    assert status(jupyterlab, "/formgrader") == 200
    shown = view(browser, jupyterlab, "vue-enseignant")
    assert FRENCH_MENUS <= set(shown["menus"]), shown["menus"]
    assert all(shown["plugins"].values()), shown["plugins"]
    assert any("Create Assignment" in title for title in shown["right"]), shown["right"]
    assert "Formgrader" in shown["nbgrader_menu"], shown["nbgrader_menu"]
    assert shown["build"] == [False, False], shown["build"]  # the environment's page config
    # the environment's configuration keeps jupyter-lsp (the control of make lab's 404)
    assert status(jupyterlab, "/lsp/status") == 200
