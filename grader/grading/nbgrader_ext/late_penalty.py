"""The course's late-submission rule, as an nbgrader plugin: one point per day late, started.

nbgrader computes the lateness (``timestamp.txt``, from the exchange the deposit time collect
read, never the student's claim, against ``--duedate``) and stores this plugin's penalty in the
gradebook, where export, formgrader, feedback and the report read it. Configured as
``AssignLatePenalties.plugin_class`` in ``grader/nbgrader_config.py``, or on nbgrader's command
line (``--PointsPerDayLate.points_per_day=2``, which wins over the file).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from contextlib import redirect_stderr, suppress
from copy import deepcopy
from typing import Any, NoReturn

from nbgrader.api import Gradebook
from nbgrader.plugins import LateSubmissionPlugin
from traitlets import Bool, Enum, Float, Integer, TraitError, TraitType
from traitlets.config import Application, Config, Configurable
from traitlets.config.loader import (
    DeferredConfig,
    DeferredConfigList,
    DeferredConfigString,
    KVArgParseConfigLoader,
)
from traitlets.utils.importstring import import_item

from course.labo.french_number import french_number

from ..french.system_reason import GradingError

__all__ = [
    "DEFAULT_POINTS_PER_DAY",
    "PointsPerDayLate",
    "command_line_config",
    "configured_plugin",
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
    """The rule an nbgrader configuration applies, in French (for the report); a setting
    nbgrader would refuse is refused (:func:`configured_plugin`)."""
    plugin = configured_plugin(config)
    if isinstance(plugin, PointsPerDayLate):
        return rule(plugin.points_per_day)
    if plugin.penalty_method == "zero":
        return "Rendu en retard\u00a0: la note est 0."
    return "Aucune pénalité de retard n'est configurée (le retard est seulement affiché)."


class _Points(Float):
    """A number of points per day: finite and not negative (nan would turn every late grade
    into 0, a negative number add points), and not True or False (a Float takes True as 1.0);
    refused in the words the class tools say it in (nbgrader's own commands show this error
    too)."""

    def validate(self, obj: Any, value: Any) -> float:
        points = None if isinstance(value, bool) else super().validate(obj, value)
        if points is None or not math.isfinite(points) or points < 0:
            raise TraitError(_not_accepted("PointsPerDayLate", "points_per_day", value))
        return points


class PointsPerDayLate(LateSubmissionPlugin):
    """`points_per_day` points per started day of lateness (nbgrader caps it at the score)."""

    points_per_day = _Points(DEFAULT_POINTS_PER_DAY, help="Points removed per started day late.")
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


# what a setting of nbgrader's late-penalty plugins must be, in French (any other setting of a
# teacher's own plugin: from its trait's type)
_EXPECTED = {"points_per_day": "un nombre de points fini, positif ou nul (par exemple 1 ou 0.5)"}


# where a setting was given, as the refusals name it
_FILE = "nbgrader_config.py"
_COMMAND_LINE = "ligne de commande"


def _origin(given: Config, section: str, name: str) -> str:
    """Where ``<section>.<name>`` comes from: the command line `given`, else the files."""
    return _COMMAND_LINE if name in given.get(section, {}) else _FILE


def _shown(value: object) -> str:
    """`value` as a refusal shows it: a command line's text as typed (a number bare, any other
    text quoted), anything else as Python writes it, cut if long."""
    if isinstance(value, DeferredConfigList) and len(value) == 1:
        value = DeferredConfigString(value[0])
    shown = repr(value)
    if isinstance(value, DeferredConfig):
        shown = repr(str(value)) if isinstance(value, str) else repr(list(value))
        with suppress(ValueError):
            float(str(value))
            shown = str(value)
    return shown if len(shown) <= 40 else f"{shown[:30]}… ({len(shown)} caractères)"


def _expected(name: str, trait: TraitType | None) -> str:
    """What the setting `name` accepts, in French."""
    if name in _EXPECTED:
        return _EXPECTED[name]
    if isinstance(trait, Enum):
        return f"une valeur possible ({' ou '.join(map(repr, trait.values))})"
    if isinstance(trait, Bool):
        return "True ou False"
    if isinstance(trait, (Float, Integer)):
        return "un nombre"
    return "une valeur que ce réglage accepte"


def _not_accepted(
    section: str, name: str, value: object, trait: TraitType | None = None, origin: str = _FILE
) -> str:
    """The French sentence that refuses `value` for the setting ``c.<section>.<name>``, given in
    `origin` (the files, or the command line)."""
    return f"{section}.{name} ({origin})\u00a0: {_shown(value)} n'est pas {_expected(name, trait)}."


def _unknown(section: str, name: str, plugin: str, known: Any, origin: str = _FILE) -> str:
    """The French sentence that refuses ``c.<section>.<name>``, a setting `plugin` does not
    have (nbgrader would ignore it without a word: a typo kept the rule it meant to change)."""
    return (
        f"{section}.{name} ({origin})\u00a0: {plugin} n'a pas de réglage "
        f"«\u00a0{name}\u00a0», nbgrader l'ignorerait sans rien dire\u00a0; réglages connus\u00a0: "
        f"{', '.join(sorted(known))}."
    )


def _refuse(message: str) -> NoReturn:
    """Refuse the configuration in one French sentence: a GradingError, which every class tool's
    main prints; inside an nbgrader command (the export plugins the class tools' make export and
    make rapport start), that command's way of failing instead, its ERROR line and status 1 as
    ``NbGrader.fail`` does, which the class tools quote (``QuietRun.last_error``), not a
    traceback ending in the error's class name."""
    app = Application.instance() if Application.initialized() else None
    if app is not None and type(app).__module__.startswith("nbgrader."):
        app.log.error(message)
        raise SystemExit(1)
    raise GradingError(message)


