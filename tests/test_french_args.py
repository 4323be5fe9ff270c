"""course.french_args: argparse's usage, help and errors in French, for the learner's commands
(the teacher's class commands add their rules on top: tests/grading/french/test_french_args.py).

A parser with every kind of argument argparse checks is given each kind of bad command line;
what it prints is French, with French typography, and argparse's English never shows. The
control: the same command lines given to a plain ``argparse.ArgumentParser`` print that English.
Every command that parses with it, the learner's and the class commands, ends quietly with its
own status when the reader of its output leaves first (``make sauvegarde | head -1``).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from french_text import check_text
from grading_course import tool_env
from helpers import REPO

from course.french_args import EXIT_USAGE, FrenchArgumentParser, french_error
from course.sessions._schema import CREATE_SCHEMA_SQL

ENGLISH = re.compile(
    r"usage:|error:|show this help|the following arguments|unrecognized arguments?"
    r"|positional arguments|options:|invalid (?:int|float|choice)|expected one argument"
)

BAD_LINES = {
    "unknown option": ["x", "--inconnue"],
    "missing positional": [],
    "option without value": ["x", "--nombre"],
    "word for a number": ["x", "--nombre", "deux"],
    "invalid choice": ["x", "--mode", "vite"],
}


def _parser(cls: type[argparse.ArgumentParser]) -> argparse.ArgumentParser:
    parser = cls(prog="python -m course.exemple", description="Un exemple.")
    parser.add_argument("fichier")
    parser.add_argument("--nombre", type=int)
    parser.add_argument("--mode", choices=["lent", "sur"])
    return parser


def _run(
    cls: type[argparse.ArgumentParser], line: list[str], capsys: pytest.CaptureFixture
) -> tuple[object, str]:
    with pytest.raises(SystemExit) as stop:
        _parser(cls).parse_args(line)
    out, err = capsys.readouterr()
    return stop.value.code, out + err


@pytest.mark.parametrize("line", BAD_LINES.values(), ids=BAD_LINES.keys())
def test_errors_are_french_and_argparse_english_is_the_control(line, capsys):
    code, shown = _run(FrenchArgumentParser, line, capsys)
    assert code == EXIT_USAGE and shown.startswith("usage\u00a0: python -m course.exemple")
    assert not ENGLISH.search(shown), shown
    assert not check_text(shown), check_text(shown)
    _code, english = _run(argparse.ArgumentParser, line, capsys)
    assert ENGLISH.search(english), english


def test_help_is_french(capsys):
    code, shown = _run(FrenchArgumentParser, ["--help"], capsys)
    assert code == 0 and "options\u00a0:" in shown and "arguments\u00a0:" in shown
    assert "-h, --help" in shown and "afficher cette aide" in shown
    assert not ENGLISH.search(shown), shown


def test_an_unknown_message_keeps_its_text_after_a_french_lead():
    assert french_error("something new") == "ligne de commande incorrecte (something new)"
    assert french_error("argument --mode: invalid choice: 'vite' (choose from 'lent', 'sur')") == (
        "choix invalide pour --mode\u00a0: «\u00a0vite\u00a0» "
        "(possibles\u00a0: «\u00a0lent\u00a0», «\u00a0sur\u00a0»)"
    )


# A command whose reader leaves before it writes (`make sauvegarde | head -1`, `| true`): a class
# command started in grader/ as `make` starts it, and a learner's command doing its work. Python
# buffers a pipe's output (flushed at exit: « Exception ignored … BrokenPipeError », status 120)
# unless PYTHONUNBUFFERED is set, as on this machine (each print raises it: a traceback, or, in
# `purger`, a false « ✘ Purge arrêtée » on the `except OSError` that catches it).
# `inspecter` and `progress` read their own command line (no parser): they call the same helper.
READER_LEAVES = {
    "backup --help": ["-m", "grading.backup", "--help"],
    "backup purger": ["-m", "grading.backup", "purger", "--dossier", "{tmp}/sauvegardes"],
    "tuteur demo": ["-m", "course.tuteur", "demo", "--db", "{tmp}/tuteur.db"],
    "inspecter": ["-m", "course.inspecter", "{tmp}/inspectee.db"],
    "progress parcours": ["-m", "course.progress", "parcours"],
}


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("command", READER_LEAVES.values(), ids=READER_LEAVES.keys())
def test_a_command_whose_reader_leaves_ends_quietly_with_its_own_status(
    command: list[str], buffered: bool, tmp_path: Path
) -> None:
    env = {k: v for k, v in tool_env().items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    env["COURS_PROGRES_DB"] = str(tmp_path / "progres.db")  # the learner's progress, not ours
    with closing(sqlite3.connect(tmp_path / "inspectee.db")) as con:  # a base to inspect
        con.executescript(CREATE_SCHEMA_SQL)
    (tmp_path / "sauvegardes").mkdir()  # a folder given to a purge exists (a key: mounted)
    process = subprocess.Popen(
        [sys.executable, *(a.format(tmp=tmp_path) for a in command)],
        cwd=REPO / "grader",  # where make starts a class command
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # the reader leaves before the command writes anything (it starts)
    try:
        errors = process.stderr.read().decode()
    finally:
        status = process.wait(timeout=120)
    assert (status, errors) == (0, "")
    if "demo" in command:  # its work done whole: the two sessions, stored
        with closing(sqlite3.connect(tmp_path / "tuteur.db")) as con:
            assert con.execute("SELECT COUNT(*) FROM sessions").fetchone() == (2,)
