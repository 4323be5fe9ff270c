"""The course's late-submission rule, as an nbgrader plugin: one point per day late, started.

nbgrader computes the lateness (``timestamp.txt``, from the exchange the deposit time collect
read, never the student's claim, against ``--duedate``) and stores this plugin's penalty in the
gradebook, where export, formgrader, feedback and the report read it. Configured as
``AssignLatePenalties.plugin_class`` in ``grader/nbgrader_config.py``.
"""

from __future__ import annotations

import math
from contextlib import suppress

from nbgrader.api import Gradebook
from nbgrader.plugins import BasePlugin, LateSubmissionPlugin
from traitlets import Float
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from course.labo.french_number import french_number

from ..french.system_reason import GradingError

__all__ = [
    "DEFAULT_POINTS_PER_DAY",
    "PointsPerDayLate",
    "refresh_penalties",
    "rule",
    "rule_of_config",
]

DEFAULT_POINTS_PER_DAY = 1.0


def rule(points_per_day: float = DEFAULT_POINTS_PER_DAY) -> str:
    """The rule in French, as the statement and the report say it."""
    amount = french_number(points_per_day)
    unit = "point" if points_per_day <= 1 else "points"
    return (
        f"Rendu en retard\u00a0: chaque jour de retard commencé retire {amount} {unit} à la "
        "note, sans descendre sous 0."
    )


def rule_of_config(config: Config) -> str:
    """The rule an nbgrader configuration applies, in French (for the report)."""
    plugin = config.get("AssignLatePenalties", {}).get("plugin_class", "")
    name = plugin if isinstance(plugin, str) else f"{plugin.__module__}.{plugin.__qualname__}"
    if name.endswith("PointsPerDayLate"):
        points = config.get("PointsPerDayLate", {}).get("points_per_day", DEFAULT_POINTS_PER_DAY)
        return rule(float(points))
    if config.get("LateSubmissionPlugin", {}).get("penalty_method") == "zero":
        return "Rendu en retard\u00a0: la note est 0."
    return "Aucune pénalité de retard n'est configurée (le retard est seulement affiché)."


class PointsPerDayLate(LateSubmissionPlugin):
    """`points_per_day` points per started day of lateness (nbgrader caps it at the score)."""

    points_per_day = Float(DEFAULT_POINTS_PER_DAY, help="Points removed per started day late.")
    points_per_day.tag(config=True)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        if total_seconds_late <= 0:
            return None
        days = math.ceil(total_seconds_late / 86400)
        penalty = min(score, days * self.points_per_day)
        self.log.info(
            "Late by %.0f s, %d day(s) started, penalty %s for %s",
            total_seconds_late,
            days,
            penalty,
            student_id,
        )
        return penalty


def refresh_penalties(gradebook: Gradebook, config: Config) -> list[str]:
    """The configured rule applied again to each late submission with its score now: nbgrader
    applies it when it grades, before any hand grade (3 days late, code 0, the written answer
    graded 2 by hand in formgrader: 2 / 12 kept, where the rule gives 0). Called by every
    command that shows a score (export, report, feedback, a learner's data); the students whose
    penalty changed."""
    plugin_class = config.get("AssignLatePenalties", {}).get("plugin_class")
    if plugin_class is None:
        return []  # no rule configured here (a bare plugin): the penalties stay as graded
    # the plugin AssignLatePenalties.init_plugin makes, without importing nbgrader's
    # preprocessors (nbconvert's: half a second at every command that shows a score)
    named = plugin_class
    with suppress(ImportError, ValueError):  # a name nothing imports: refused below
        plugin_class = import_item(plugin_class) if isinstance(plugin_class, str) else plugin_class
    if not (isinstance(plugin_class, type) and issubclass(plugin_class, BasePlugin)):
        raise GradingError(
            f"AssignLatePenalties.plugin_class (nbgrader_config.py)\u00a0: {named!r} n'est pas "
            "un greffon de nbgrader qui s'importe (une sous-classe de nbgrader.plugins.BasePlugin)."
        )
    plugin = plugin_class(config=config)
    changed = []
    for assignment in gradebook.assignments:
        for sub in (s for s in assignment.submissions if (s.total_seconds_late or 0) > 0):
            for nb in sub.notebooks:
                penalty = plugin.late_submission_penalty(
                    sub.student.id, nb.score, sub.total_seconds_late
                )
                if penalty is not None:  # as nbgrader keeps it: from 0 to the score
                    penalty = min(max(penalty, 0), nb.score)
                if penalty != nb.late_submission_penalty:
                    nb.late_submission_penalty = penalty
                    changed.append(sub.student.id)
    if changed:
        gradebook.db.commit()
    return changed