def _plugin_class(config: Config, given: Config) -> type[LateSubmissionPlugin] | None:
    """The class ``AssignLatePenalties.plugin_class`` names (None when it is not set), refused in
    French if it is not one of nbgrader's late-submission plugins (`given`: the command line's
    settings, which `config` holds too)."""
    section = config.get("AssignLatePenalties", {})
    if "plugin_class" not in section:
        return None
    plugin_class = named = section["plugin_class"]
    # imported as nbgrader's Type trait imports it, without nbgrader's preprocessors (nbconvert's:
    # half a second at every command that shows a score)
    with suppress(ImportError, ValueError, AttributeError):  # a name nothing imports: refused
        plugin_class = import_item(str(named)) if isinstance(named, str) else named
    if not (isinstance(plugin_class, type) and issubclass(plugin_class, LateSubmissionPlugin)):
        origin = _origin(given, "AssignLatePenalties", "plugin_class")
        _refuse(
            f"AssignLatePenalties.plugin_class ({origin})\u00a0: {_shown(named)} n'est pas "
            "un greffon de nbgrader qui s'importe et calcule les pénalités de retard (une "
            "sous-classe de nbgrader.plugins.LateSubmissionPlugin)."
        )
    return plugin_class


def _made(
    plugin_class: type[LateSubmissionPlugin], config: Config, given: Config
) -> LateSubmissionPlugin:
    """`plugin_class` with its settings from `config`, as ``AssignLatePenalties.init_plugin``
    makes it; a setting its trait refuses (traitlets' English TraitError), that it does not
    have (which traitlets ignores), or that the command line (`given`) gives twice (traitlets'
    English ValueError), refused in French."""
    traits = plugin_class.class_traits(config=True)
    # the sections of its late-submission classes (BasePlugin's and above are shared with the
    # other plugins: export, authentication), and the course's plugin's, whichever is configured
    sections = {
        cls.__name__: (plugin_class, traits)
        for cls in plugin_class.mro()
        if issubclass(cls, LateSubmissionPlugin)
    }
    sections.setdefault(
        "PointsPerDayLate", (PointsPerDayLate, PointsPerDayLate.class_traits(config=True))
    )
    for section, (owner, known) in sections.items():
        for name, value in config.get(section, {}).items():
            origin = _origin(given, section, name)
            if name not in known:
                _refuse(_unknown(section, name, owner.__name__, known, origin))
            if isinstance(value, DeferredConfigList) and len(value) > 1:
                typed = ", puis ".join(_shown(DeferredConfigString(v)) for v in value)
                _refuse(
                    f"{section}.{name} ({origin})\u00a0: donné {len(value)} fois ({typed}), "
                    "nbgrader n'en accepte qu'un."
                )
    try:
        return plugin_class(config=config)
    # OverflowError: 10**400 points, as a float; ValueError: a command line's text, cast
    except (TraitError, OverflowError, ValueError) as exc:
        refused = exc
    for cls in plugin_class.mro():  # the sections nbgrader reads the plugin's settings from
        if not (isinstance(cls, type) and issubclass(cls, Configurable)):
            continue
        for name, value in config.get(cls.__name__, {}).items():
            if name not in traits:
                continue
            try:
                plugin_class(config=Config({cls.__name__: {name: value}}))
            except (TraitError, OverflowError, ValueError):
                origin = _origin(given, cls.__name__, name)
                _refuse(_not_accepted(cls.__name__, name, value, traits[name], origin))
    # each setting accepted alone, not together (a teacher's own plugin): said as traitlets says it
    origin = _COMMAND_LINE if any(given.get(s) for s in sections) else _FILE
    _refuse(f"Réglages de {plugin_class.__name__} ({origin}) refusés\u00a0: {refused}")


