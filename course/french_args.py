"""A command line parser that speaks French (usage, help, every error of argparse).

argparse writes « usage: », « options: », « show this help message and exit » and its errors in
English, through ``gettext`` with no French catalogue installed; installing one would change
every parser of the process. This parser translates its own texts instead. The learner's
commands (``python -m course.tuteur``) use it as it is; the teacher's class commands
(``grading.french.french_args.FrenchParser``) add their own rules on top.

Every command parses its line first, so the parser is also where a command's standard streams
learn that their reader may leave (``make sauvegarde | head -1``): what the command writes after
that is dropped, without a ``BrokenPipeError`` (a traceback, or, caught as an ``OSError``, a
false report of a failure), and the command finishes its work with its own exit status.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TextIO

__all__ = ["EXIT_USAGE", "FrenchArgumentParser", "french_error", "quiet_when_the_reader_leaves"]

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
        r"argument\s(.+?):\sinvalid\sint\svalue:\s(.*)",
        "l'option {0} attend un nombre entier, pas {1}",
    ),
    (r"argument\s(.+?):\sinvalid\sfloat\svalue:\s(.*)", "l'option {0} attend un nombre, pas {1}"),
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


class _ReaderMayLeave:
    """A standard stream whose reader may go away (the pipe's end closed, ``| head -1``): from
    then on, what is written goes to ``os.devnull``; everything else is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_left()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_left()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _reader_left(self) -> None:
        # the stream's file descriptor becomes os.devnull: what it still holds, what is written
        # next and what Python flushes at exit are dropped there, not refused again
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)


def quiet_when_the_reader_leaves() -> None:
    """Make the process's stdout and stderr drop what is written once their reader has left,
    quietly, rather than raise ``BrokenPipeError``. Only the real streams of a command: a stream
    redirected (a notebook's, a test's capture) is left alone; called twice, it does nothing."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and stream is getattr(sys, f"__{name}__"):
            setattr(sys, name, _ReaderMayLeave(stream))


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

    def parse_known_args(  # every parse goes through it (parse_args, a subcommand's parser)
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        quiet_when_the_reader_leaves()  # the command starts: its --help, usage, report
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        self.fail(french_error(message))

    def fail(self, message: str) -> NoReturn:
        """Stop on a French `message` (a mistake on the command line), after the usage line."""
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"Erreur\u00a0: {message}\n")
