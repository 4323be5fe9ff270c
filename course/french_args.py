"""A command line parser that speaks French (usage, help, every error of argparse).

argparse writes « usage: », « options: », « show this help message and exit » and its errors in
English, through ``gettext`` with no French catalogue installed; installing one would change
every parser of the process. This parser translates its own texts instead. The learner's
commands (``python -m course.tuteur``) use it as it is; the teacher's class commands
(``grading.french.french_args.FrenchParser``) add their own rules on top.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import NoReturn

__all__ = ["EXIT_USAGE", "FrenchArgumentParser", "french_error"]

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
    # a type's own refusal (argparse.ArgumentTypeError), already in French: « attend … »
    (r"argument\s(-[^:]+?):\s(attend\s.*)", "l'option {0} {1}"),
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


class FrenchArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose usage, help and errors are in French; ``fail`` stops
    on the command's own French message."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
        kwargs.setdefault("formatter_class", _FrenchHelp)
        kwargs["add_help"] = False
        super().__init__(*args, **kwargs)
        self._positionals.title = f"arguments{NBSP}"  # argparse adds the colon
        self._optionals.title = f"options{NBSP}"
        self.add_argument(
            "-h", "--help", action="help", default=argparse.SUPPRESS, help="afficher cette aide"
        )

    def error(self, message: str) -> NoReturn:
        self.fail(french_error(message))

    def fail(self, message: str) -> NoReturn:
        """Stop on a French `message` (a mistake on the command line), after the usage line."""
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"Erreur\u00a0: {message}\n")
