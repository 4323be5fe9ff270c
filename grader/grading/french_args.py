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
from typing import NoReturn

__all__ = ["FrenchParser", "french_error"]

NBSP = "\u00a0"
EXIT_USAGE = 2

# argparse's messages (Python 3.11 to 3.13), most specific first
_MESSAGES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"the following arguments are required: (.*)"),
        "argument obligatoire manquant{nbsp}: {0}",
    ),
    (re.compile(r"unrecognized arguments?: (.*)"), "argument(s) inconnu(s){nbsp}: {0}"),
    (re.compile(r"argument (.+?): expected one argument"), "l'option {0} attend une valeur"),
    (
        re.compile(r"argument (.+?): expected at least one argument"),
        "l'option {0} attend une valeur",
    ),
    (
        re.compile(r"argument (.+?): invalid (?:float|int) value: (.*)"),
        "l'option {0} attend un nombre, pas {1}",
    ),
    (
        re.compile(r"argument (.+?): invalid (\w+) value: (.*)"),
        "valeur invalide pour {0}{nbsp}: {2}",
    ),
    (
        re.compile(r"argument (.+?): invalid choice: (.*?) \(choose from (.*)\)"),
        "choix invalide pour {0}{nbsp}: {1} (possibles{nbsp}: {2})",
    ),
    (
        re.compile(r"argument (.+?): ignored explicit argument (.*)"),
        "l'option {0} ne prend pas de valeur ({1} donné)",
    ),
    (
        re.compile(r"argument (.+?): not allowed with argument (.*)"),
        "l'option {0} ne va pas avec {1}",
    ),
    (
        re.compile(r"ambiguous option: (.+?) could match (.*)"),
        "option ambiguë {0}{nbsp}: {1}{nbsp}?",
    ),
    (re.compile(r"one of the arguments (.*) is required"), "il faut l'une des options {0}"),
]


def _quoted(value: str) -> str:
    """argparse's ``'x'`` (a repr) between French quotes."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return f"«{NBSP}{value[1:-1]}{NBSP}»"
    return value


def french_error(message: str) -> str:
    """argparse's English `message` in French; an unknown one is kept, after a French lead."""
    for pattern, french in _MESSAGES:
        match = pattern.fullmatch(message.strip())
        if match:
            return french.format(*map(_quoted, match.groups()), nbsp=NBSP)
    return f"ligne de commande incorrecte ({message})"


class _FrenchHelp(argparse.HelpFormatter):
    def add_usage(self, usage, actions, groups, prefix=None) -> None:  # noqa: ANN001
        super().add_usage(
            usage, actions, groups, prefix if prefix is not None else f"usage{NBSP}: "
        )


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

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(
            EXIT_USAGE,
            f"✘ {self.prog}{NBSP}: {french_error(message)}. Aide{NBSP}: {self.prog} --help\n",
        )
