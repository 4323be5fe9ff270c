"""A command line parser that speaks French to the teacher (usage, help, every error).

argparse writes « usage: », « the following arguments are required » and its other messages in
English, through ``gettext`` with no French catalogue installed; installing one would change
every parser of the process. This parser translates its own messages instead, and names the
command's help (``-h``) in every error.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import NoReturn

__all__ = ["FrenchParser", "french_error"]

NBSP = "\u00a0"
EXIT_USAGE = 2

# argparse's messages (Python 3.11 to 3.13), most specific first; `\s` stands for their spaces
_MESSAGES: list[tuple[str, str]] = [
    (
        r"the\sfollowing\sarguments\sare\srequired:\s(.*)",
        "argument obligatoire manquant\u00a0: {0}",
    ),
    (r"unrecognized\sarguments?:\s(.*)", "argument(s) inconnu(s)\u00a0: {0}"),
    (r"argument\s(.+?):\sexpected\sone\sargument", "l'option {0} attend une valeur"),
    (r"argument\s(.+?):\sexpected\sat\sleast\sone\sargument", "l'option {0} attend une valeur"),
    (
        r"argument\s(.+?):\sinvalid\s(?:float|int)\svalue:\s(.*)",
        "l'option {0} attend un nombre, pas {1}",
    ),
    (r"argument\s(.+?):\sinvalid\s(\w+)\svalue:\s(.*)", "valeur invalide pour {0}\u00a0: {2}"),
    (
        r"argument\s(.+?):\sinvalid\schoice:\s(.*?)\s\(choose\sfrom\s(.*)\)",
        "choix invalide pour {0}\u00a0: {1} (possibles\u00a0: {2})",
    ),
    (
        r"argument\s(.+?):\signored\sexplicit\sargument\s(.*)",
        "l'option {0} ne prend pas de valeur ({1} donné)",
    ),
    (r"argument\s(.+?):\snot\sallowed\swith\sargument\s(.*)", "l'option {0} ne va pas avec {1}"),
    (r"ambiguous\soption:\s(.+?)\scould\smatch\s(.*)", "option ambiguë {0}\u00a0: {1}\u00a0?"),
    (r"one\sof\sthe\sarguments\s(.*)\sis\srequired", "il faut l'une des options {0}"),
]


def _is_repr(value: str) -> bool:
    return len(value) >= 2 and value[0] == value[-1] and value[0] in "'\""


def _quoted(value: str) -> str:
    """argparse's ``'x'`` (a repr) between French quotes; a list of them (``'a', 'b'``, the
    choices of an invalid choice), each between its own."""
    items = value.split(", ")
    if len(items) > 1 and all(map(_is_repr, items)):
        return ", ".join(map(_quoted, items))
    if _is_repr(value):
        return f"«{NBSP}{value[1:-1]}{NBSP}»"
    return value


def french_error(message: str) -> str:
    """argparse's English `message` in French; an unknown one is kept, after a French lead."""
    for pattern, french in _MESSAGES:
        match = re.fullmatch(pattern, message.strip())
        if match:
            return french.format(*map(_quoted, match.groups()))
    return f"ligne de commande incorrecte ({message})"


class _FrenchHelp(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None) -> None:  # noqa: ANN001
        super().add_usage(usage, actions, groups, prefix if prefix is not None else "usage\u00a0: ")


class FrenchParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` in French; abbreviations of options are refused (for a
    command that deletes, ``--conf`` must not pass for ``--confirmer``)."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        kwargs.setdefault("formatter_class", _FrenchHelp)
        kwargs.setdefault("allow_abbrev", False)
        kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self._positionals.title = f"arguments{NBSP}"  # argparse adds the colon
        self._optionals.title = f"options{NBSP}"
        self.add_argument(
            "-h", "--help", action="help", default=argparse.SUPPRESS, help="afficher cette aide"
        )

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
        """``--grader-dir``: the course's grader/ folder, found from the current one when left
        out."""
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
        """Stop the command on the teacher's own French `message`, not argparse's (no course
        here, a value the parser cannot check), with the exit status of a bad usage; with
        `usage`, the usage line first and the command's help named, as for argparse's errors
        (`message` then without its full stop)."""
        if usage:
            self.print_usage(sys.stderr)
            message = f"{message}. Aide\u00a0: {self.prog} --help"
        self.exit(EXIT_USAGE, f"✘ {self.prog}\u00a0: {message}\n")
