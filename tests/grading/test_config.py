"""nbgrader configuration, make targets and the out-of-kernel grading hooks, without nbgrader's
command line (the slow end-to-end test runs the real commands)."""

from __future__ import annotations

import os
import shutil
import subprocess

import nbformat
import pytest
from grading.nbgrader_ext.hooks import (
    ApplyOutOfKernelGrading,
    ExecuteOutsideTheLab,
    NotRebuilt,
    RebuildFromRelease,
    SandboxUnavailable,
    StartOutOfKernelGrading,
)
from grading.nbgrader_ext.outcome_record import METADATA_KEY
from grading.nbgrader_ext.sandbox_setting import NO_SANDBOX_ENV
from grading.samples import build_submission
from helpers import REPO, tp_points
from nbconvert.preprocessors import ClearMetadataPreprocessor
from traitlets.config.loader import PyFileConfigLoader

from course.labo.sandbox import sandbox_problem

# every automatic test of the TP passed: the criteria table's points (helpers.tp_points)
FULL = tp_points()[0]

LAB = {"nbgrader": {"assignment": "oublier", "notebook": "oublier", "student": "x"}}


def _resources() -> dict:
    return {"nbgrader": dict(LAB["nbgrader"])}


def _graded(nb, config=None) -> tuple:
    """The notebook through the hooks as nbgrader chains them (the kernel step included)."""
    nb, resources = RebuildFromRelease(config=config).preprocess(nb, _resources())
    nb, resources = StartOutOfKernelGrading().preprocess(nb, resources)
    nb, resources = ExecuteOutsideTheLab().preprocess(nb, resources)
    return ApplyOutOfKernelGrading().preprocess(nb, resources)


def _config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(REPO / "grader")).load_config()


def test_course_layout_and_gradebook_place():
    c = _config()
    assert c.CourseDirectory.root == str(REPO)
    assert c.CourseDirectory.source_directory == "solutions"
    assert c.CourseDirectory.release_directory == "notebooks"
    assert c.CourseDirectory.db_url == f"sqlite:///{REPO / 'grader' / 'gradebook.db'}"
    for step in ("submitted", "autograded", "feedback"):
        assert getattr(c.CourseDirectory, f"{step}_directory") == f"grader/{step}"
    ignored = (REPO / ".gitignore").read_text()
    for path in (
        "grader/gradebook.db",
        "grader/submitted/",
        "grader/autograded/",
        "grader/feedback/",
        "grader/rapport/",
    ):
        assert path in ignored


def test_execution_never_drops_a_submission_nor_leaks_hidden_tests():
    c = _config()
    assert c.Execute.raise_on_iopub_timeout is False
    assert 0 < c.Execute.timeout <= 60
    assert "--InteractiveShell.xmode=Minimal" in c.Execute.extra_arguments
    assert "nbgrader.preprocessors.ClearHiddenTests" in c.GenerateFeedback.preprocessors
    chain = c.Autograde.autograde_preprocessors
    execute = chain.index("grading.nbgrader_ext.hooks.ExecuteOutsideTheLab")
    assert "nbgrader.preprocessors.Execute" not in chain
    assert chain[execute - 1] == "grading.nbgrader_ext.hooks.StartOutOfKernelGrading"
    assert chain[execute + 1] == "grading.nbgrader_ext.hooks.ApplyOutOfKernelGrading"
    assert chain.index("nbgrader.preprocessors.SaveAutoGrades") > execute + 1
    sanitize = c.Autograde.sanitize_preprocessors
    assert (
        sanitize[0] == "grading.nbgrader_ext.hooks.RebuildFromRelease"
    )  # before DeduplicateIds reads ids
    assert sanitize.index("nbgrader.preprocessors.DeduplicateIds") > 0
    assert sanitize[-1] == "nbgrader.preprocessors.CheckCellMetadata"


