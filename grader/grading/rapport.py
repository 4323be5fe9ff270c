"""``make rapport``: the class report through ``nbgrader export`` (``grading.report.rapport``).

python -m grading.rapport oublier
"""

from __future__ import annotations

from .french.french_args import FrenchParser
from .report import rapport
from .runs.nbgrader_quiet import finish

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.rapport",
        description="Rapport de la classe (nbgrader export avec le greffon du cours).",
    )
    parser.add_assignment()
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    return finish(parser, lambda: rapport(args.assignment, args.grader_dir))


if __name__ == "__main__":
    raise SystemExit(main())
