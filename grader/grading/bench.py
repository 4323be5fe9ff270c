"""``make bench-grading``: autograde's cost for this lab against a one-cell assignment with
nbgrader's default configuration (goal: at most 1.5x), and the speed-up of ``--jobs``."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from .autograde import autograde
from .classroom.paths import CONFIG, CourseDirs, course_dirs
from .demo import demo_config
from .french.french_args import FrenchParser
from .french.system_reason import french_message
from .runs.nbgrader_run import run_quiet
from .samples import build_submission, samples

__all__ = ["main"]

# the samples that hit the time limit on purpose: each would cost its 10 s
SLOW_ON_PURPOSE = {"boucle_infinie", "sommeil", "essai_bloquant"}


def _nbgrader(grader: Path, *args: str) -> None:
    run = run_quiet(grader, [*args, "--log-level=WARN"], grader / f"{args[0]}.log")
    if run.status != 0:
        raise SystemExit(run.failure(f"nbgrader {args[0]} du banc d'essai"))


def _submit(grader: Path, assignment: str, notebooks: list[nbformat.NotebookNode]) -> Path:
    """One registered student per notebook, who submitted it."""
    students = [f"eleve{k:03d}" for k in range(len(notebooks))]
    for student, nb in zip(students, notebooks, strict=True):
        folder = grader / "submitted" / student / assignment
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{assignment}.ipynb")
    (grader / "eleves.csv").write_text("id\n" + "".join(f"{s}\n" for s in students))
    _nbgrader(grader, "db", "student", "import", "eleves.csv")
    return grader


def _lab_course(course: CourseDirs, base: Path, n: int) -> Path:
    """The course's own configuration, its folders in `base` (as ``make demo-grading``)."""
    grader = base / "labo"
    grader.mkdir()
    config = demo_config(course.grader_dir / CONFIG, grader, course.root)
    (grader / CONFIG).write_text(config, encoding="utf-8")
    _nbgrader(grader, "generate_assignment", "oublier")
    answers = [text for name, text in samples(course.root).items() if name not in SLOW_ON_PURPOSE]
    release = grader / "release" / "oublier" / "oublier.ipynb"
    notebooks = [build_submission(release, answers[k % len(answers)]) for k in range(n)]
    return _submit(grader, "oublier", notebooks)


def _trivial_course(base: Path, n: int) -> Path:
    root = base / "trivial"
    source = root / "source" / "trivial"
    source.mkdir(parents=True)
    grading = dict(grade_id="unique", solution=True, grade=True, points=1, locked=False)
    cell = new_code_cell(
        "### BEGIN SOLUTION\nx = 1\n### END SOLUTION\nassert x == 1",
        metadata={"nbgrader": {**grading, "schema_version": 3}},
    )
    kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    nbformat.write(new_notebook(cells=[cell], metadata=kernel), source / "trivial.ipynb")
    (root / "nbgrader_config.py").write_text("c = get_config()\n")
    _nbgrader(root, "generate_assignment", "trivial")
    release = nbformat.read(root / "release" / "trivial" / "trivial.ipynb", as_version=4)
    return _submit(root, "trivial", [release] * n)


def _timed(assignment: str, grader: Path, jobs: int = 1, force: bool = False) -> float:
    start = time.monotonic()
    summary = autograde(assignment, grader, jobs, force=force)
    if not summary.ok:
        raise SystemExit("\n".join(summary.lines(assignment)))
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.bench",
        description="Banc d'essai\u00a0: le coût de la notation du TP oublier face à un devoir "
        "trivial d'une cellule (nbgrader tel quel), en secondes par rendu.",
    )
    for option, default, text in (
        ("--submissions", 30, "rendus par devoir"),
        ("--jobs", 1, "processus en parallèle pour une seconde notation du TP"),
    ):
        parser.add_argument(
            option, type=int, metavar="N", default=default, help=f"{text} (défaut\u00a0: {default})"
        )
    args = parser.parse_args(argv)
    n = args.submissions
    try:
        course = course_dirs()
    except FileNotFoundError as exc:
        parser.fail(french_message(exc))
    base = Path(tempfile.mkdtemp(prefix="bench-notation-"))
    try:
        lab = _lab_course(course, base, n)
        trivial = _trivial_course(base, n)
        t_trivial = _timed("trivial", trivial)
        t_lab = _timed("oublier", lab)
        per_trivial, per_lab = t_trivial / n, t_lab / n
        print(f"\nautograde, {n} rendus chacun, un seul processus nbgrader\u00a0:")
        print(f"  devoir trivial (1 cellule, config par défaut) : {per_trivial:.2f} s par rendu")
        print(f"  TP oublier (hors du noyau)                    : {per_lab:.2f} s par rendu")
        print(f"  rapport TP / trivial\u00a0: {per_lab / per_trivial:.2f}x (objectif <= 1.5x)")
        if args.jobs > 1:
            shutil.rmtree(lab / "autograded", ignore_errors=True)
            t_par = _timed("oublier", lab, args.jobs, force=True)
            print(
                f"  TP oublier, {args.jobs} processus\u00a0: {t_par / n:.2f} s par rendu, "
                f"accélération {t_lab / t_par:.2f}x"
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
