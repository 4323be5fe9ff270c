"""Harness for the browser tests: JupyterLab server, process bookkeeping, notebook driver.

Why a harness of our own: students meet the course in JupyterLab, so the tests open each notebook
there, run it through the menus, and read what the front end shows (SVG diagrams, quiz widgets,
error outputs). One JupyterLab server and one browser serve the whole session (2 shared cores);
both are stopped by their process ids at the end, even when a test fails.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from helpers import REPO, alive, free_port, port_open, stop_pids

from course.labo.checks import HIDDEN_HERE

__all__ = [
    "CHROMIUM_FLAGS",
    "DARK",
    "LIGHT",
    "MIN_CONTRAST",
    "NOTEBOOK_TREES",
    "REPO",
    "SCREENSHOTS",
    "VIEWPORT",
    "Browser",
    "Expected",
    "JupyterLab",
    "LabPage",
    "NotebookRun",
    "alive",
    "click_quizzes",
    "descendants",
    "diagram_problems",
    "error_problems",
    "expected_from_ipynb",
    "notebook_paths",
    "pids_with_argument",
    "port_open",
    "reference_errors",
    "set_theme",
    "start_jupyterlab",
    "start_make_lab",
    "stop_jupyterlab",
    "stop_pids",
]

SCREENSHOTS = REPO / ".artefacts" / "screenshots"
NOTEBOOK_TREES = ("notebooks", "solutions")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1280, "height": 900}
# JupyterLab's two stock themes; the course must read in both
LIGHT, DARK = "JupyterLab Light", "JupyterLab Dark"
MIN_CONTRAST = 4.5  # WCAG 2 AA, normal text
# how often the page re-reads a condition, and how long the kernel must stay idle with no cell
# queued before a run counts as finished (cells start one after the other, idle in between)
POLL_MS = 50
CALM_MS = 400
# the menus the harness drives, as a learner sees them: JupyterLab in French (course.save_hook)
RUN_MENU = "Exécution"
RUN_ALL = "Exécuter toutes les cellules"
RUN_BELOW = "Exécuter la cellule sélectionnée et toutes les suivantes"
MERMAID_FENCE = re.compile(r"^[ \t]{0,3}(?:```|~~~)[ \t]*mermaid\b", re.MULTILINE)
IGNORED_PARTS = {".ipynb_checkpoints", "__pycache__"}


# --------------------------------------------------------------------------- processes


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, grandchildren, ...)."""
    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def pids_with_argument(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (a unique temp path, never a bare name)."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if proc.pid != os.getpid() and text in cmdline and alive(proc.pid):
            found.append(proc.pid)
    return found


# --------------------------------------------------------------------------- JupyterLab


@dataclass
class JupyterLab:
    """A running JupyterLab server started by the tests."""

    process: subprocess.Popen
    port: int
    token: str
    root: Path
    log: Path
    home: Path
    settings: Path | None = None  # JUPYTERLAB_SETTINGS_DIR, when the test chose it
    sockets: Path | None = None  # the kernels' Unix sockets (ipc transport), removed at stop

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def progress(self) -> Path:
        """The learner's progress file of this server's kernels (course.progress)."""
        return self.home / PROGRESS_FILE

    def new_learner(self) -> None:
        """Start the next notebook as a learner who has answered nothing yet: the progress file
        (and its SQLite side files) removed, as course.progress would find a fresh home."""
        for path in self.progress.parent.glob(self.progress.name + "*"):
            path.unlink()

    def api(self, method: str, path: str, body: dict | None = None) -> Any:
        req = urllib.request.Request(
            f"{self.base_url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
            data=json.dumps(body).encode() if body is not None else None,
        )
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def listing(self, path: str) -> list:
        """``GET path``; jupyter_server answers 500 to a list of kernels asked while one starts
        (its last_activity not set yet: seen on a loaded machine), so asked again, 30 s at most."""
        deadline = time.monotonic() + 30
        while True:
            try:
                return self.api("GET", path)
            except urllib.error.HTTPError as exc:
                if exc.code != 500 or time.monotonic() > deadline:
                    raise
            time.sleep(0.5)

    def shutdown_kernels(self) -> None:
        """End every notebook session's kernel (one kernel at a time keeps 2 cores usable)."""
        for session in self.listing("/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")
        for kernel in self.listing("/api/kernels"):
            self.api("DELETE", f"/api/kernels/{kernel['id']}")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


def set_theme(settings: Path, theme: str) -> None:
    """The theme the next page load uses (a user setting, read when JupyterLab starts)."""
    target = settings / "@jupyterlab/apputils-extension/themes.jupyterlab-settings"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"theme": theme}))