def test_make_notebooks_regenerates_every_assignment_without_a_gradebook():
    dry = subprocess.run(
        ["make", "-n", "notebooks"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert "generate_assignment" in dry and "--force" in dry
    assert "CourseDirectory.db_url" in dry and "mktemp" in dry
    assert "cd 'grader'" in dry
    # every assignment of solutions/ in one nbgrader run: its id is a glob
    assert "generate_assignment '*'" in dry


@pytest.mark.slow
def test_make_notebooks_and_recommencer_in_a_checkout_whose_path_the_shell_could_run(
    tmp_path,
):
    """The course's commands run the venv's nbgrader and python by their absolute paths, which
    hold the checkout's: each one single-quoted word (`$(call q,…)`), `make notebooks` generates
    the TP and `make recommencer LECON=04` restarts lesson 4 in a folder named with a space, a ",
    an accent, a ' and a $( (inside "…", the shell ran it: error 127), and nothing it holds runs.
    tests/test_packaging.py checks every target's commands; these two run for real."""
    from grading_course import VENV, copy_course

    checkout = tmp_path / 'cours $(touch canari) "x" d\'Éloïse'
    copy_course(checkout)
    for name in ("Makefile", "grader/grader.mk"):
        shutil.copy(REPO / name, checkout / name)
    (checkout / ".venv").symlink_to(VENV)  # the default VENV, inside the checkout
    lessons = checkout / "notebooks" / "lecons"
    lessons.mkdir(parents=True)
    (lessons / "lecon04.db").write_bytes(b"")  # what lesson 4 makes, and another lesson's
    (lessons / "lecon05.db").write_bytes(b"")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env["COURS_PROGRES_DB"] = str(tmp_path / "progression.db")  # not the tester's own
    make = ["make", "--no-print-directory", "--old-file=.venv/.stamp-runtime"]
    done = subprocess.run(
        [*make, "notebooks"], cwd=checkout, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    released = nbformat.read(checkout / "notebooks" / "oublier" / "oublier.ipynb", as_version=4)
    assert any("async def oublier(" in cell.source for cell in released.cells)
    again = subprocess.run(
        [*make, "recommencer", "LECON=04"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Leçon 4 recommencée\u00a0: fichiers supprimés\u00a0: lecon04.db" in again.stdout
    assert sorted(p.name for p in lessons.iterdir()) == ["lecon05.db"]
    assert not list(tmp_path.rglob("canari"))


def test_hooks_grade_the_answer_out_of_kernel_on_the_release(sample_answers, expected_scores):
    assert sandbox_problem() is None, sandbox_problem()
    nb = build_submission(
        REPO / "notebooks" / "oublier" / "oublier.ipynb", sample_answers["graine"]
    )
    nb.cells.insert(3, nbformat.v4.new_code_cell("print('ajoutée')"))  # a cell of the student's
    next(c for c in nb.cells if c.id == "explorer").source = "print('modifiée')"
    nb, _ = _graded(nb, _config())
    cells = {c.id: c for c in nb.cells}
    release = nbformat.read(REPO / "notebooks" / "oublier" / "oublier.ipynb", 4)
    assert [c.id for c in nb.cells] == [c.id for c in release.cells]  # the added cell is gone
    assert cells["explorer"].source == next(c for c in release.cells if c.id == "explorer").source
    assert cells["oublier"].source.startswith("async def oublier")
    assert "for s in (await service.list_sessions" in cells["oublier"].source
    assert "hors du noyau" in cells["oublier"].outputs[0].text
    assert "from course.tuteur import APP_NAME" in cells["imports"].source
    assert cells["imports"].get("execution_count") is None  # the kernel ran nothing
    assert cells["test-sessions"].outputs[0].output_type == "stream"
    failed = cells["test-user-states"].outputs[0]
    assert failed.output_type == "error" and "user_states" in failed.evalue
    assert nb.metadata[METADATA_KEY] == {
        "outcome": "graded",
        "detail": nb.metadata[METADATA_KEY]["detail"],
    }
    graine = expected_scores["graine"]["score"]
    assert nb.metadata[METADATA_KEY]["detail"].startswith(f"Noté\u00a0: {graine}/{FULL} points")
    assert "dans le bac à sable" in nb.metadata[METADATA_KEY]["detail"]


def test_grading_refuses_a_lab_notebook_that_was_not_rebuilt(sample_answers):
    """Without RebuildFromRelease in the sanitizing step (a configuration mistake), grading a
    notebook of the TP's assignment stops rather than trusting its cells."""
    nb = build_submission(
        REPO / "notebooks" / "oublier" / "oublier.ipynb", sample_answers["graine"]
    )
    nb.metadata[METADATA_KEY] = {"answer": "forgé"}
    with pytest.raises(NotRebuilt, match="RebuildFromRelease"):
        StartOutOfKernelGrading().preprocess(nb, _resources())


def test_grading_outcome_survives_nbgrader_s_metadata_clearing():
    """The autograded notebook keeps ``course_grading`` for the class report, with the mask of
    nbgrader_config.py (nbconvert's default would drop it)."""
    nb = nbformat.v4.new_notebook(
        metadata={
            METADATA_KEY: {"outcome": "timeout", "detail": "oublier n'a pas terminé"},
            "language_info": {"name": "python", "version": "3.11"},
            "autre": {"x": 1},
        }
    )
    cleared, _ = ClearMetadataPreprocessor(config=_config()).preprocess(nb, {})
    assert cleared.metadata == {
        METADATA_KEY: {"outcome": "timeout", "detail": "oublier n'a pas terminé"},
        "language_info": {"name": "python"},
    }
    default, _ = ClearMetadataPreprocessor().preprocess(nbformat.from_dict(nb), {})
    assert METADATA_KEY not in default.metadata  # the mask is what keeps it


def test_grading_refuses_without_sandbox_unless_asked(tmp_path, monkeypatch):
    """No bubblewrap on PATH: the hook stops with what to install; the unsafe switch grades."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("prlimit", "setpriv"):
        (tools / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.delenv(NO_SANDBOX_ENV, raising=False)
    sandbox_problem.cache_clear()
    nb = build_submission(
        REPO / "notebooks" / "oublier" / "oublier.ipynb", "async def oublier(s, u):\n    pass"
    )
    try:
        rebuilt, _ = RebuildFromRelease(config=_config()).preprocess(nb, _resources())
        with pytest.raises(SandboxUnavailable) as refused:
            StartOutOfKernelGrading().preprocess(nbformat.from_dict(rebuilt), _resources())
        message = str(refused.value)
        assert "bwrap introuvable" in message and "installez le paquet bubblewrap" in message
        assert "--sans-bac-a-sable" in message and f"{NO_SANDBOX_ENV}=1" in message
        monkeypatch.setenv(NO_SANDBOX_ENV, "1")
        graded, _ = _graded(nbformat.from_dict(nb), _config())
        assert graded.metadata[METADATA_KEY]["outcome"] == "graded"
        assert "sans bac à sable" in graded.metadata[METADATA_KEY]["detail"]
    finally:
        sandbox_problem.cache_clear()


def test_other_assignments_pass_through():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    other = {"nbgrader": {"assignment": "autre", "notebook": "autre", "student": "x"}}
    for hook in (RebuildFromRelease(), StartOutOfKernelGrading(), ApplyOutOfKernelGrading()):
        nb, resources = hook.preprocess(nb, other)
        assert nb.cells[0].source == "x = 1" and resources == other


def test_runner_gives_the_cell_what_the_first_cell_imports():
    """The student's cell runs with the names the notebook's first cell imports, no more."""
    import ast

    from course.labo.submission_runner import PRELUDE

    nb = nbformat.read(REPO / "notebooks" / "oublier" / "oublier.ipynb", 4)
    imports = next(c for c in nb.cells if c.id == "imports")
    bound = {
        alias.asname or alias.name
        for node in ast.parse(imports.source).body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    learner_api = {"base_exemple", "noter", "verifier"}
    assert set(PRELUDE) == bound - learner_api
