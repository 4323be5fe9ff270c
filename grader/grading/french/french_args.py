"""The teacher's command line parser: French (``course.french_args``), with the class commands'
rules on top: no abbreviated option, the command's help named in every error, the assignment
and the grader/ folder as shared arguments, and a refusal that names the make variable the
teacher typed (``GARDER_JOURS``) rather than the option make gave in its place.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import NoReturn

from course.french_args import EXIT_USAGE, FrenchArgumentParser, french_error

__all__ = ["FrenchParser", "french_error"]

# set by grader/grader.mk: the make variables that gave this command line an option's value,
# « JOBS=--jobs GARDER_JOURS=--garder-jours » (its MAKE_OPTIONS, those not empty)
MAKE_OPTIONS_ENV = "COURSE_MAKE_OPTIONS"


def _as_typed(message: str) -> str:
    """`message` naming the make variable in place of each option that one gave this command
    line (``make grade JOBS=deux``: « JOBS attend un nombre entier… », not « l'option --jobs… »);
    an option given twice (ARGS too) or typed by hand keeps its name."""
    line = sys.argv[1:]
    for pair in os.environ.get(MAKE_OPTIONS_ENV, "").split():
        variable, _, option = pair.partition("=")
        if sum(arg == option or arg.startswith(f"{option}=") for arg in line) == 1:
            named = rf"(?:l'option )?(?<![\w-]){re.escape(option)}(?![\w-])"
            message = re.sub(named, variable, message)
    return message


class FrenchParser(FrenchArgumentParser):
    """``argparse.ArgumentParser`` in French; abbreviations of options are refused (for a
    command that deletes, ``--conf`` must not pass for ``--confirmer``)."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def add_assignment(self) -> None:
        """The assignment a class command works on, ``oublier`` when left out."""
        self.add_argument(
            "assignment",
            nargs="?",
            default="oublier",
            metavar="DEVOIR",
            help="le devoir (défaut\u00a0: oublier)",
        )

    def add_grader_dir(self, text: str = "le dossier grader/") -> None:
        """``--grader-dir``: the grader/ folder (found from the current one when not given)."""
        self.add_argument("--grader-dir", type=Path, default=None, metavar="DOSSIER", help=text)

    def _parse_known_args(self, arg_strings, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        # a command that passes the options it does not know on (to nbgrader) would pass an
        # abbreviation of its own on too: ``--grader`` for ``--grader-dir``, silently ignored
        namespace, extras = super()._parse_known_args(arg_strings, *args, **kwargs)
        own = [o for action in self._actions for o in action.option_strings if o[:2] == "--"]
        for extra in extras:
            name = extra.split("=", 1)[0] if extra[:2] == "--" else ""
            meant = [option for option in own if len(name) > 2 and option.startswith(name)]
            if meant and name not in own:
                self.fail(f"option abrégée {name}\u00a0: écrivez {' ou '.join(meant)}", usage=True)
        return namespace, extras

    def error(self, message: str) -> NoReturn:
        self.fail(french_error(message), usage=True)

    def fail(self, message: str, *, usage: bool = False) -> NoReturn:
        """Stop on the command's own French `message` (no course here, a value the parser cannot
        check), status 2; with `usage`, after the usage line and before the help's name, as
        argparse's errors (`message` then without its full stop)."""
        message = _as_typed(message)
        if usage:
            self.print_usage(sys.stderr)
            message = f"{message}. Aide\u00a0: {self.prog} --help"
        self.exit(EXIT_USAGE, f"✘ {self.prog}\u00a0: {message}\n")