def _write_lab_settings(settings: Path) -> None:
    """Fresh user settings: every cell attached to the DOM, no news or update check."""
    files = {
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    for rel, value in files.items():
        target = settings / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(value))


def _fresh_dirs(workdir: Path) -> dict[str, Path]:
    dirs = {}
    for name in ("home", "config", "data", "runtime", "settings", "workspaces", "ipython"):
        dirs[name] = workdir / name
        dirs[name].mkdir(parents=True, exist_ok=True)
    _write_lab_settings(dirs["settings"])
    return dirs


def _environment(dirs: dict[str, Path], *, home: bool) -> dict[str, str]:
    """This process's environment without any Jupyter setting, with fresh Jupyter folders."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JUPYTER", "JPY_", "IPYTHON", "PYTEST_"))
    }
    venv_bin = str(Path(sys.executable).parent)
    env.update(
        PATH=f"{venv_bin}{os.pathsep}{env.get('PATH', '')}",
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        IPYTHONDIR=str(dirs["ipython"]),
        PYTHONDONTWRITEBYTECODE="1",
    )
    if home:
        env["HOME"] = str(dirs["home"])
    # the kernels' progress file (course.progress): in the server's own home, as on a laptop
    env["COURS_PROGRES_DB"] = str(dirs["home"] / PROGRESS_FILE)
    return env


PROGRESS_FILE = Path(".cours-memoire-tuteur") / "progres.db"

# what every server of the tests needs: loopback only, a known token, window.jupyterapp
SERVER_ARGS = (
    "--no-browser --ServerApp.ip=127.0.0.1 --port={port} --ServerApp.port_retries=0 "
    "--ServerApp.token={token} --LabApp.expose_app_in_browser=True "
    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"
)


def _launch(
    cmd: list[str], env: dict[str, str], cwd: Path, workdir: Path, dirs: dict[str, Path],
    port: int, token: str, root: Path, timeout: float,
) -> JupyterLab:  # fmt: skip
    """Start ``cmd`` in its own session and wait until its server answers."""
    log = workdir / "jupyterlab.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd,
            env=env,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    lab = JupyterLab(
        process, port, token, root, log, dirs["home"], dirs["settings"], dirs.get("sockets")
    )
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited ({process.returncode}):\n{lab.log_tail()}")
        try:
            status = lab.api("GET", "/api/status")
            if isinstance(status, dict) and "started" in status:
                return lab
        except OSError:
            pass
        if time.monotonic() > deadline:
            stop_jupyterlab(lab)
            raise RuntimeError(f"JupyterLab not ready after {timeout:.0f} s:\n{lab.log_tail()}")
        time.sleep(0.1)


def start_jupyterlab(workdir: Path, root: Path, timeout: float = 90.0) -> JupyterLab:
    """Start ``jupyter lab`` on 127.0.0.1 with fresh config/settings/runtime folders: the
    environment's configuration only, as ``make formgrader`` runs it (the instructor's view).

    Its kernels talk over Unix sockets, as the hub's do: with TCP, the ports a kernel is given
    are free when picked and bound a second later, and the suite starts kernels on 3 workers at
    once; a kernel of another test took them once in CI (2026-12-05: « Invalid Signature », the
    notebook never opened). The socket folder is short (a Unix socket path has 107 bytes)."""
    dirs = _fresh_dirs(workdir)
    dirs["runtime"] = dirs["sockets"] = Path(tempfile.mkdtemp(prefix="jr-"))
    port, token = free_port(), secrets.token_hex(24)
    cmd = [
        sys.executable, "-m", "jupyterlab", "--allow-root", f"--ServerApp.root_dir={root}",
        "--ServerKernelManager.transport=ipc",
        *SERVER_ARGS.format(port=port, token=token).split(),
    ]  # fmt: skip
    env = _environment(dirs, home=True)
    return _launch(cmd, env, dirs["home"], workdir, dirs, port, token, root, timeout)


def start_make_lab(workdir: Path, timeout: float = 120.0) -> JupyterLab:
    """``make lab``, the learner's command, from the repository (its recipe, its configuration,
    notebooks/ served), with fresh Jupyter folders; LAB_ARGS only add the port and token."""
    dirs = _fresh_dirs(workdir)
    port, token = free_port(), secrets.token_hex(24)
    args = SERVER_ARGS.format(port=port, token=token)
    cmd = ["make", "--no-print-directory", "-C", str(REPO), "lab", f"LAB_ARGS={args}"]
    env = _environment(dirs, home=False)  # make may run pip: keep its cache
    return _launch(cmd, env, REPO, workdir, dirs, port, token, REPO / "notebooks", timeout)


def stop_jupyterlab(lab: JupyterLab) -> list[int]:
    """Stop the server and every process it started (kernels), by pid; returns survivors."""
    pids = [lab.process.pid, *descendants(lab.process.pid)]
    try:
        os.killpg(lab.process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        lab.process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pass
    survivors = stop_pids([p for p in pids if alive(p)], grace=5.0)
    if lab.process.poll() is None:
        lab.process.kill()
        lab.process.wait(timeout=5)
    if lab.sockets is not None:
        shutil.rmtree(lab.sockets, ignore_errors=True)
    return survivors


# --------------------------------------------------------------------------- browser


@dataclass
class Browser:
    """One headless Chromium context; remembers every request that tried to leave 127.0.0.1."""

    context: Any
    base_url: str
    other_servers: list[str] = field(default_factory=list)  # base URLs also allowed
    blocked: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def local(self, url: str) -> bool:
        """A request to one of the test servers (or inline data), never to the network."""
        servers = (self.base_url, *self.other_servers)
        return url.startswith((*(f"{b}/" for b in servers), "data:", "blob:"))

    def reset(self) -> None:
        """Forget what earlier pages did: each notebook is judged on its own requests/errors."""
        self.blocked.clear()
        self.page_errors.clear()
        self.console_errors.clear()

    def problems(self) -> list[str]:
        out = [f"requête hors 127.0.0.1 bloquée : {url}" for url in self.blocked]
        out += [f"exception JavaScript dans la page : {e}" for e in self.page_errors]
        out += [f"erreur dans la console du navigateur : {e}" for e in self.console_errors]
        return out


# --------------------------------------------------------------------------- notebooks


def notebook_paths() -> list[str]:
    """Every lesson/lab notebook of notebooks/ and solutions/, relative to the repository."""
    found = []
    for tree in NOTEBOOK_TREES:
        for path in sorted((REPO / tree).rglob("*.ipynb")):
            rel = path.relative_to(REPO)
            if IGNORED_PARTS.isdisjoint(rel.parts):
                found.append(rel.as_posix())
    return found


@dataclass
class Expected:
    """What the .ipynb itself says the front end must show."""

    fences: dict[int, int]  # markdown cell index -> number of mermaid fences
    diagram_cells: list[int]  # code cells tagged `diagramme` (one diagram each)
    quiz_cells: list[int]  # code cells tagged `quiz`
    code_cells: list[int]  # non-empty code cells (all must run)
    test_cells: list[int]  # nbgrader autograder test cells (grade, not solution)
    cell_ids: list[str]
    n_cells: int
    hidden_test_cells: list[int] = field(default_factory=list)  # tests with hidden parts

    def intended(self, index: int, ename: str, evalue: str) -> bool:
        """An error the stub causes on purpose: the stub's own NotImplementedError, a lesson's
        check saying it is not written yet, or an nbgrader test cell failing because the
        student's function still raises it; or a hidden
        test, which ``noter`` always fails outside grading (course.labo.checks.HIDDEN_HERE)."""
        if ename == "NotImplementedError":
            return True
        if ename == "ExerciceNonReussi":  # a lesson's check saying so (course.exercices)
            return "n'est pas encore écrit" in (evalue or "")
        if index in self.hidden_test_cells and ename == "EchecDuTest":
            return HIDDEN_HERE in (evalue or "")
        return index in self.test_cells and "NotImplementedError" in (evalue or "")

    @property
    def diagrams(self) -> int:
        return sum(self.fences.values()) + len(self.diagram_cells)


def expected_from_ipynb(path: Path) -> Expected:
    nb = json.loads(path.read_text(encoding="utf-8"))
    fences, diagrams, quizzes, code, tests, hidden = {}, [], [], [], [], []
    for i, cell in enumerate(nb["cells"]):
        src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "markdown" and MERMAID_FENCE.search(src):
            fences[i] = len(MERMAID_FENCE.findall(src))
        if cell["cell_type"] == "code":
            if src.strip():
                code.append(i)
            if "diagramme" in tags:
                diagrams.append(i)
            if "quiz" in tags:
                quizzes.append(i)
            grading = cell.get("metadata", {}).get("nbgrader", {})
            if grading.get("grade") and not grading.get("solution"):
                tests.append(i)
                if "BEGIN HIDDEN TESTS" in src:
                    hidden.append(i)
    ids = [c.get("id", "") for c in nb["cells"]]
    return Expected(fences, diagrams, quizzes, code, tests, ids, len(nb["cells"]), hidden)


# JavaScript read-outs of the open notebook (the model for outputs, the DOM for what is seen).
JS_FIND_PANEL = """(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return false;
  const w = Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === path);
  if (!w || !w.context.isReady) return false;
  if (app.shell.currentWidget !== w) app.shell.activateById(w.id);  // shown, not behind a tab
  const k = w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;
  if (!k || k.status !== 'idle' || w.content.widgets.length === 0) return false;
  window.__nbpanel = w;
  return true;
}"""

JS_IDLE = """() => {
  const p = window.__nbpanel;
  const k = p.sessionContext.session && p.sessionContext.session.kernel;
  if (!k || k.status !== 'idle') return false;
  for (const c of p.content.widgets) {
    if (c.model.type !== 'code') continue;
    const prompt = c.node.querySelector('.jp-InputPrompt');
    if (c.model.executionState === 'running' || (prompt && prompt.textContent.includes('*')))
      return false;
  }
  return true;
}"""

# Kernel idle and nothing queued (JS_IDLE), held without a break for ``ms`` milliseconds: the
# page keeps the time the calm began, so one wait_for_function replaces a Python sleep loop.
JS_CALM = (
    """(ms) => {
  const idle = ("""
    + JS_IDLE
    + """)();
  const now = performance.now();
  if (!idle) { window.__calmSince = null; return false; }
  if (window.__calmSince == null) window.__calmSince = now;
  return now - window.__calmSince >= ms;
}"""
)

# Resolves after two animation frames: the layout and paint that follow a change are done.
JS_NEXT_FRAMES = """() => new Promise(done =>
  requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"""

JS_STARTED = """(indexes) => {
  const cells = window.__nbpanel.content.widgets;
  return indexes.every(i => cells[i].model.executionState === 'running'
                            || cells[i].model.executionCount !== null);
}"""

JS_CELLS = """() => {
  const p = window.__nbpanel;
  const nodes = p.content.node.querySelectorAll('.jp-Cell');
  return p.content.widgets.map((c, i) => {
    const m = c.model, n = c.node;
    const imgs = Array.from(n.querySelectorAll(
      '.jp-RenderedMermaid:not(.jp-mod-warning) img[src^="data:image/svg+xml"]'));
    const rec = {
      index: i, id: m.id, type: m.type, attached: n.isConnected,
      tags: (m.getMetadata && m.getMetadata('tags')) || [],
      svgs: imgs.length,
      svg_titles: imgs.map(im => im.getAttribute('alt') || ''),
      svg_sizes: imgs.map(im => [im.naturalWidth, im.naturalHeight]),
      broken_diagrams: n.querySelectorAll('.jp-RenderedMermaid.jp-mod-warning').length,
      quizzes: n.querySelectorAll('.quiz').length,
      text: n.innerText.slice(0, 20000),
    };
    if (m.type === 'code') {
      rec.source = m.sharedModel.getSource();
      rec.execution_count = m.executionCount;
      rec.outputs = m.outputs.toJSON().map(o => ({
        output_type: o.output_type, ename: o.ename || null, evalue: o.evalue || null,
        name: o.name || null, stream: o.output_type === 'stream' ? [].concat(o.text).join('') : '',
        plain: (o.data && o.data['text/plain']) ? [].concat(o.data['text/plain']).join('') : '',
        html: (o.data && o.data['text/html']) ? [].concat(o.data['text/html']).join('') : '',
      }));
      rec.stderr_shown = n.querySelectorAll(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').length;
    }
    return rec;
  }).concat([{dom_cells: nodes.length}]);
}"""


JS_FULL_HEIGHT = """() => {
  const p = window.__nbpanel;
  if (!p) return 0;
  const outer = p.content.node.querySelector('.jp-WindowedPanel-outer') || p.content.node;
  const inner = p.content.node.querySelector('.jp-WindowedPanel-viewport');
  const content = inner ? inner.scrollHeight : outer.scrollHeight;
  return content + (window.innerHeight - outer.clientHeight) + 40;
}"""


JS_SCROLL_TOP = """() => {
  const p = window.__nbpanel;
  const outer = p.content.node.querySelector('.jp-WindowedPanel-outer') || p.content.node;
  outer.scrollTop = 0;
}"""


@dataclass
class NotebookRun:
    """What the browser showed after running every cell of one notebook."""

    path: str
    cells: list[dict]
    dom_cells: int
    seconds: float
    run_passes: int

    def errors(self) -> dict[int, list[str]]:
        """Cell index -> exception names of its error outputs."""
        out = {}
        for c in self.cells:
            names = [o["ename"] for o in c.get("outputs", []) if o["output_type"] == "error"]
            if names:
                out[c["index"]] = names
        return out

    def not_run(self, expected: Expected) -> list[int]:
        return [i for i in expected.code_cells if self.cells[i]["execution_count"] is None]


# A tab closed without a prompt (the runs leave notebooks modified): disposed, which also drops
# its kernel connection; the kernels themselves are ended by the server's API.
JS_DISCARD = """(w) => {
  if (w.context && w.context.model) w.context.model.dirty = false;
  w.dispose();
}"""

# Every open document closed (JS_DISCARD).
JS_CLOSE_ALL = (
    """() => {
  const app = window.jupyterapp;
  Array.from(app.shell.widgets('main')).forEach("""
    + JS_DISCARD
    + """);
  window.__nbpanel = null;
  window.__calmSince = null;
  return Array.from(app.shell.widgets('main')).filter(w => w.context).length
    + document.querySelectorAll('.jp-Dialog').length;
}"""
)

# The next notebook opened, then every other tab closed (the main area never empty: JupyterLab
# would open its launcher there, at a moment of its own, in front of the notebook).
JS_OPEN = (
    """async ([path, theme]) => {
  const app = window.jupyterapp;
  if (document.body.dataset.jpThemeName !== theme)
    await app.commands.execute('apputils:change-theme', {theme});
  const opened = await app.commands.execute('docmanager:open', {path});
  Array.from(app.shell.widgets('main')).filter(w => w !== opened).forEach("""
    + JS_DISCARD
    + """);
  app.shell.activateById(opened.id);
  return document.querySelectorAll('.jp-Dialog').length;
}"""
)


class LabPage:
    """A Chromium page driving one notebook at a time in JupyterLab through its menus.

    JupyterLab loads once per page (about 10 s of CPU in Chromium and 2 s in the server, at each
    load); the next notebooks open in the loaded page, as from its file browser, each alone: the
    others are closed once it is open."""

    def __init__(self, browser: Browser, lab: JupyterLab, page: Any) -> None:
        self.browser, self.lab, self.page = browser, lab, page
        self.rel = ""
        self.loaded = False
        page.on("pageerror", lambda e: browser.page_errors.append(str(e)))
        page.on(
            "console",
            lambda m: browser.console_errors.append(m.text) if m.type == "error" else None,
        )

    def open(
        self, rel: str, timeout: float = 90.0, theme: str = LIGHT, reload: bool = False
    ) -> None:
        """Open notebook ``rel`` in ``theme``, alone: by its URL when JupyterLab is not loaded yet
        (or ``reload``: a fresh workspace), else in the loaded page, the others closed (JS_OPEN)."""
        self.rel = rel
        if self.loaded and not reload:
            dialogs = self.page.evaluate(JS_OPEN, [rel, theme])
            assert dialogs == 0, f"{dialogs} boîte(s) de dialogue à l'ouverture de {rel}"
        else:
            assert self.lab.settings is not None, "serveur sans dossier de réglages connu"
            set_theme(self.lab.settings, theme)
            self.page.goto(f"{self.lab.base_url}/lab/tree/{rel}?reset&token={self.lab.token}")
            self.loaded = True
        self._poll(JS_FIND_PANEL, rel, timeout=timeout, what=f"ouverture de {rel}")
        self._poll("(t) => document.body.dataset.jpThemeName === t", theme, timeout=30, what=theme)

    def close_documents(self) -> bool:
        """Close every open document without saving; True when nothing (no dialog) is left."""
        if not self.loaded:
            return True
        try:
            return self.page.evaluate(JS_CLOSE_ALL) == 0
        except Exception:  # a page that no longer answers is not reusable either
            return False

    def _poll(self, js: str, arg: Any = None, *, timeout: float, what: str) -> None:
        """Wait for a JS condition; on timeout say what the page shows (a dialog, usually)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(js, arg=arg, timeout=timeout * 1000, polling=POLL_MS)
        except PlaywrightTimeout:
            dialogs = self.page.locator(".jp-Dialog")
            shown = dialogs.first.inner_text() if dialogs.count() else "aucune boîte de dialogue"
            raise AssertionError(
                f"{what} : rien après {timeout:.0f} s ({shown!r}); journal du serveur :\n"
                f"{self.lab.log_tail(15)}"
            ) from None

    def menu(self, top: str, item: str) -> None:
        self.page.get_by_role("menuitem", name=top, exact=True).click()
        self.page.get_by_role("menuitem", name=item, exact=True).click()

    def wait_idle(self, timeout: float) -> None:
        """Kernel idle and no cell queued, without a break for CALM_MS (cells start in a
        burst); read in the page every POLL_MS, not by sleeping here."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(
                JS_CALM, arg=CALM_MS, timeout=max(timeout, 1.0) * 1000, polling=POLL_MS
            )
        except PlaywrightTimeout:
            raise TimeoutError(f"le noyau n'est pas revenu au repos en {timeout:.0f} s") from None
        finally:
            self.page.evaluate("() => { window.__calmSince = null; }")

    def select_cell(self, index: int) -> None:
        cell = self.page.locator(".jp-Notebook .jp-Cell").nth(index)
        cell.scroll_into_view_if_needed()
        cell.locator(".jp-InputPrompt").click()

    def cells(self) -> tuple[list[dict], int]:
        raw = self.page.evaluate(JS_CELLS)
        return raw[:-1], raw[-1]["dom_cells"]

    def run_everything(self, expected: Expected, timeout: float = 180.0) -> NotebookRun:
        """Exécution > Exécuter toutes les cellules; after an error stops the queue, run again
        from the next cell (Exécuter la cellule sélectionnée et toutes les suivantes)."""
        start = time.monotonic()
        self.menu(RUN_MENU, RUN_ALL)
        self._poll(JS_STARTED, expected.code_cells[:1], timeout=30, what=RUN_ALL)
        self.wait_idle(timeout)
        passes, last = 1, -1
        while True:
            cells, _ = self.cells()
            pending = [i for i in expected.code_cells if cells[i]["execution_count"] is None]
            if not pending or pending[0] <= last:
                break
            last = pending[0]
            self.select_cell(last)
            self.menu(RUN_MENU, RUN_BELOW)
            self._poll(JS_STARTED, [last], timeout=30, what=f"relance depuis la cellule {last}")
            self.wait_idle(timeout - (time.monotonic() - start))
            passes += 1
        cells, dom_cells = self.cells()
        return NotebookRun(self.rel, cells, dom_cells, time.monotonic() - start, passes)

    def refresh(self, run: NotebookRun) -> NotebookRun:
        """Read the cells again (after diagrams rendered), keeping the run's figures."""
        cells, dom_cells = self.cells()
        return NotebookRun(run.path, cells, dom_cells, run.seconds, run.run_passes)

    def bilan_problems(self, exp: Expected) -> list[str]:
        """After a wrong first answer to every quiz, the score summary must say what to review."""
        bilans = self.page.locator(".jp-Notebook .quiz-bilan")
        if not exp.quiz_cells or bilans.count() == 0:
            return []
        text = bilans.last.inner_text()
        if "revoir" not in text:
            return [f"le bilan des quiz ne dit pas quoi revoir après des erreurs : {text!r}"]
        return []

    def wait_diagrams(self, expected: Expected, timeout: float = 30.0) -> None:
        """Mermaid renders asynchronously: wait until the expected SVGs (or errors) are there."""
        js = """(n) => document.querySelectorAll('.jp-Notebook .jp-RenderedMermaid img, '
                  + '.jp-Notebook .jp-RenderedMermaid.jp-mod-warning').length >= n"""
        try:
            self.page.wait_for_function(js, arg=expected.diagrams, timeout=timeout * 1000)
        except Exception:  # the assertion that follows reports the exact cells
            pass

    def screenshot(self, name: str) -> Path:
        """The whole notebook in one PNG: the viewport is stretched to the notebook's height."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        target = SCREENSHOTS / (re.sub(r"[^A-Za-z0-9_.-]+", "__", name) + ".png")
        self.page.evaluate("() => window.jupyterapp && window.jupyterapp.shell.collapseLeft()")
        self.page.evaluate(JS_NEXT_FRAMES)  # Lumino lays the shell out on the next frame
        height = self.page.evaluate(JS_FULL_HEIGHT)
        height = max(VIEWPORT["height"], min(int(height or 0), 16000))
        try:
            self.page.set_viewport_size({"width": VIEWPORT["width"], "height": height})
            self.page.evaluate(JS_NEXT_FRAMES)
            self.page.evaluate(JS_SCROLL_TOP)
            self.page.evaluate(JS_NEXT_FRAMES)
            self.page.screenshot(path=str(target), full_page=True)
        finally:
            self.page.set_viewport_size(VIEWPORT)
        return target


# --------------------------------------------------------------------------- checks


def _norm(text: str) -> str:
    return " ".join(text.split())


def diagram_problems(run: NotebookRun, exp: Expected) -> list[str]:
    """Every Mermaid fence and every `diagramme` cell became an SVG image with a title."""
    problems = []
    for c in run.cells:
        i = c["index"]
        want = exp.fences.get(i, 0) + (1 if i in exp.diagram_cells else 0)
        if c["broken_diagrams"]:
            problems.append(f"cellule {i} : {c['broken_diagrams']} diagramme(s) Mermaid en erreur")
        if c["svgs"] != want:
            problems.append(f"cellule {i} : {c['svgs']} SVG affiché(s), {want} attendu(s)")
        for title, (w, h) in zip(c["svg_titles"], c["svg_sizes"], strict=True):
            if not title.strip():
                problems.append(f"cellule {i} : diagramme sans titre accessible (accTitle)")
            if w <= 0 or h <= 0:
                problems.append(f"cellule {i} : image SVG vide ({w}x{h})")
    return problems


def error_problems(run: NotebookRun, exp: Expected, allowed: dict[int, list[str]]) -> list[str]:
    """Only the cells the stubs make fail do fail (``allowed``: cell -> exception names, from a
    plain-kernel run), each error is shown, and every cell ran."""
    problems = []
    errors = run.errors()
    for i, names in errors.items():
        outs = [o for o in run.cells[i]["outputs"] if o["output_type"] == "error"]
        evalue = outs[0]["evalue"] or ""
        intended = all(exp.intended(i, o["ename"], o["evalue"]) for o in outs)
        if not intended or allowed.get(i) != names:
            problems.append(f"cellule {i} : erreur inattendue {names} {evalue[:300]!r}")
        if not run.cells[i]["stderr_shown"]:
            problems.append(f"cellule {i} : l'erreur n'est pas affichée")
    for c in run.cells:
        for o in c.get("outputs", []):
            if o["output_type"] == "stream" and o["name"] == "stderr" and o["stream"].strip():
                text = o["stream"][:300]
                problems.append(f"cellule {c['index']} : texte rouge (stderr) {text!r}")
    for i in sorted(set(allowed) - set(errors)):
        problems.append(f"cellule {i} : devait lever {allowed[i]} et ne l'a pas fait")
    for i in run.not_run(exp):
        problems.append(f"cellule {i} : jamais exécutée")
    if run.dom_cells != exp.n_cells:
        problems.append(f"{run.dom_cells} cellules dans la page, {exp.n_cells} dans le .ipynb")
    if len(run.cells) != exp.n_cells:
        problems.append(f"{len(run.cells)} cellules chargées, {exp.n_cells} dans le .ipynb")
    return problems


# The feedback's accessibility, read in the page: its live region, and the contrast of every
# visible piece of text against its effective background (the backgrounds of the element and of
# its ancestors composited over a white canvas; colours from getComputedStyle; WCAG 2 formula).
JS_MARK_REGION = """(fb) => {
  const r = fb.querySelector('[aria-live]');
  if (!r) return null;
  r.__quizRegion = true;
  return r.getAttribute('aria-live');
}"""

JS_REGION = """(fb) => {
  const r = fb.querySelector('[aria-live]');
  return r ? {same: r.__quizRegion === true, live: r.getAttribute('aria-live'),
              text: r.innerText} : null;
}"""

JS_CONTRAST = """(fb) => {
  const parse = (s) => {
    const m = /^rgba?\\(([^)]*)\\)$/.exec(s.trim());
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, below) =>
    [0, 1, 2].map(i => top[i] * top[3] + below[i] * (1 - top[3])).concat([1]);
  const background = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let color = [255, 255, 255, 1];
    for (const e of chain) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c === null) return null;
      if (c[3] > 0) color = over(c, color);
    }
    return color;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const rgb = (c) => 'rgb(' + c.slice(0, 3).map(Math.round).join(', ') + ')';
  const out = [];
  const walker = document.createTreeWalker(fb, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest('style') || !el.getClientRects().length)
      continue;
    const st = getComputedStyle(el);
    if (st.visibility !== 'visible') continue;
    const bg = background(el), fg = parse(st.color);
    const text = n.textContent.trim().slice(0, 50);
    if (!bg || !fg) { out.push({text, ratio: 0, color: st.color, background: '?'}); continue; }
    const [a, b] = [lum(over(fg, bg)), lum(bg)].sort((x, y) => y - x);
    out.push({text, ratio: (a + 0.05) / (b + 0.05), color: rgb(over(fg, bg)), background: rgb(bg)});
  }
  return out;
}"""


def click_quizzes(
    lab_page: LabPage, run: NotebookRun, exp: Expected, contrasts: list[dict] | None = None
) -> list[str]:
    """Click one wrong then the right option of every quiz; read the feedback shown: its
    verdict and explanation, that it sits in the same polite live region before and after each
    click, and the contrast of its text (each measure appended to ``contrasts``)."""
    from playwright.sync_api import expect

    problems = []
    for i in exp.quiz_cells:
        cell = lab_page.page.locator(".jp-Notebook .jp-Cell").nth(i)
        quiz = cell.locator(".quiz")
        if quiz.count() != 1:
            problems.append(f"cellule {i} (quiz) : {quiz.count()} widget(s) .quiz affiché(s)")
            continue
        wrong = quiz.locator(".quiz-option:not(.quiz-correct)")
        right = quiz.locator(".quiz-option.quiz-correct")
        if wrong.count() < 1 or right.count() != 1:
            problems.append(
                f"cellule {i} (quiz) : {right.count()} bonne(s) et {wrong.count()} "
                "mauvaise(s) option(s)"
            )
            continue
        fallback = _norm(
            run.cells[i]["source"]
            + " ".join(o["plain"] + o["html"] for o in run.cells[i]["outputs"])
        )
        feedback = quiz.locator(".quiz-feedback")
        if feedback.inner_text().strip():
            problems.append(f"cellule {i} (quiz) : un retour est visible avant tout clic")
        live = feedback.evaluate(JS_MARK_REGION)
        if live != "polite":
            problems.append(
                f"cellule {i} (quiz) : pas de région aria-live « polite » dans le retour ({live!r})"
            )
        explanations = []
        for option, verdict in ((wrong.first, "Pas tout à fait"), (right, "Bonne réponse")):
            option.scroll_into_view_if_needed()
            option.click()
            try:
                expect(feedback).to_contain_text(verdict, timeout=15_000, use_inner_text=True)
            except AssertionError:
                problems.append(
                    f"cellule {i} (quiz) : « {verdict} » absent après le clic, "
                    f"retour affiché : {feedback.inner_text()!r}"
                )
                continue
            shown = _norm(feedback.inner_text())
            explanation = _norm(shown.split(verdict, 1)[1]).lstrip(" :.-—").strip()
            explanations.append(explanation)
            if len(explanation) < 10:
                problems.append(f"cellule {i} (quiz) : pas d'explication après « {verdict} »")
            elif explanation not in fallback:
                problems.append(
                    f"cellule {i} (quiz) : explication affichée introuvable dans le quiz : "
                    f"{explanation!r}"
                )
            region = feedback.evaluate(JS_REGION)
            if live == "polite" and not (region and region["same"]):
                problems.append(
                    f"cellule {i} (quiz) : la région aria-live a été remplacée par le clic "
                    "(un lecteur d'écran n'annonce pas sûrement une région neuve)"
                )
            elif live == "polite" and verdict not in _norm(region["text"]):
                problems.append(f"cellule {i} (quiz) : « {verdict} » hors de la région aria-live")
            for measure in feedback.evaluate(JS_CONTRAST):
                measure.update(cell=i, verdict=verdict)
                if contrasts is not None:
                    contrasts.append(measure)
                if measure["ratio"] < MIN_CONTRAST:
                    problems.append(
                        f"cellule {i} (quiz, {verdict}) : contraste {measure['ratio']:.2f}:1 "
                        f"< {MIN_CONTRAST}:1 pour {measure['text']!r} ({measure['color']} sur "
                        f"{measure['background']})"
                    )
        if len(explanations) == 2 and explanations[0] == explanations[1]:
            problems.append(f"cellule {i} (quiz) : même explication pour deux options")
    return problems


def reference_errors(
    nb_file: Path, workdir: Path, timeout: int = 120
) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """Which cells raise when the notebook runs in a plain kernel (nbclient, errors allowed):
    cell -> exception names, and the errors the stubs do not explain."""
    import nbformat
    from nbclient import NotebookClient

    shutil.copytree(
        nb_file.parent,
        workdir,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.db", "*.db-*"),
        dirs_exist_ok=True,
    )
    nb = nbformat.read(nb_file, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    out, unintended = {}, {}
    exp = expected_from_ipynb(nb_file)
    for i, cell in enumerate(nb.cells):
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if errors:
            out[i] = [o.ename for o in errors]
            if not all(exp.intended(i, o.ename, o.evalue) for o in errors):
                unintended[i] = [f"{o.ename}: {o.evalue[:300]}" for o in errors]
    return out, unintended
