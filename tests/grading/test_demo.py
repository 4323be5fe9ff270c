"""The demo never takes a folder it did not create (the full demo run, next to a real class, is
in test_cycle_fresh_clone.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from grading_course import copy_course, generated_course, grading, tree_digest

pytestmark = pytest.mark.slow  # nbgrader, kernels or the sandbox: not in make test-fast


@dataclass
class QuestionMarkCheckout:
    """A checkout named « cours ? », alone in its folder, and what the demo did there."""

    grader: Path
    returncode: int
    said: str  # the demo's stdout and stderr
    graded: bool  # the sample's graded copy was there right after the run


@pytest.fixture(scope="module")
def question_mark_checkout(tmp_path_factory) -> QuestionMarkCheckout:
    """The demo graded once for this module by the real command (``python -m grading.demo``,
    what ``make demo-grading`` runs) in a checkout named « cours ? » alone in its folder, what
    the run did recorded right after it. Both tests of « ? » started with this very run:
    test_a_checkout_whose_path_holds_a_question_mark… reads only what was recorded;
    test_a_checkout_named_with_a_question_mark_beside… takes it as its control, then puts a
    copy beside the checkout and grades there again (the one test that writes in it)."""
    base = tmp_path_factory.mktemp("demo-point-d-interrogation")
    grader = generated_course(base / "cours ?" / "cours")
    proc = grading(grader, "demo", "--only", "graine")
    graded = (grader / "demo" / "autograded" / "graine" / "oublier").is_dir()
    return QuestionMarkCheckout(grader, proc.returncode, proc.stdout + proc.stderr, graded)


def test_a_foreign_demo_folder_is_refused_untouched(tmp_path):
    grader = copy_course(tmp_path / "cours")
    foreign = grader / "demo"
    (foreign / "submitted" / "ana" / "oublier").mkdir(parents=True)
    (foreign / "submitted" / "ana" / "oublier" / "oublier.ipynb").write_text("{}")
    (foreign / "nbgrader_config.py").write_text("c = get_config()\n")
    before = tree_digest(foreign)
    proc = grading(grader, "demo", "--only", "complete_vacuum")
    assert proc.returncode == 2
    assert f"{foreign} existe et n'a pas été créé par make demo-grading" in proc.stderr
    assert "rien n'y est touché" in proc.stderr
    assert tree_digest(foreign) == before


def test_the_demo_grades_in_a_checkout_whose_path_holds_a_dollar_and_a_parenthesis(tmp_path):
    """Review of the Makefiles' quoting (5d0fefe: « every target works » in a checkout named
    with a ", a ', a space or a $( ): `make demo-grading` now reaches the tool there, but the
    demo's nbgrader_config.py gives nbgrader its folders as absolute paths, which nbgrader puts
    unescaped into a regular expression: `$(` never matches, « Could not match
    '…/demo/submitted/complete/oublier' with regexp », every sample « en échec », exit 2. The
    control: the same demo in a folder named with a space, an apostrophe and a " grades."""
    for name in ('l\'école "2"', "cours $(id) l'école"):
        grader = generated_course(tmp_path / name / "cours")
        proc = grading(grader, "demo", "--only", "graine")
        out = proc.stdout + proc.stderr
        assert "Could not match" not in (grader / "demo" / "rapport" / "autograde.log").read_text(
            encoding="utf-8"
        ), (name, out)
        assert proc.returncode == 0, (name, out)
        assert (grader / "demo" / "autograded" / "graine" / "oublier").is_dir(), name
    # the class report of the demo, a grading folder without grading/ of its own: nbgrader
    # once imported the report's plugin before the demo's configuration made it importable
    (grader / "demo" / "rapport" / "rapport.html").unlink()
    report = grading(grader, "rapport", "oublier", "--grader-dir", "demo")
    assert report.returncode == 0, report.stdout + report.stderr
    assert "Rapport de «\u00a0oublier\u00a0»\u00a0: 1 élève(s), 1 avec un rendu" in report.stdout
    assert (grader / "demo" / "rapport" / "rapport.html").is_file()


def test_a_checkout_whose_path_holds_a_question_mark_grades_and_brackets_are_refused_in_french(
    question_mark_checkout, tmp_path
):
    """Review3: the demo in a checkout named « cours ? » stopped: its gradebook URL,
    sqlite:///…/cours ?/…, was read by SQLAlchemy as a query from the « ? » on (« le carnet de
    notes est introuvable »); every gradebook URL the course writes is quoted now. « cours
    [2024] », a dated copy, cannot work: nbgrader finds notebooks with a glob of the course's
    path, where « [2024] » is a pattern (« No notebooks were matched »). The course's tools and
    nbgrader itself (nbgrader_config.py) refuse it in French before doing anything. The
    control: « cours 2024 » grades. (« cours ? » is graded by the module's fixture, alone in
    its folder as here: the same run.)"""
    import subprocess
    import sys

    grader = generated_course(tmp_path / "cours 2024" / "cours")
    proc = grading(grader, "demo", "--only", "graine")
    graded = (grader / "demo" / "autograded" / "graine" / "oublier").is_dir()
    question = question_mark_checkout
    failed = {}
    for name, returncode, said, was_graded in (
        ("cours 2024", proc.returncode, proc.stdout + proc.stderr, graded),
        ("cours ?", question.returncode, question.said, question.graded),
    ):
        if returncode != 0 or not was_graded:
            failed[name] = said[-600:]
    assert "cours 2024" not in failed, failed  # the control
    assert failed == {}, failed
    grader = generated_course(tmp_path / "cours [2024]" / "cours")
    nbgrader = [sys.executable, "-m", "nbgrader", "db", "student", "list"]
    for proc in (
        grading(grader, "demo", "--only", "graine"),
        subprocess.run(nbgrader, cwd=grader, capture_output=True, text=True, timeout=120),
    ):
        said = proc.stdout + proc.stderr
        assert proc.returncode != 0, said
        assert "Le chemin du cours contient «\u00a0[\u00a0»" in said, said
        assert "Traceback" not in said, said
    assert not (grader / "demo").exists()


def test_a_checkout_named_with_a_question_mark_beside_another_copy_grades_or_is_refused(
    question_mark_checkout,
):
    """Review4: « cours ? » is accepted since review3's fix, but « ? » is a glob pattern for
    nbgrader as « [ » is: it matches the folder itself only while no sibling matches too. A
    teacher keeps last year's copy beside it (« cours 2 »): nbgrader globs both checkouts'
    solutions and stops on its own English error (« Could not match '…/cours 2/…' with
    regexp »), ``make demo-grading`` exits 2. It should grade, or be refused in French before
    anything runs as « [2024] » is. Control: the same checkout alone grades (the module's
    fixture's run, in this very checkout)."""
    import shutil

    alone = question_mark_checkout
    grader = alone.grader
    assert alone.returncode == 0, alone.said[-1500:]  # the control
    checkout = grader.parent.parent  # « cours ? »
    shutil.copytree(checkout, checkout.with_name("cours 2"), symlinks=True)
    proc = grading(grader, "demo", "--only", "graine")
    said = proc.stdout + proc.stderr
    graded = (grader / "demo" / "autograded" / "graine" / "oublier").is_dir()
    refused = "Le chemin du cours contient" in said and "Traceback" not in said
    assert (proc.returncode == 0 and graded) or refused, said[-1500:]
    assert "cours 2" not in said, said[-1500:]
