"""The course's late-submission rule (grading.nbgrader_ext.late_penalty): ``refresh_penalties``
applies the configured plugin again, made as nbgrader's ``AssignLatePenalties.init_plugin``
makes it but without importing nbgrader's preprocessors, and a plugin that is not one, or a
setting nbgrader would refuse (or that would give a grade no one meant), is refused in French:
in the class tools' own processes and from inside the nbgrader command make export and make
rapport start."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from grading.french.system_reason import GradingError
from grading.nbgrader_ext.late_penalty import (
    PointsPerDayLate,
    command_line_config,
    configured_plugin,
    refresh_penalties,
    rule_of_config,
)
from grading_course import copy_course, grading
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
    "plugin",
    [
        "grading.nbgrader_ext.late_penalty.Absent",
        "pas un nom",
        "builtins.dict",
        dict,
        None,  # nbgrader's Type trait refuses it; rule_of_config read None.__module__
        "nbgrader.plugins.ExportPlugin",  # a plugin, but with no late_submission_penalty
        "nbgrader.plugins.BasePlugin",
    ],
)
def test_a_plugin_that_is_not_one_is_refused_in_french(tmp_path, plugin):
    config = Config()
    config.AssignLatePenalties.plugin_class = plugin
    with Gradebook(_late_class(tmp_path / "gradebook.db")) as gb:
        for shows_the_rule in (
            lambda: refresh_penalties(gb, config),
            lambda: rule_of_config(config),
        ):
            with pytest.raises(GradingError, match="n'est pas un greffon de nbgrader") as refused:
                shows_the_rule()
            said = str(refused.value)
            assert said.startswith("AssignLatePenalties.plugin_class (nbgrader_config.py)\u00a0: ")
            assert "nbgrader.plugins.LateSubmissionPlugin" in said


# a setting of the plugin (section, name, value) -> the French sentence that refuses it
BAD_SETTINGS = {
    "method": (
        "LateSubmissionPlugin",
        "penalty_method",
        "bogus",
        "LateSubmissionPlugin.penalty_method (nbgrader_config.py)\u00a0: 'bogus' n'est pas une "
        "valeur possible ('none' ou 'zero').",
    ),
    "words": (
        "PointsPerDayLate",
        "points_per_day",
        "beaucoup",
        "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: 'beaucoup' n'est pas un "
        "nombre de points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "nan": (  # accepted, it turned a late grade into 0 (« retire nan points »)
        "PointsPerDayLate",
        "points_per_day",
        float("nan"),
        "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: nan n'est pas un nombre de "
        "points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "infinite": (
        "PointsPerDayLate",
        "points_per_day",
        float("inf"),
        "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: inf n'est pas un nombre de "
        "points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "huge": (  # an OverflowError from traitlets, in English, at every command (stop 53)
        "PointsPerDayLate",
        "points_per_day",
        10**400,
        "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: "
        "100000000000000000000000000000… (401 caractères) n'est pas un nombre de points fini, "
        "positif ou nul (par exemple 1 ou 0.5).",
    ),
    "negative": (  # accepted, the rule said « retire -2 point »
        "PointsPerDayLate",
        "points_per_day",
        -2,
        "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: -2 n'est pas un nombre de "
        "points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "bool": (  # accepted as 1.0: the rule said « retire 1 point »
        "PointsPerDayLate",
        "points_per_day",
        True,
        "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: True n'est pas un nombre de "
        "points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "typo": (  # ignored by traitlets: the rule stayed 1 point per day
        "PointsPerDayLate",
        "points_par_jour",
        3,
        "PointsPerDayLate.points_par_jour (nbgrader_config.py)\u00a0: PointsPerDayLate n'a pas de "
        "réglage «\u00a0points_par_jour\u00a0», nbgrader l'ignorerait sans rien dire\u00a0; "
        "réglages connus\u00a0: penalty_method, points_per_day.",
    ),
    "typo in the parent's section": (  # read by the plugin too, as nbgrader reads it
        "LateSubmissionPlugin",
        "point_per_day",
        3,
        "LateSubmissionPlugin.point_per_day (nbgrader_config.py)\u00a0: PointsPerDayLate n'a pas "
        "de réglage «\u00a0point_per_day\u00a0», nbgrader l'ignorerait sans rien dire\u00a0; "
        "réglages connus\u00a0: penalty_method, points_per_day.",
    ),
}


@pytest.mark.parametrize("case", BAD_SETTINGS)
def test_a_setting_nbgrader_refuses_or_a_grade_no_one_meant_is_refused_in_french(tmp_path, case):
    """One French sentence naming the setting, not traitlets' English TraitError, and no
    grade changed."""
    section, name, value, sentence = BAD_SETTINGS[case]
    config = Config()
    config.AssignLatePenalties.plugin_class = "grading.nbgrader_ext.late_penalty.PointsPerDayLate"
    config[section][name] = value
    with Gradebook(_late_class(tmp_path / "gradebook.db")) as gb:
        for shows_the_rule in (
            lambda: refresh_penalties(gb, config),
            lambda: rule_of_config(config),
        ):
            with pytest.raises(GradingError) as refused:
                shows_the_rule()
            assert str(refused.value) == sentence
        assert (
            gb.find_submission_notebook("oublier", "oublier", "ana").late_submission_penalty is None
        )


# nbgrader's own LateSubmissionPlugin (no plugin_class set): a setting -> the sentence refusing it
BARE_PLUGIN_SETTINGS = {
    "capital": (  # every submission failed after grading, its graded copy deleted (English)
        "LateSubmissionPlugin",
        "penalty_method",
        "Zero",
        "LateSubmissionPlugin.penalty_method (nbgrader_config.py)\u00a0: 'Zero' n'est pas une "
        "valeur possible ('none' ou 'zero').",
    ),
    "typo": (
        "LateSubmissionPlugin",
        "penalty",
        "zero",
        "LateSubmissionPlugin.penalty (nbgrader_config.py)\u00a0: LateSubmissionPlugin n'a pas "
        "de réglage «\u00a0penalty\u00a0», nbgrader l'ignorerait sans rien dire\u00a0; réglages "
        "connus\u00a0: penalty_method.",
    ),
    "course plugin's typo": (
        "PointsPerDayLate",
        "points_par_jour",
        3,
        BAD_SETTINGS["typo"][3],
    ),
}


@pytest.mark.parametrize("case", BARE_PLUGIN_SETTINGS)
def test_nbgraders_own_plugin_is_checked_too(tmp_path, case):
    """No plugin_class: nbgrader makes its LateSubmissionPlugin with the configuration, and
    the check (make grade's, before grading) makes it too; the penalties stay as graded."""
    section, name, value, sentence = BARE_PLUGIN_SETTINGS[case]
    config = Config()
    config[section][name] = value
    with Gradebook(_late_class(tmp_path / "gradebook.db")) as gb:
        for shows_the_rule in (
            lambda: configured_plugin(config),
            lambda: refresh_penalties(gb, config),
            lambda: rule_of_config(config),
        ):
            with pytest.raises(GradingError) as refused:
                shows_the_rule()
            assert str(refused.value) == sentence
        config = Config()
        config.LateSubmissionPlugin.penalty_method = "zero"
        assert rule_of_config(config) == "Rendu en retard\u00a0: la note est 0."
        assert refresh_penalties(gb, config) == []


def test_no_points_per_day_is_a_rule_too(tmp_path):
    """0 point per day: allowed (lateness shown, no penalty)."""
    config = Config()
    config.AssignLatePenalties.plugin_class = PointsPerDayLate
    config.PointsPerDayLate.points_per_day = 0
    assert "retire 0 point à la note" in rule_of_config(config)
    with Gradebook(_late_class(tmp_path / "gradebook.db")) as gb:
        assert refresh_penalties(gb, config) == ["ana"]
        assert gb.find_submission_notebook("oublier", "oublier", "ana").late_submission_penalty == 0


COURSE_PLUGIN_NAME = "grading.nbgrader_ext.late_penalty.PointsPerDayLate"


@pytest.mark.parametrize(
    ("argv", "settings"),
    [
        (["--force", "--student=ana", "--PointsPerDayLate.points_per_day=-1"], {"-1"}),
        (["--student", "ana", "--PointsPerDayLate.points_per_day", "2", "-f"], {"2"}),
        (["-PointsPerDayLate.points_per_day=0.5", "--log-level=INFO"], {"0.5"}),
        (["--force", "--student", "ana", "--log-level", "INFO"], set()),
        (["--", "--PointsPerDayLate.points_per_day=-1"], set()),  # after --: not nbgrader's
    ],
    ids=["equals", "space", "one dash", "no setting", "after --"],
)
def test_the_command_line_settings_are_read_as_traitlets_reads_them(argv, settings):
    """``--Section.name=value`` and ``--Section.name value``, among nbgrader autograde's other
    options (--force, --student ana: an alias taking the next argument, not a setting)."""
    given = command_line_config(argv)
    found = given.get("PointsPerDayLate", {}).get("points_per_day")
    assert ({str(found)} if found is not None else set()) == settings, given
    assert set(given.get("CourseDirectory", {}).values()) <= {"ana"}


def test_a_command_line_setting_wins_over_the_files_and_is_checked():
    """The check sees what nbgrader sees: the files' configuration, then the command line."""
    config = Config()
    config.AssignLatePenalties.plugin_class = COURSE_PLUGIN_NAME
    config.PointsPerDayLate.points_per_day = 1.5
    plugin = configured_plugin(config, ["--force", "--PointsPerDayLate.points_per_day=2"])
    assert plugin.points_per_day == 2
    assert config.PointsPerDayLate.points_per_day == 1.5  # the caller's configuration unchanged
    assert configured_plugin(config, ["--force", "--student=ana"]).points_per_day == 1.5


# nbgrader autograde's arguments -> the French sentence that refuses them
BAD_COMMAND_LINES = {
    "negative": (  # graded, then failed, its graded copy deleted (stop 60)
        ["--force", "--student=ebauche", "--PointsPerDayLate.points_per_day=-1"],
        "PointsPerDayLate.points_per_day (ligne de commande)\u00a0: -1 n'est pas un nombre de "
        "points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "words": (
        ["--PointsPerDayLate.points_per_day", "beaucoup"],
        "PointsPerDayLate.points_per_day (ligne de commande)\u00a0: 'beaucoup' n'est pas un "
        "nombre de points fini, positif ou nul (par exemple 1 ou 0.5).",
    ),
    "twice": (  # traitlets' English ValueError
        ["--PointsPerDayLate.points_per_day=1", "--PointsPerDayLate.points_per_day=2"],
        "PointsPerDayLate.points_per_day (ligne de commande)\u00a0: donné 2 fois (1, puis 2), "
        "nbgrader n'en accepte qu'un.",
    ),
    "nbgrader's own plugin": (
        [
            "--AssignLatePenalties.plugin_class=nbgrader.plugins.LateSubmissionPlugin",
            "--LateSubmissionPlugin.penalty_method=Zero",
        ],
        "LateSubmissionPlugin.penalty_method (ligne de commande)\u00a0: 'Zero' n'est pas une "
        "valeur possible ('none' ou 'zero').",
    ),
    "not a plugin": (
        ["--AssignLatePenalties.plugin_class=nbgrader.plugins.ExportPlugin"],
        "AssignLatePenalties.plugin_class (ligne de commande)\u00a0: "
        "'nbgrader.plugins.ExportPlugin' n'est pas un greffon de nbgrader qui s'importe et "
        "calcule les pénalités de retard (une sous-classe de "
        "nbgrader.plugins.LateSubmissionPlugin).",
    ),
    "typo": (
        ["--PointsPerDayLate.points_par_jour=2"],
        "PointsPerDayLate.points_par_jour (ligne de commande)\u00a0: PointsPerDayLate n'a pas de "
        "réglage «\u00a0points_par_jour\u00a0», nbgrader l'ignorerait sans rien dire\u00a0; "
        "réglages connus\u00a0: penalty_method, points_per_day.",
    ),
}


@pytest.mark.parametrize("case", BAD_COMMAND_LINES)
def test_a_command_line_setting_nbgrader_refuses_is_refused_in_french(case):
    argv, sentence = BAD_COMMAND_LINES[case]
    config = Config()
    config.AssignLatePenalties.plugin_class = COURSE_PLUGIN_NAME
    with pytest.raises(GradingError) as refused:
        configured_plugin(config, argv)
    assert str(refused.value) == sentence


@pytest.fixture(scope="module")
def late_course(tmp_path_factory):
    """A course copy whose gradebook holds ana's late submission; its grader/ folder and its
    nbgrader_config.py as shipped."""
    grader = copy_course(tmp_path_factory.mktemp("retard") / "cours")
    _late_class(grader / "gradebook.db")
    return grader, (grader / "nbgrader_config.py").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("command", "setting", "sentence"),
    [
        (
            "export",
            'c.AssignLatePenalties.plugin_class = "nbgrader.plugins.ExportPlugin"',
            "AssignLatePenalties.plugin_class (nbgrader_config.py)\u00a0: "
            "'nbgrader.plugins.ExportPlugin' n'est pas un greffon de nbgrader",
        ),
        ("rapport", 'c.PointsPerDayLate.points_per_day = float("nan")', BAD_SETTINGS["nan"][3]),
    ],
)
def test_the_teacher_reads_the_plain_french_sentence(late_course, command, setting, sentence):
    """make export and make rapport (python -m grading.export, grading.rapport) start nbgrader,
    whose exporter applies the rule again: the refusal is nbgrader's ERROR line the command
    quotes, not a traceback ending in « grading.french.system_reason.GradingError: »."""
    grader, shipped = late_course
    (grader / "nbgrader_config.py").write_text(f"{shipped}\n{setting}\n", encoding="utf-8")
    done = grading(grader, command)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stderr.rstrip("\n")
    assert "\n" not in said and "Error" not in said, said
    reason = sentence.rstrip(".")
    assert f"nbgrader s'est arrêté en erreur (code 1)\u00a0: {reason}" in said, said
    log = (grader / "rapport" / f"{command}.log").read_text(encoding="utf-8")
    assert "Traceback" not in log and f"| ERROR] {sentence}" in log, log


