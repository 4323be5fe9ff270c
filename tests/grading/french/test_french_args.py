"""Every class command of grader/grading speaks French on its command line
(grading.french.french_args).

argparse writes « usage: », « error: the following arguments are required » and « show this
help message and exit » in English; a teacher who mistypes a command must read French instead,
with its typography. The commands are found, not listed: every module of ``grading`` with a
``main(argv)``. Each is called in this process with ``--help`` and with a bad command line, and
stopped as soon as its command line is read: argparse's parsing methods are wrapped so that a
command line that *is* accepted raises :class:`Accepted` instead of returning, so no command ever
starts nbgrader, grades or writes anything here (a command that passes unknown options to
nbgrader, such as autograde, accepts ``--pas-une-option``: that is checked too).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import grading
import pytest
from french_text import check_text
from grading.french.french_args import FrenchParser
from grading_course import copy_course, make
from grading_course import grading as run_grading
from helpers import REPO

GRADING = Path(grading.__file__).parent

# argparse's English, as Python 3.11 to 3.13 write it (« options\u00a0: » is the French one)
ENGLISH = re.compile(
    r"usage:|error:|show this help|the following arguments|unrecognized arguments?"
    r"|positional arguments|options:|optional arguments|invalid (?:int|float|choice)"
    r"|expected (?:one|at least one) argument|not allowed with|ambiguous option"
)

UNKNOWN = "--pas-une-option"
# bad command lines, tried in this order until the command refuses one: an unknown option,
# nothing (a required argument missing), an option without its value, a word for a number
BAD_LINES = (
    [UNKNOWN],
    [],
    ["--grader-dir"],
    ["--jobs", "x"],
    ["--submissions", "x"],
    ["--copies", "x"],
)


def _commands() -> list[str]:
    """The modules of ``grading`` that are commands: those with a ``main``."""
    names = []
    for info in pkgutil.iter_modules(grading.__path__):
        module = importlib.import_module(f"grading.{info.name}")
        if callable(getattr(module, "main", None)):
            names.append(info.name)
    return sorted(names)


COMMANDS = _commands()


class Accepted(Exception):
    """The command line was accepted: the command would start its work now."""

    def __init__(self, parser: argparse.ArgumentParser, result: object) -> None:
        super().__init__(parser.prog)
        self.parser, self.result = parser, result


@dataclass
class Outcome:
    """What one call of a command's ``main`` did: its exit status (None: command line
    accepted), what it printed, the parsers it built."""

    code: int | str | None
    out: str
    err: str
    accepted: Accepted | None
    parsers: list[argparse.ArgumentParser]


@pytest.fixture
def parse_only(monkeypatch, capsys) -> Iterator[Callable[[str, list[str]], Outcome]]:
    """``call(name, argv)``: ``grading.<name>.main(argv)``, stopped once its command line is
    read; every parser that reads a command line is recorded."""
    parsers: list[argparse.ArgumentParser] = []
    depth = 0

    def stopping(method: Callable) -> Callable:
        def wrapper(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> object:
            nonlocal depth
            parsers.append(self)
            depth += 1  # parse_args calls parse_known_args; a subcommand's parser is nested
            try:
                result = method(self, *args, **kwargs)
            finally:
                depth -= 1
            if depth == 0:
                raise Accepted(self, result)
            return result

        return wrapper

    for name in ("parse_args", "parse_known_args"):
        monkeypatch.setattr(
            argparse.ArgumentParser, name, stopping(getattr(argparse.ArgumentParser, name))
        )

    def call(name: str, argv: list[str]) -> Outcome:
        main = importlib.import_module(f"grading.{name}").main
        parsers.clear()
        code, accepted = None, None
        try:
            main(list(argv))
        except SystemExit as stop:
            code = stop.code
        except Accepted as exc:
            accepted = exc
        else:
            pytest.fail(f"grading.{name}.main({argv}) returned without reading its command line")
        printed = capsys.readouterr()
        return Outcome(code, printed.out, printed.err, accepted, list(parsers))

    yield call


def _assert_french(text: str, where: str) -> None:
    assert not ENGLISH.search(text), f"{where}: argparse's English\n{text}"
    # french_error's wrapper of a message it does not know: English went through
    assert "ligne de commande incorrecte" not in text, f"{where}: an untranslated error\n{text}"
    typography = [message for _, message, _ in check_text(text, strict=False)]
    assert not typography, f"{where}: {typography}\n{text}"


def _subcommands(parser: argparse.ArgumentParser) -> list[str]:
    return [
        name
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]


def _help(call: Callable[[str, list[str]], Outcome], name: str, argv: list[str]) -> Outcome:
    where = f"grading.{name} {' '.join(argv)}"
    seen = call(name, argv)
    assert seen.code == 0 and seen.accepted is None, (where, seen)
    assert seen.out.startswith("usage\u00a0: ") and not seen.err, (where, seen)
    assert "afficher cette aide" in seen.out and "options\u00a0:" in seen.out, seen.out
    _assert_french(seen.out, where)
    return seen


def _refusal(call: Callable[[str, list[str]], Outcome], name: str, prefix: list[str]) -> Outcome:
    """The first bad command line of BAD_LINES the command refuses; an unknown option it
    accepts must be one it passes on (to nbgrader)."""
    for bad in BAD_LINES:
        argv = [*prefix, *bad]
        seen = call(name, argv)
        if seen.accepted is None:
            break
        if bad == [UNKNOWN]:
            _, rest = seen.accepted.result  # accepted: only by parse_known_args
            assert rest == [UNKNOWN], (name, seen.accepted.result)
    else:
        pytest.fail(f"grading.{name} {' '.join(prefix)} accepts every line of {BAD_LINES}")
    where = f"grading.{name} {' '.join(argv)}"
    assert seen.code == 2, (where, seen)
    assert seen.err.startswith("usage\u00a0: ") and not seen.out, (where, seen)
    assert "✘ " in seen.err and "Aide\u00a0: " in seen.err and " --help" in seen.err, seen.err
    _assert_french(seen.err, where)
    return seen


def test_the_commands_are_found():
    assert {"autograde", "backup", "erase_learner", "feedback", "rapport", "zip_collect"} <= set(
        COMMANDS
    )
    assert "french_args" not in COMMANDS and "paths" not in COMMANDS


@pytest.mark.parametrize("name", COMMANDS)
def test_help_and_errors_are_in_french(name, parse_only):
    """``--help``: status 0, the French help; a bad command line: status 2, the usage and one
    French sentence naming ``--help``. A command with subcommands (backup): each of them too."""
    seen = _help(parse_only, name, ["--help"])
    assert all(isinstance(p, FrenchParser) for p in seen.parsers), seen.parsers
    # every value the usage names is named in French, not after its (English) dest
    unnamed = [
        action.dest
        for action in seen.parsers[0]._actions
        if action.nargs != 0 and action.metavar is None and action.choices is None
    ]
    assert not unnamed, f"grading.{name}: no French metavar for {unnamed}"
    top = seen.parsers[0]
    _refusal(parse_only, name, [])
    for sub in _subcommands(top):
        _help(parse_only, name, [sub, "--help"])
        refused = _refusal(parse_only, name, [sub])
        assert all(isinstance(p, FrenchParser) for p in refused.parsers), refused.parsers


def test_unknown_options_still_reach_nbgrader(parse_only):
    """autograde and feedback pass the options they do not know to nbgrader."""
    for name in ("autograde", "feedback"):
        seen = parse_only(name, ["oublier", "--force", "--student=ana", UNKNOWN])
        assert seen.accepted is not None, seen
        args, extra = seen.accepted.result
        assert args.assignment == "oublier" and args.force, args
        assert extra == ["--student=ana", UNKNOWN]
        # an abbreviation of the command's own option is refused, not passed on
        for argv in (["--grader", "/ailleurs"], ["--forc"], ["--grader-d=/ailleurs"]):
            refused = parse_only(name, ["oublier", *argv])
            assert refused.code == 2 and refused.accepted is None, (name, argv, refused)
            assert "option abrégée --" in refused.err and "écrivez --" in refused.err, refused.err
            _assert_french(refused.err, f"grading.{name} {argv}")


def test_a_check_after_parsing_speaks_french_too(capsys, tmp_path):
    """autograde's own check of --jobs, made once the line is read (before any grading):
    the same French error, status 2."""
    from grading.autograde import main

    with pytest.raises(SystemExit) as stop:
        main(["oublier", "--jobs", "0", "--grader-dir", str(tmp_path / "absent")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "--jobs doit valoir au moins 1" in err, err
    _assert_french(err, "grading.autograde --jobs 0")


def test_no_command_builds_an_english_parser():
    """The control: a command switched back to ``argparse.ArgumentParser`` is found here even
    if its main is not (yet) a command this test calls."""
    english = [
        f"{path.name}:{number}"
        for path in sorted(GRADING.glob("*.py"))
        if path.name != "french_args.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bArgumentParser\(", line)
    ]
    assert not english, english


def _refusal_line(done) -> str:  # noqa: ANN001
    """The one « ✘ » line of a refused command line (status 2)."""
    assert done.returncode == 2, done.stdout + done.stderr
    return next(line for line in done.stderr.splitlines() if line.startswith("✘ "))


def test_a_refused_make_variable_is_named_as_typed(tmp_path):
    """``make grade JOBS=deux``, ``make sauvegarde GARDER_JOURS=7j``: the refusal names the
    variable the teacher typed, not the option make gave the command in its place (it said
    « l'option --jobs »). Typed by hand, the command still names its option, and so does make
    when the option comes twice (JOBS and ARGS: which one is wrong is not known). Started by
    make as typed, on a copy of the course (NOTATION)."""
    grader = copy_course(tmp_path)
    at = f"NOTATION={grader}"
    autograde = "python -m grading.autograde"
    help_ = f". Aide\u00a0: {autograde} --help"
    backup = "python -m grading.backup sauvegarder"
    assert _refusal_line(make(REPO, "grade", "JOBS=deux", at)) == (
        f"✘ {autograde}\u00a0: JOBS attend un nombre entier, pas «\u00a0deux\u00a0»{help_}"
    )
    assert _refusal_line(make(REPO, "sauvegarde", "GARDER_JOURS=7j", at)) == (
        f"✘ {backup}\u00a0: GARDER_JOURS attend un nombre, pas «\u00a07j\u00a0». "
        f"Aide\u00a0: {backup} --help"
    )
    by_option = (
        f"✘ {autograde}\u00a0: l'option --jobs attend un nombre entier, pas «\u00a0deux\u00a0»"
    )
    assert _refusal_line(run_grading(grader, "autograde", "--jobs", "deux")) == by_option + help_
    twice = make(REPO, "grade", "JOBS=2", "ARGS=--jobs deux", at)
    assert _refusal_line(twice) == by_option + help_


def test_every_option_make_gives_from_a_variable_is_in_its_list():
    """grader/grader.mk gives an option its value from a make variable through one function,
    `$(call option,VARIABLE)`, whose list the command is told: an option written in a recipe
    as « $(if $(X),--option $(X)) » would be refused under its own name, not X's."""
    lines = (REPO / "grader" / "grader.mk").read_text(encoding="utf-8").splitlines()
    text = "\n".join(line for line in lines if not line.startswith("#"))
    assert re.findall(r"--[a-z-]+[ =]\$\((\w+)\)", text) == []
    for variable in re.findall(r"\$\(call option,(\w+)\)", text):
        assert re.search(rf"\b{variable}=--[a-z-]+\b", text), variable
