"""Benchmark: what the grading sandbox costs per submission, the same answers graded as the hooks
do with and without it, alternately so that both see the same machine load."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from course.labo.evaluate import evaluate_source
from course.labo.fixture import fixture_bytes
from course.labo.sandbox import sandbox_problem
from course.labo.scenario import VISIBLE

from .french.french_args import FrenchParser
from .nbgrader_ext.hidden import HIDDEN

__all__ = ["main"]

SAMPLES = Path(__file__).resolve().parents[1] / "submissions"
ANSWERS = ("complete_vacuum", "graine", "user_states_sans_where")


def _seconds(source: str, sandboxed: bool) -> float:
    start = time.monotonic()
    evaluate_source(source, scenarios=(VISIBLE, HIDDEN), sandboxed=sandboxed)
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.sandbox_bench",
        description="Banc d'essai\u00a0: ce que coûte le bac à sable de la notation, en "
        "secondes par rendu (les mêmes rendus notés avec et sans).",
    )
    parser.add_argument(
        "--submissions", type=int, metavar="N", default=10, help="rendus notés (défaut\u00a0: 10)"
    )
    args = parser.parse_args(argv)
    if problem := sandbox_problem():
        raise SystemExit(problem)
    fixture_bytes(), fixture_bytes(HIDDEN.extra_learners)  # built once per process, not timed
    sources = [(SAMPLES / f"{name}.py").read_text(encoding="utf-8") for name in ANSWERS]
    inside, outside = [], []
    for k in range(args.submissions):
        source = sources[k % len(sources)]
        inside.append(_seconds(source, sandboxed=True))
        outside.append(_seconds(source, sandboxed=False))
    with_box, without = statistics.mean(inside), statistics.mean(outside)
    cost, ratio = with_box - without, with_box / without
    print(f"\nnotation hors du noyau, {args.submissions} rendus, deux scénarios chacun\u00a0:")
    print(f"  sans bac à sable\u00a0: {without:.2f}\u00a0s par rendu")
    print(f"  dans le bac à sable\u00a0: {with_box:.2f}\u00a0s par rendu")
    print(f"  coût du bac à sable\u00a0: {cost:+.2f}\u00a0s par rendu ({ratio:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
