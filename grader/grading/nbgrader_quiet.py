"""An nbgrader command whose English log goes to a file, never to the teacher's terminal.

``nbgrader db assignment add``, ``nbgrader export`` print only their own English INFO lines;
the class tools run them through :func:`run_quiet`, keep the whole log in
``rapport/<name>.log`` and print their own French summary. On a failure the summary names
nbgrader's last error line and the log.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .french_args import FrenchParser
from .nbgrader_log import LOG_RECORD
from .nbgrader_run import BIN, nbgrader_env
from .system_reason import french_message

__all__ = ["QuietRun", "assignment_command", "finish", "run_quiet"]


@dataclass
class QuietRun:
    """How an nbgrader command ended, and where its log is."""

    status: int
    log_path: Path
    log: str

    @property
    def last_error(self) -> str:
        """nbgrader's last ERROR or CRITICAL line, else the log's last line ("" if empty)."""
        errors = [
            m["text"]
            for m in map(LOG_RECORD.match, self.log.splitlines())
            if m and m["level"] in ("ERROR", "CRITICAL")
        ]
        lines = [line for line in self.log.splitlines() if line.strip()]
        return errors[-1] if errors else (lines[-1] if lines else "")

    def failure(self, what: str) -> str:
        """One French sentence for a failed run: what failed, nbgrader's reason, the log."""
        reason = self.last_error
        reason = f"\u00a0: {reason.rstrip('.')}" if reason else ""
        return (
            f"✘ {what}\u00a0: nbgrader s'est arrêté en erreur (code {self.status}){reason}. "
            f"Journal complet\u00a0: {self.log_path}"
        )


def run_quiet(grader_dir: Path, args: list[str], log_name: str) -> QuietRun:
    """Run ``nbgrader <args>`` in `grader_dir`; its output goes to ``rapport/<log_name>.log``."""
    if not grader_dir.is_dir():
        raise FileNotFoundError(f"dossier du cours introuvable\u00a0: {grader_dir}")
    log_dir = grader_dir / "rapport"
    log_dir.mkdir(exist_ok=True)
    log_path = log_dir / f"{log_name}.log"
    proc = subprocess.run(
        [str(BIN / "nbgrader"), *args],
        cwd=grader_dir,
        env=nbgrader_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    log_path.write_text(proc.stdout, encoding="utf-8")
    return QuietRun(proc.returncode, log_path, proc.stdout)


def finish(parser: argparse.ArgumentParser, run: Callable[[], tuple[int, list[str]]]) -> int:
    """Run a class command, print its French summary (on stderr if it failed), return its
    status; a missing course folder is one French line, status 2."""
    try:
        status, lines = run()
    except FileNotFoundError as exc:  # no course there: one French sentence, no traceback
        print(f"✘ {parser.prog}\u00a0: {french_message(exc)}", file=sys.stderr)
        return 2
    print("\n".join(lines), file=sys.stderr if status else sys.stdout)
    return status


def assignment_command(
    argv: list[str] | None,
    prog: str,
    description: str,
    command: Callable[[str, list[str], Path | None], tuple[int, list[str]]],
) -> int:
    """The command line of a class command run on one assignment: its French parser, every
    option it does not know passed to nbgrader, its summary printed by :func:`finish`."""
    parser = FrenchParser(prog=prog, description=description)
    parser.add_argument("assignment", metavar="DEVOIR", help="le devoir, par exemple oublier")
    parser.add_grader_dir()
    args, extra = parser.parse_known_args(argv)
    return finish(parser, lambda: command(args.assignment, extra, args.grader_dir))
