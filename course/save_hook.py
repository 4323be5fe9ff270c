"""Jupyter's pre-save hook: a saved notebook keeps each quiz as static HTML, not as a widget.

A live quiz is an ipywidgets view whose model lives only in the running kernel. Saved as is,
it reopens as "Error displaying widget: model not found" until the learner re-runs its cell.
The hook drops the widget view from the outputs that the course's quizzes and score display
(marked in their output metadata); their ``text/html`` and ``text/plain`` fallbacks stay, so a
reopened notebook shows the question, its options and an explanation to open per option. The
score's fallback is replaced by ``course.quiz.SCORE_NOT_SAVED``: the answers live in the
kernel only, so a score saved with the file would be stale. The live page is untouched: only
the file changes.

It is a Jupyter server extension (it adds itself to the contents manager's save hooks, beside
any an admin set). ``pip install`` enables it for the environment with the data file
``course/jupyter-config/course-memoire-tuteur.json``, and installs two more:
``course/jupyter-config/overrides.d/course-memoire-tuteur.json`` makes French
(``jupyterlab-language-pack-fr-FR``, a dependency) JupyterLab's default language: the course
is in French, its interface too (a learner may still pick another one in the Settings menu);
``course/jupyter-config/page_config.d/course-memoire-tuteur.json`` turns off JupyterLab's build
check: nobody builds JupyterLab from a lesson, yet each page load would ask whether a build is
due, which runs ``node yarn.js config`` (0.5 s of CPU; 100 s for a class of 200 opening the
course at 9:00). An editable install gets no data file, so ``python -m course.save_hook`` writes
the same files into the environment (``make setup``, hence ``make lab``, does it).
"""

from __future__ import annotations

import html
import json
import sys
from pathlib import Path
from typing import Any

from .quiz import METADATA_KEY, SCORE_METADATA_KEY, SCORE_NOT_SAVED

__all__ = [
    "CONFIG_FILE",
    "COURSE_OUTPUT_KEYS",
    "DATA_FILES",
    "LAB_SETTINGS",
    "PAGE_CONFIG",
    "SAVED_SCORE",
    "SERVER_CONFIG",
    "WIDGET_VIEW",
    "enable",
    "strip_quiz_widgets",
]

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
COURSE_OUTPUT_KEYS = (METADATA_KEY, SCORE_METADATA_KEY)
CONFIG_FILE = "course-memoire-tuteur.json"  # in <prefix>/etc/jupyter/jupyter_server_config.d
SERVER_CONFIG = {"ServerApp": {"jpserver_extensions": {"course.save_hook": True}}}
# JupyterLab's default settings for the environment (<prefix>/share/jupyter/lab/settings/
# overrides.d/, one file per package): the interface in French
LAB_SETTINGS = {
    "@jupyterlab/translation-extension:plugin": {"locale": "fr_FR"},
    # no « Souhaitez-vous être informé des nouvelles officielles de Jupyter ? » on the first
    # screen: the course runs offline, news and update checks would only reach for the network
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
}
# JupyterLab's page configuration for the environment (<prefix>/etc/jupyter/labconfig/
# page_config.d/, beside the page_config.json that `jupyter labextension disable` writes): no
# build check, no build button
PAGE_CONFIG = {"buildCheck": False, "buildAvailable": False}
# what ``pip install`` puts in the environment (pyproject's data-files), and ``enable`` writes
DATA_FILES = {
    f"etc/jupyter/jupyter_server_config.d/{CONFIG_FILE}": SERVER_CONFIG,
    f"share/jupyter/lab/settings/overrides.d/{CONFIG_FILE}": LAB_SETTINGS,
    f"etc/jupyter/labconfig/page_config.d/{CONFIG_FILE}": PAGE_CONFIG,
}


def _is_course_widget(output: dict[str, Any]) -> bool:
    data = output.get("data")
    metadata = output.get("metadata")
    return (
        output.get("output_type") in ("display_data", "execute_result")
        and isinstance(data, dict)
        and WIDGET_VIEW in data
        and "text/html" in data
        and isinstance(metadata, dict)
        and any(key in metadata for key in COURSE_OUTPUT_KEYS)
    )


SAVED_SCORE = {
    "text/plain": SCORE_NOT_SAVED,
    "text/html": f'<div class="quiz-bilan"><p>{html.escape(SCORE_NOT_SAVED)}</p></div>',
}


def strip_quiz_widgets(model: dict[str, Any], **_: Any) -> int:
    """Drop the widget view of the course's quiz outputs in a notebook model about to be
    saved (called by Jupyter with ``model``, ``path`` and ``contents_manager``); other widgets
    and other files are left alone. Returns the number of outputs changed."""
    content = model.get("content") if model.get("type") == "notebook" else None
    if not isinstance(content, dict):
        return 0
    changed = 0
    for cell in content.get("cells") or ():
        if not isinstance(cell, dict):
            continue
        for output in cell.get("outputs") or ():
            if isinstance(output, dict) and _is_course_widget(output):
                del output["data"][WIDGET_VIEW]
                if SCORE_METADATA_KEY in output["metadata"]:
                    output["data"].update(SAVED_SCORE)
                changed += 1
    return changed


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    """Where Jupyter finds the extension (its own module)."""
    return [{"module": "course.save_hook"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Called by Jupyter at start-up: add the hook beside any other pre-save hook."""
    serverapp.contents_manager.register_pre_save_hook(strip_quiz_widgets)
    serverapp.log.info("course.save_hook\u00a0: les quiz sont enregistrés sans leur widget.")


def enable(prefix: str | Path = sys.prefix) -> list[Path]:
    """Write the files of ``DATA_FILES`` into ``prefix``: every Jupyter server of that
    environment loads the extension, and its JupyterLab speaks French by default and checks for
    no build."""
    written = []
    for rel, content in DATA_FILES.items():
        target = Path(prefix) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    server, lab, page = enable()
    print(f"Quiz enregistrés sans widget\u00a0: extension activée dans {server}")
    print(f"JupyterLab en français par défaut\u00a0: {lab}")
    print(f"JupyterLab sans vérification de compilation\u00a0: {page}")
