"""The course's late-submission rule (grading.nbgrader_ext.late_penalty): ``refresh_penalties``
applies the configured plugin again, made as nbgrader's ``AssignLatePenalties.init_plugin``
makes it but without importing nbgrader's preprocessors, and a plugin that is not one is
refused in French."""

from __future__ import annotations

import subprocess
import sys

import pytest
from grading.french.system_reason import GradingError
from grading.nbgrader_ext.late_penalty import PointsPerDayLate, refresh_penalties
from helpers import REPO
from nbgrader.api import Gradebook
from traitlets.config import Config

DUE = "2025-03-14 18:00:00"


def _late_class(path) -> str:
    """A gradebook where ana handed in 3 days and a minute late, scored 7 on one cell."""
    url = f"sqlite:///{path}"
    with Gradebook(url) as gb:
        gb.add_assignment("oublier", duedate=DUE)
        gb.add_notebook("oublier", "oublier")
        gb.add_grade_cell("q", "oublier", "oublier", max_score=10, cell_type="code")
        gb.add_student("ana")
        gb.add_submission("oublier", "ana", timestamp="2025-03-17 18:01:00")
        gb.find_grade("q", "oublier", "oublier", "ana").auto_score = 7
        gb.db.commit()
    return url


@pytest.mark.parametrize("given", ["class", "name"])
def test_the_configured_rule_is_applied_again(tmp_path, given):
    """The plugin named in the configuration (a class, or its dotted name as
    nbgrader_config.py writes it) with its own setting: 4 started days, 1.5 point each."""
    config = Config()
    plugin = (
        PointsPerDayLate
        if given == "class"
        else "grading.nbgrader_ext.late_penalty.PointsPerDayLate"
    )
    config.AssignLatePenalties.plugin_class = plugin
    config.PointsPerDayLate.points_per_day = 1.5
    with Gradebook(_late_class(tmp_path / "gradebook.db")) as gb:
        assert refresh_penalties(gb, config) == ["ana"]
        assert gb.find_submission_notebook("oublier", "oublier", "ana").late_submission_penalty == 6
        assert refresh_penalties(gb, config) == []  # applied: nothing changes a second time


@pytest.mark.parametrize(
    "plugin", ["grading.nbgrader_ext.late_penalty.Absent", "pas un nom", "builtins.dict", dict]
)
def test_a_plugin_that_is_not_one_is_refused_in_french(tmp_path, plugin):
    config = Config()
    config.AssignLatePenalties.plugin_class = plugin
    with Gradebook(_late_class(tmp_path / "gradebook.db")) as gb:
        with pytest.raises(GradingError, match="n'est pas un greffon de nbgrader") as refused:
            refresh_penalties(gb, config)
    assert "AssignLatePenalties.plugin_class (nbgrader_config.py)\u00a0: " in str(refused.value)


def test_a_command_that_shows_a_score_never_imports_nbgraders_preprocessors():
    """What the plugin is made without: nbgrader's preprocessors (nbconvert's, half a second
    at each start of make export, feedback, donnees-eleve, oublier-eleve, sauvegarde)."""
    modules = ("export", "feedback", "learner_export", "erase_learner", "backup")
    code = (
        "import sys, importlib\n"
        f"for m in {modules!r}: importlib.import_module('grading.' + m)\n"
        "print('nbgrader.preprocessors' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO / "grader", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
