"""Every lesson and TP notebook, run in JupyterLab in headless Chromium as a student would.

For each notebook of notebooks/ (student version) and solutions/: Exécution > Exécuter toutes les
cellules (JupyterLab is in French), wait for the kernel to go idle, then check what the front end
shows: no error other than the intended NotImplementedError stubs, every Mermaid fence and
generated diagram drawn as an SVG image, quiz buttons that answer clicks with a verdict and an
explanation in a polite live region, feedback text at least 4.5:1 against its background, no
request leaving 127.0.0.1. The student version runs in JupyterLab's light theme and the
solutions in its dark theme: both trees hold the same diagrams and quizzes, so every diagram and
every quiz is seen in both themes at no extra cost. A full-page screenshot of each notebook goes
to .artefacts/screenshots/, the contrast measures to .artefacts/contrast.json.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from browser_harness import (
    DARK,
    LIGHT,
    REPO,
    SCREENSHOTS,
    Browser,
    LabPage,
    alive,
    click_quizzes,
    descendants,
    diagram_problems,
    error_problems,
    expected_from_ipynb,
    notebook_paths,
    port_open,
    reference_errors,
    start_jupyterlab,
    stop_jupyterlab,
)

pytestmark = pytest.mark.browser

TIMINGS = REPO / ".artefacts" / "browser-timings.json"
CONTRAST = REPO / ".artefacts" / "contrast.json"

# --------------------------------------------------------------------------- the harness itself


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_server_and_its_kernel_are_stopped_by_pid(tmp_path: Path) -> None:
    """The teardown used for the session's JupyterLab leaves no server, kernel or port behind."""
    root = tmp_path / "racine"
    root.mkdir()
    lab = start_jupyterlab(tmp_path / "lab", root)
    kernels: list[int] = []
    try:
        lab.api("POST", "/api/kernels", {"name": "python3"})
        deadline = time.monotonic() + 60
        while not kernels and time.monotonic() < deadline:
            kernels = [p for p in descendants(lab.process.pid) if "ipykernel" in cmdline(p)]
            time.sleep(0.2)
        assert kernels, "le noyau n'a pas démarré"
    finally:
        survivors = stop_jupyterlab(lab)
    assert survivors == []
    assert lab.process.poll() is not None
    assert not any(alive(pid) for pid in kernels)
    assert not port_open(lab.port)


QUIZ_SOURCE = """\
import ipywidgets as w
retour = w.HTML(); retour.add_class("quiz-feedback")
EXPLICATIONS = {"faux": "Un fichier local n'est vu que par une instance.",
                "juste": "Une base commune sert les trois instances."}
def clic(bouton):
    juste = "quiz-correct" in bouton._dom_classes
    verdict = "Bonne réponse" if juste else "Pas tout à fait"
    texte = EXPLICATIONS['juste' if juste else 'faux']
    retour.value = f"<p style='color:#999'><b>{verdict}</b>\u00a0: {texte}</p>"
a = w.Button(description="A. SQLite par instance"); a.add_class("quiz-option")
b = w.Button(description="B. Une base partagée"); b.add_class("quiz-option")
b.add_class("quiz-correct")
a.on_click(clic); b.on_click(clic)
boite = w.VBox([w.HTML("<b>Trois instances : quel service ?</b>"), a, b, retour])
boite.add_class("quiz")
boite
"""

SEQUENCE = (
    "sequenceDiagram\\n  accTitle: Essai\\n  accDescr: Un message.\\n  Eleve->>Tuteur: Bonjour"
)


def throwaway_notebook() -> nbformat.NotebookNode:
    """A small notebook with one of everything the harness must see, good and bad."""
    v4 = nbformat.v4
    nb = v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [
        v4.new_markdown_cell(
            "# Essai\n\n```mermaid\nflowchart LR\n  accTitle: Deux boîtes\n"
            "  accDescr: A pointe vers B.\n  A --> B\n```\n\n"
            "![distant](http://example.invalid/image.png)\n"
        ),
        v4.new_markdown_cell("```mermaid\nflowchart LR\n  A --> ((((\n```\n"),
        v4.new_code_cell(
            "from IPython.display import display\n"
            f"display({{'text/vnd.mermaid': '{SEQUENCE}', 'text/plain': 'Eleve->>Tuteur'}}, "
            "raw=True)",
            metadata={"tags": ["diagramme"]},
        ),
        v4.new_code_cell(QUIZ_SOURCE, metadata={"tags": ["quiz"]}),
        v4.new_code_cell("def oublier():\n    raise NotImplementedError()\noublier()"),
        v4.new_code_cell(
            "import sys\nprint('après le bouchon')\nprint('attention', file=sys.stderr)"
        ),
        v4.new_code_cell("raise ValueError('exprès')"),
        v4.new_code_cell("fin = True"),
        v4.new_code_cell(""),
    ]
    return nb