COURSE_PLUGIN = (
    'c.AssignLatePenalties.plugin_class = "grading.nbgrader_ext.late_penalty.PointsPerDayLate"'
)


@pytest.mark.parametrize(
    ("replaced", "setting", "args", "said"),
    [
        (
            None,
            'c.PointsPerDayLate.points_per_day = "1,5"',
            (),
            "PointsPerDayLate.points_per_day (nbgrader_config.py)\u00a0: '1,5' n'est pas un "
            "nombre de points fini",
        ),
        # no plugin_class: nbgrader's own plugin, which the check did not make
        (COURSE_PLUGIN, 'c.LateSubmissionPlugin.penalty_method = "Zero"', (), ""),
        # the files as shipped, the setting on the command line (stop 60): nbgrader reads it too
        (
            None,
            "",
            ("--force", "--student=ana", "--PointsPerDayLate.points_per_day=-1"),
            BAD_COMMAND_LINES["negative"][1],
        ),
    ],
    ids=["french decimal", "nbgrader's own plugin", "command line"],
)
def test_make_grade_refuses_a_late_setting_before_grading_anything(
    late_course, replaced, setting, args, said
):
    """Attack (stop 53): a setting nbgrader refuses (« 1,5 », a French decimal; « Zero » for
    its own plugin; -1 given on the command line, stop 60) failed every submission only after
    grading it, nbgrader then deleting each graded copy, with traitlets' English as the reason;
    make grade now refuses it first, in French, nothing graded, the graded copy kept."""
    grader, shipped = late_course
    said = said or BARE_PLUGIN_SETTINGS["capital"][3]
    if replaced is None:
        configured = f"{shipped}\n{setting}\n"
    else:
        assert replaced in shipped
        configured = shipped.replace(replaced, setting)
    graded = grader / "autograded" / "ana" / "oublier" / "oublier.ipynb"
    graded.parent.mkdir(parents=True)
    graded.write_text('{"copie": "notée"}', encoding="utf-8")
    (grader / "nbgrader_config.py").write_text(configured, encoding="utf-8")
    try:
        done = grading(grader, "autograde", "oublier", *args)
        kept = [p for p in (grader / "autograded").rglob("*") if p.is_file()]
        assert kept == [graded] and graded.read_text(encoding="utf-8") == '{"copie": "notée"}'
    finally:
        (grader / "nbgrader_config.py").write_text(shipped, encoding="utf-8")
        shutil.rmtree(grader / "autograded", ignore_errors=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(f"✘ Rien n'a été noté\u00a0: {said}"), done.stderr
    assert "Traceback" not in done.stderr


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
