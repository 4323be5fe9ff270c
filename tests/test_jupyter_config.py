"""The course's Jupyter configuration (course/jupyter-config): what each file is for, and who
loads it. The browser tests show the effect (tests/browser/test_learner_view.py)."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

from helpers import REPO

from course import save_hook

CONFIG = REPO / "course" / "jupyter-config"
LEARNER = CONFIG / "eleve"
HUB_STUDENTS = REPO / "grader" / "hub" / "jupyter-config" / "students"
HUB_INSTRUCTORS = REPO / "grader" / "hub" / "jupyter-config" / "instructors"


def read(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_shipped_data_file_is_one_that_enable_writes():
    """pip install (data-files) and `python -m course.save_hook` (editable installs) put the
    same files in the environment: the save hook enabled, the interface in French, no build
    check."""
    data_files = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "data-files"
    ]
    shipped = {
        f"{target}/{Path(src).name}": read(REPO / src)
        for target, sources in data_files.items()
        for src in sources
    }
    assert shipped == save_hook.DATA_FILES
    assert save_hook.LAB_SETTINGS == {
        "@jupyterlab/translation-extension:plugin": {"locale": "fr_FR"},
        "@jupyterlab/apputils-extension:notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    assert "share/jupyter/lab/settings/overrides.d/course-memoire-tuteur.json" in shipped


def test_the_french_pack_is_a_dependency_everywhere():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert any(
        d.startswith("jupyterlab-language-pack-fr-FR") for d in pyproject["project"]["dependencies"]
    )
    environment = (REPO / "environment.yml").read_text()
    assert re.search(r"^\s*- jupyterlab-language-pack-fr-FR==\S+$", environment, re.M)


def test_learner_view_hides_what_the_hubs_students_do_not_see():
    """make lab's learner configuration and the hub's student one hide the same instructor
    tools: nbgrader's formgrader, course list and Create Assignment panel (the assignment list
    and validation stay)."""
    page = "labconfig/page_config.json"
    assert read(LEARNER / page) == read(HUB_STUDENTS / page)
    assert set(read(LEARNER / page)["disabledExtensions"]) == {
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:course-list",
        "@jupyter/nbgrader:create-assignment",
    }

    def nbgrader_extensions(path: Path) -> dict:
        extensions = read(path)["ServerApp"]["jpserver_extensions"]
        return {k: v for k, v in extensions.items() if k.startswith("nbgrader.")}

    ours = nbgrader_extensions(LEARNER / "jupyter_server_config.d/course-eleve.json")
    hub = nbgrader_extensions(HUB_STUDENTS / "jupyter_server_config.d/nbgrader-cours.json")
    assert ours == hub
    assert ours == {
        "nbgrader.server_extensions.formgrader": False,
        "nbgrader.server_extensions.course_list": False,
        "nbgrader.server_extensions.assignment_list": True,
        "nbgrader.server_extensions.validate_assignment": True,
    }


def test_the_class_servers_skip_the_language_server_search_and_every_build_check():
    """jupyter-lsp's search runs `npm prefix -g` at each server start and JupyterLab's build
    check `node yarn.js config` at each page load (0.2 and 0.5 s of CPU, times a class): the
    learner's (`make lab`), the hub's students' and instructors' servers leave jupyter-lsp off
    (their config folders come before the environment's, whose jupyter-lsp file turns it on; an
    instructor's own `make formgrader` keeps it, as installed), and the environment's page config
    turns the build check off for every server. The browser and hub tests read both off the real
    servers."""
    for folder, name in (
        (LEARNER, "course-eleve.json"),
        (HUB_STUDENTS, "nbgrader-cours.json"),
        (HUB_INSTRUCTORS, "nbgrader-cours.json"),
    ):
        extensions = read(folder / "jupyter_server_config.d" / name)["ServerApp"]
        assert extensions["jpserver_extensions"]["jupyter_lsp"] is False, folder
    page = "etc/jupyter/labconfig/page_config.d/course-memoire-tuteur.json"
    assert save_hook.DATA_FILES[page] == {"buildCheck": False, "buildAvailable": False}


def test_only_make_lab_loads_the_learner_view():
    """The `lab:` recipe adds the folder to JUPYTER_CONFIG_PATH for its own server; `make
    formgrader` and the installed environment never see it."""
    makefiles = [REPO / "Makefile", *sorted((REPO / "grader").glob("*.mk"))]
    users = [
        line.strip()
        for m in makefiles
        for line in m.read_text().splitlines()
        if "jupyter-config/eleve" in line and not line.lstrip().startswith("#")
    ]
    assert users == [
        "JUPYTER_CONFIG_PATH=$(call q,$(abspath course/jupyter-config/eleve)"
        "$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH))) \\"
    ]
    lab_recipe = re.search(r"^lab:.*?(?=^\S|\Z)", (REPO / "Makefile").read_text(), re.M | re.S)
    assert lab_recipe and "jupyter-config/eleve" in lab_recipe.group(0)
    assert "jupyter-config/eleve" not in (REPO / "pyproject.toml").read_text()


def test_the_news_prompt_is_off_by_a_setting_jupyterlab_accepts():
    """JupyterLab asks « Souhaitez-vous être informé des nouvelles officielles de Jupyter ? » while
    `fetchNews` is "none" (its default): the course sets it to "false" in the environment's
    overrides, which `make lab` (save_hook.enable) and the hub's environment (a pip install of
    the course, grader/hub/install-course-env.sh) both write. The value is checked against the
    installed JupyterLab's own schema, so a misspelt key or value fails here."""
    schema_file = (
        Path(sys.prefix)
        / "share/jupyter/lab/schemas/@jupyterlab/apputils-extension/notification.json"
    )
    assert schema_file.is_file(), schema_file
    properties = read(schema_file)["properties"]
    assert properties["fetchNews"]["default"] == "none"  # control: JupyterLab's default asks
    shipped = read(CONFIG / "overrides.d" / "course-memoire-tuteur.json")
    news = shipped["@jupyterlab/apputils-extension:notification"]
    assert set(news) <= set(properties)
    accepted = {choice["const"] for choice in properties["fetchNews"]["oneOf"]}
    assert news["fetchNews"] in accepted and news["fetchNews"] == "false"
    assert news["checkForUpdates"] is False
    install = (REPO / "grader" / "hub" / "install-course-env.sh").read_text()
    # every pip install of the course's build ("$build", continued lines included): never -e
    installs = re.findall(r'pip install((?:[^\n]|\\\n)*?)"\$build"', install)
    assert installs, "the hub installs the course"
    assert all("-e " not in args for args in installs), installs
