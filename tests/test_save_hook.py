"""The save hook: a saved notebook keeps quizzes as static HTML, and every server loads it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib

import nbformat
from helpers import REPO
from nbformat.v4 import new_code_cell, new_notebook, new_output

from course import quiz as q
from course import save_hook

WIDGET = save_hook.WIDGET_VIEW


def displayed(obj) -> dict:
    """The display_data output that Jupyter stores for ``obj`` (its bundle and metadata)."""
    data, meta = obj._repr_mimebundle_()
    return new_output("display_data", data=data, metadata=meta)


def notebook_model(*outputs) -> dict:
    nb = new_notebook(cells=[new_code_cell("quiz", outputs=list(outputs))])
    return {"type": "notebook", "content": json.loads(json.dumps(nb))}


def a_quiz() -> q.Quiz:
    return q.Quiz(
        "Où vit la progression de l'élève ?",
        [
            q.Option("Dans user_states", True, "L'état user: est rangé par (app, élève)."),
            q.Option("Dans events", False, "Les événements gardent l'historique, pas l'état."),
        ],
    )


def test_quiz_and_score_outputs_lose_their_widget_and_keep_readable_fallbacks():
    q.reset()
    quiz, score = a_quiz(), q.bilan()
    model = notebook_model(displayed(quiz), displayed(score))
    assert save_hook.strip_quiz_widgets(model=model, path="lecon.ipynb") == 2
    quiz_out, score_out = model["content"]["cells"][0]["outputs"]
    assert WIDGET not in quiz_out["data"] and WIDGET not in score_out["data"]
    assert quiz_out["data"]["text/html"] == quiz.html()
    assert quiz_out["data"]["text/plain"] == quiz.texte()
    assert score_out["data"]["text/plain"] == q.SCORE_NOT_SAVED
    assert "pas enregistrées" in score_out["data"]["text/html"]
    assert 'class="quiz-bilan"' in score_out["data"]["text/html"]
    nbformat.validate(nbformat.from_dict(model["content"]))
    # Saving again changes nothing more.
    assert save_hook.strip_quiz_widgets(model=model, path="lecon.ipynb") == 0


def test_other_widgets_files_and_odd_models_are_left_alone():
    q.reset()
    other_widget = new_output(
        "display_data",
        data={WIDGET: {"model_id": "abc", "version_major": 2}, "text/plain": "IntSlider()"},
    )
    no_fallback = displayed(a_quiz())
    del no_fallback["data"]["text/html"]
    model = notebook_model(other_widget, no_fallback)
    before = copy.deepcopy(model)
    assert save_hook.strip_quiz_widgets(model=model) == 0
    assert model == before
    for odd in (
        {"type": "file", "content": "texte"},
        {"type": "notebook", "content": None},
        {"type": "notebook", "content": {"cells": [None, {"outputs": [None, "x"]}]}},
        {},
    ):
        kept = copy.deepcopy(odd)
        assert save_hook.strip_quiz_widgets(model=odd) == 0
        assert odd == kept


def test_the_extension_registers_its_hook_with_the_contents_manager():
    registered = []

    class ContentsManager:
        def register_pre_save_hook(self, hook):
            registered.append(hook)

    class Log:
        def info(self, *args):
            pass

    class ServerApp:
        contents_manager, log = ContentsManager(), Log()

    assert save_hook._jupyter_server_extension_points() == [{"module": "course.save_hook"}]
    save_hook._load_jupyter_server_extension(ServerApp())
    assert registered == [save_hook.strip_quiz_widgets]


def test_installed_config_enables_the_extension(tmp_path):
    shipped = REPO / "course" / "jupyter-config" / save_hook.CONFIG_FILE
    assert json.loads(shipped.read_text(encoding="utf-8")) == save_hook.SERVER_CONFIG
    data_files = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "data-files"
    ]
    assert data_files["etc/jupyter/jupyter_server_config.d"] == [
        shipped.relative_to(REPO).as_posix()
    ]
    written = save_hook.enable(tmp_path)
    assert written == [tmp_path / rel for rel in save_hook.DATA_FILES]
    server, lab, page = written
    assert server == tmp_path / "etc/jupyter/jupyter_server_config.d" / save_hook.CONFIG_FILE
    assert server.read_text(encoding="utf-8") == shipped.read_text(encoding="utf-8")
    assert json.loads(lab.read_text(encoding="utf-8")) == save_hook.LAB_SETTINGS
    assert lab.parent == tmp_path / "share/jupyter/lab/settings/overrides.d"
    assert json.loads(page.read_text(encoding="utf-8")) == save_hook.PAGE_CONFIG
    assert page.parent == tmp_path / "etc/jupyter/labconfig/page_config.d"


def test_running_the_module_installs_every_file(tmp_path):
    """What `make setup` runs: the environment gets the extension, French by default and no
    build check."""
    venv = tmp_path / "env"
    code = (
        "import runpy, sys; sys.prefix = sys.argv[1]; "
        "runpy.run_module('course.save_hook', run_name='__main__')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(venv)], capture_output=True, text=True, check=True
    )
    assert "activée dans" in out.stdout and "en français par défaut" in out.stdout
    assert "sans vérification de compilation" in out.stdout
    assert all((venv / rel).is_file() for rel in save_hook.DATA_FILES)
