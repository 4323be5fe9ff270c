"""Grades the escape attempts of grader/submissions/evasion_*.py, with their targets, and a
complete answer in the same run; prints the scores as JSON.

Run in the test process (as root) or as an unprivileged user (``python evasions.py < CONFIG``,
from a copy this user can read), always with the interpreter of an environment where the
course is installed. CONFIG (JSON): ``sources`` (sample -> cell text, targets included),
``complete`` (the complete answer), ``grader`` (a folder holding ``grading/``, for the hidden
scenario), ``sandboxed``, and ``attacks`` (sample -> cell text: graded on both scenarios, as the
hooks grade them, with the messages a feedback page would show).
"""

from __future__ import annotations

import json
import sys
from concurrent.futures import ThreadPoolExecutor

__all__ = ["grade_escapes", "with_target"]


def with_target(source: str, target: object) -> str:
    """The sample with its target: a later top-level assignment wins over the sample's own."""
    return f"{source}\nCIBLE = {target!r}\n" if target is not None else source


def grade_escapes(config: dict) -> dict:
    if config["grader"] not in sys.path:
        sys.path.insert(0, config["grader"])
    from grading.nbgrader_ext.hidden import HIDDEN

    from course.labo.evaluate import evaluate_source
    from course.labo.sandbox import sandbox_problem
    from course.labo.scenario import VISIBLE

    sandboxed = config["sandboxed"]

    def grade(item):
        name, source, scenarios = item
        evaluation = evaluate_source(source, scenarios=scenarios, sandboxed=sandboxed)
        return name, {
            "score": evaluation.score,
            "max": evaluation.max_score,
            "outcome": evaluation.outcome()[0],
        }

    def attack(item):
        name, source = item
        evaluation = evaluate_source(source, scenarios=(VISIBLE, HIDDEN), sandboxed=sandboxed)
        messages = [
            v.message for verdicts in evaluation.criteria.values() for v in verdicts.values()
        ]
        messages += [evaluation.outcome()[1], evaluation.load_error or ""]
        return name, {
            "score": evaluation.score,
            "outcome": evaluation.outcome()[0],
            "failed": sorted(t for t, v in evaluation.verdicts.items() if not v.ok),
            "messages": messages,
        }

    items = [(name, src, (VISIBLE,)) for name, src in config["sources"].items()]
    items.append(("complete", config["complete"], (VISIBLE, HIDDEN)))
    with ThreadPoolExecutor(max_workers=2) as pool:
        scores = dict(pool.map(grade, items))
        attacks = dict(pool.map(attack, config.get("attacks", {}).items()))
    return {"sandbox_problem": sandbox_problem(), "scores": scores, "attacks": attacks}


if __name__ == "__main__":
    print(json.dumps(grade_escapes(json.load(sys.stdin))))