def test_harness_sees_errors_diagrams_quizzes_and_network(
    lab_page: LabPage, lab_root: Path, browser: Browser
) -> None:
    """The checks can fail: a stray error, a broken diagram and a remote image are all caught."""
    folder = lab_root / "_essai_harnais"
    folder.mkdir(exist_ok=True)
    nb_file = folder / "essai.ipynb"
    nbformat.write(throwaway_notebook(), nb_file)
    exp = expected_from_ipynb(nb_file)
    assert exp.fences == {0: 1, 1: 1} and exp.diagram_cells == [2] and exp.quiz_cells == [3]

    browser.reset()
    lab_page.open("_essai_harnais/essai.ipynb")
    try:
        run = lab_page.run_everything(exp, timeout=90)
        lab_page.wait_diagrams(exp)
        run = lab_page.refresh(run)
        quiz = click_quizzes(lab_page, run, exp)
    finally:
        lab_page.screenshot("_essai_harnais")

    # Every cell ran, the two errors seen. How many passes that took depends on the machine's
    # load: after an error, ipykernel aborts only the requests already in its queue
    # (stop_on_error_timeout = 0), and JupyterLab's later ones may reach it after that. Usually
    # pass 2 runs what NotImplementedError aborted and pass 3 what ValueError aborted.
    assert run.errors() == {4: ["NotImplementedError"], 6: ["ValueError"]}
    assert run.not_run(exp) == [] and 1 <= run.run_passes <= 3
    assert "après le bouchon" in run.cells[5]["text"]
    assert error_problems(run, exp, allowed={4: ["NotImplementedError"]}) == [
        "cellule 6 : erreur inattendue ['ValueError'] 'exprès'",
        "cellule 5 : texte rouge (stderr) 'attention\\n'",
    ]
    assert error_problems(run, exp, allowed={}) == [
        "cellule 4 : erreur inattendue ['NotImplementedError'] ''",
        "cellule 6 : erreur inattendue ['ValueError'] 'exprès'",
        "cellule 5 : texte rouge (stderr) 'attention\\n'",
    ]
    assert diagram_problems(run, exp) == [
        "cellule 1 : 1 diagramme(s) Mermaid en erreur",
        "cellule 1 : 0 SVG affiché(s), 1 attendu(s)",
    ]
    assert run.cells[0]["svg_titles"] == ["Deux boîtes"]
    assert run.cells[2]["svg_titles"] == ["Essai"]
    # a quiz without a live region, whose grey feedback reads at 2.85:1 on white
    assert quiz[0] == "cellule 3 (quiz) : pas de région aria-live « polite » dans le retour (None)"
    assert len(quiz) == 1 + 2 * 2, quiz  # verdict and explanation, after each of the 2 clicks
    assert all("contraste 2.85:1 < 4.5:1" in q and "rgb(153, 153, 153) sur rgb(255, 255, 255)" in q
               for q in quiz[1:]), quiz  # fmt: skip
    assert browser.problems() == [
        "requête hors 127.0.0.1 bloquée : http://example.invalid/image.png",
        "erreur dans la console du navigateur : Failed to load resource: net::ERR_FAILED",
    ]
    browser.reset()


# --------------------------------------------------------------------------- the course


def test_every_solution_has_its_student_notebook() -> None:
    """The parametrized run below covers both trees; neither may be silently empty."""
    paths = notebook_paths()
    student = {p.removeprefix("notebooks/") for p in paths if p.startswith("notebooks/")}
    source = {p.removeprefix("solutions/") for p in paths if p.startswith("solutions/")}
    assert student and source, f"notebooks trouvés : {paths}"
    missing, extra = source - student, student - source
    assert not missing and not extra, f"sans version élève : {missing}; en trop : {extra}"


def test_both_trees_hold_the_same_diagrams_and_quizzes() -> None:
    """What makes one run of each tree (light, then dark) cover every diagram in both themes."""
    students = [p for p in notebook_paths() if p.startswith("notebooks/")]
    assert students
    for rel in students:
        shown = expected_from_ipynb(REPO / rel)
        source = expected_from_ipynb(REPO / "solutions" / rel.removeprefix("notebooks/"))
        assert shown.diagrams == source.diagrams, rel
        assert len(shown.quiz_cells) == len(source.quiz_cells), rel


def _record_contrast(rel: str, theme: str, measures: list[dict]) -> None:
    """The lowest ratio per kind of text (symbol, verdict, explanation), with its colours."""
    if not measures:
        return
    CONTRAST.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(CONTRAST.read_text()) if CONTRAST.exists() else {}
    kinds: dict[str, list[dict]] = {}
    for m in measures:
        kind = {"✓": "symbole", "✗": "symbole", "Bonne réponse": "verdict"}.get(m["text"])
        kind = kind or ("verdict" if m["text"] == "Pas tout à fait" else "explication")
        kinds.setdefault(kind, []).append(m)
    data[rel] = {"theme": theme, "mesures": len(measures)} | {
        kind: f"{w['ratio']:.2f}:1 ({w['color']} sur {w['background']})"
        for kind, group in sorted(kinds.items())
        for w in [min(group, key=lambda m: m["ratio"])]
    }
    CONTRAST.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False))


def _record_timing(rel: str, seconds: float) -> None:
    TIMINGS.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(TIMINGS.read_text()) if TIMINGS.exists() else {}
    data[rel] = round(seconds, 1)
    TIMINGS.write_text(json.dumps(data, indent=1, sort_keys=True))