# an argument that may set a configurable's setting (traitlets' ``--Class.trait``): any other
# argument of nbgrader's (--force, --student=ana) sets none of the late penalty's
_SETTING = re.compile(r"-?-[A-Za-z]\w*\.")


def command_line_config(
    argv: Sequence[str],
    aliases: Mapping[Any, Any] | None = None,
    flags: Mapping[Any, Any] | None = None,
) -> Config:
    """The configuration nbgrader takes from its command line `argv`: ``--Section.name=value``
    and ``--Section.name value`` (text that traitlets casts to the setting's type when the
    configurable is made) and what its aliases and flags set, read as traitlets reads an
    application's command line (the aliases and flags of ``nbgrader autograde`` unless given);
    empty when it sets nothing, or when traitlets cannot read it (nbgrader then stops before
    doing anything)."""
    argv = list(argv)
    if not any(_SETTING.match(arg.split("=", 1)[0]) for arg in argv):
        return Config()  # no setting: nbgrader's applications (a second to import) not needed
    if aliases is None or flags is None:
        from nbgrader.apps import autogradeapp

        aliases = autogradeapp.aliases if aliases is None else aliases
        flags = autogradeapp.flags if flags is None else flags
    loader = KVArgParseConfigLoader(argv, aliases=dict(aliases), flags=dict(flags))
    try:
        with redirect_stderr(io.StringIO()):  # argparse's English usage: nbgrader says it
            return loader.load_config()
    except (SystemExit, Exception):
        return Config()


def configured_plugin(config: Config, argv: Sequence[str] = ()) -> LateSubmissionPlugin:
    """The late-submission plugin nbgrader makes with `config` and the settings its command line
    `argv` gives (:func:`command_line_config`, which win): the class
    ``AssignLatePenalties.plugin_class`` names, or nbgrader's own LateSubmissionPlugin when none
    is set, with its settings; a plugin_class or a setting nbgrader would refuse, or that would
    give a grade no one meant (a number of points per day that is nan, infinite, negative, True
    or False; a setting the plugin does not have, which nbgrader ignores) is refused in one
    French sentence."""
    given = command_line_config(argv) if argv else Config()
    if given:
        config = deepcopy(config)  # merged in place: the caller's configuration left as it is
        config.merge(given)
    return _made(_plugin_class(config, given) or LateSubmissionPlugin, config, given)


def refresh_penalties(gradebook: Gradebook, config: Config) -> list[str]:
    """The configured rule applied again to each late submission with its score now: nbgrader
    applies it when it grades, before any hand grade (3 days late, code 0, the written answer
    graded 2 by hand in formgrader: 2 / 12 kept, where the rule gives 0). Called by every
    command that shows a score (export, report, feedback, a learner's data); the students whose
    penalty changed."""
    plugin = configured_plugin(config)
    if type(plugin) is LateSubmissionPlugin:
        return []  # nbgrader's own plugin, no rule of the course's: the penalties stay as graded
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