def test_notebook_in_jupyterlab(
    course_notebook: str, lab_page: LabPage, browser: Browser, jupyterlab, tmp_path: Path
) -> None:
    """Run all cells in JupyterLab; errors, diagrams, quizzes and network as a student sees them."""
    source = REPO / course_notebook
    exp = expected_from_ipynb(source)
    student = course_notebook.startswith("notebooks/")
    if "/lecons/" in course_notebook:
        assert exp.quiz_cells, "une leçon sans quiz (cellule marquée `quiz`)"
    # the plain-kernel run that says which cells the stubs make fail runs beside the browser's
    # (its own kernel and folder): the browser mostly waits on JupyterLab meanwhile
    reference = None
    if exp.hidden_test_cells or (
        student and "NotImplementedError" in source.read_text(encoding="utf-8")
    ):
        reference = ThreadPoolExecutor(1, thread_name_prefix="reference")
        expected_errors = reference.submit(reference_errors, source, tmp_path / "reference")

    theme = LIGHT if student else DARK
    browser.reset()
    jupyterlab.new_learner()  # every notebook as a first visit: no answer restored
    started = time.monotonic()
    problems: list[str] = []
    contrasts: list[dict] = []
    try:
        lab_page.open(course_notebook, theme=theme)
        try:
            run = lab_page.run_everything(exp)
            lab_page.wait_diagrams(exp)
            run = lab_page.refresh(run)
            allowed: dict[int, list[str]] = {}
            if reference is not None:
                allowed, other = expected_errors.result()
                assert not other, f"hors navigateur, des cellules lèvent autre chose : {other}"
            problems += error_problems(run, exp, allowed)
            problems += diagram_problems(run, exp)
            problems += click_quizzes(lab_page, run, exp, contrasts)
            problems += lab_page.bilan_problems(exp)
        finally:
            shot = lab_page.screenshot(course_notebook)
    finally:
        if reference is not None:
            reference.shutdown(wait=True)  # its kernel never outlives the test
    _record_timing(course_notebook, time.monotonic() - started)
    _record_contrast(course_notebook, theme, contrasts)
    if exp.quiz_cells:  # the verdict and the explanation, after each of the two clicks
        assert len(contrasts) >= 4 * len(exp.quiz_cells), contrasts
    problems += browser.problems()
    assert not problems, "\n".join([f"{course_notebook} (capture : {shot})", *problems])
    assert shot.is_file() and shot.parent == SCREENSHOTS
    if shutil.which("git") and (REPO / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "-q", str(shot)], cwd=REPO)
        assert ignored.returncode == 0, f"{shot} n'est pas ignoré par git"


def test_saved_lesson_reopens_with_readable_quizzes(
    lab_page: LabPage, jupyterlab, lab_root: Path
) -> None:
    """A learner answers the quizzes, saves, and reopens the lesson later (new kernel): each quiz
    shows its static question and explanations, never "Error displaying widget"."""
    lesson = sorted((REPO / "notebooks" / "lecons").glob("*.ipynb"))[0]
    rel = f"reouverture/{lesson.name}"
    (lab_root / "reouverture").mkdir(exist_ok=True)
    shutil.copyfile(lesson, lab_root / rel)
    saved = lab_root / rel
    exp = expected_from_ipynb(lesson)
    assert exp.quiz_cells, f"{lesson.name} : pas de quiz"

    jupyterlab.new_learner()
    lab_page.open(rel)
    run = lab_page.run_everything(exp)
    assert not click_quizzes(lab_page, run, exp)
    before = saved.stat().st_mtime_ns
    lab_page.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    deadline = time.monotonic() + 30
    while saved.stat().st_mtime_ns == before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert saved.stat().st_mtime_ns != before, "docmanager:save n'a rien enregistré"
    nb = nbformat.read(saved, as_version=4)
    shown = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    quizzes = [o for o in shown if "course/quiz" in o.get("metadata", {})]
    bilans = [o for o in shown if "course/bilan" in o.get("metadata", {})]
    assert len(quizzes) == len(exp.quiz_cells), "le fichier enregistré a perdu des quiz"
    for output in quizzes + bilans:
        assert "application/vnd.jupyter.widget-view+json" not in output["data"]
        assert "text/html" in output["data"] and "text/plain" in output["data"]
    assert bilans and all("pas enregistrées" in o["data"]["text/plain"] for o in bilans)

    jupyterlab.shutdown_kernels()  # later, in a new page: the answers and widget models are gone
    lab_page.open(rel, reload=True)
    page = lab_page.page
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-Notebook .quiz-statique').length >= n",
        arg=len(exp.quiz_cells),
        timeout=60_000,
    )
    page.wait_for_timeout(1000)  # any widget renderer would have had its say by now
    text = page.locator(".jp-Notebook").first.inner_text()
    assert "Error displaying widget" not in text
    assert page.locator(".jp-Notebook .quiz-statique details").count() >= 2 * len(exp.quiz_cells)
    assert "pas enregistrées" in page.locator(".jp-Notebook .quiz-bilan").last.inner_text()
