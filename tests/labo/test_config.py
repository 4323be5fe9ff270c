"""nbgrader configuration, make targets and the out-of-kernel grading hooks, without nbgrader's
command line (the slow end-to-end test runs the real commands)."""

from __future__ import annotations

import os
import subprocess

import nbformat
from grading.samples import build_submission
from traitlets.config.loader import PyFileConfigLoader

from course.labo import ENV_OUT_OF_KERNEL
from course.labo.nbgrader_hooks import (
    PLACEHOLDER,
    ApplyOutOfKernelGrading,
    StartOutOfKernelGrading,
)


def _config(repo_root):
    return PyFileConfigLoader("nbgrader_config.py", path=str(repo_root / "grader")).load_config()


def test_course_layout_and_gradebook_place(repo_root):
    c = _config(repo_root)
    assert c.CourseDirectory.root == str(repo_root)
    assert c.CourseDirectory.source_directory == "solutions"
    assert c.CourseDirectory.release_directory == "notebooks"
    assert c.CourseDirectory.db_url == f"sqlite:///{repo_root / 'grader' / 'gradebook.db'}"
    for step in ("submitted", "autograded", "feedback"):
        assert getattr(c.CourseDirectory, f"{step}_directory") == f"grader/{step}"
    ignored = (repo_root / ".gitignore").read_text()
    for path in (
        "grader/gradebook.db",
        "grader/submitted/",
        "grader/autograded/",
        "grader/feedback/",
        "grader/rapport/",
    ):
        assert path in ignored


def test_execution_never_drops_a_submission_nor_leaks_hidden_tests(repo_root):
    c = _config(repo_root)
    assert c.Execute.raise_on_iopub_timeout is False
    assert 0 < c.Execute.timeout <= 60
    assert "--InteractiveShell.xmode=Minimal" in c.Execute.extra_arguments
    assert "nbgrader.preprocessors.ClearHiddenTests" in c.GenerateFeedback.preprocessors
    chain = c.Autograde.autograde_preprocessors
    execute = chain.index("nbgrader.preprocessors.Execute")
    assert chain[execute - 1].endswith("StartOutOfKernelGrading")
    assert chain[execute + 1].endswith("ApplyOutOfKernelGrading")
    assert chain.index("nbgrader.preprocessors.SaveAutoGrades") > execute + 1


def test_make_notebooks_regenerates_every_assignment_without_a_gradebook(repo_root):
    dry = subprocess.run(
        ["make", "-n", "notebooks"], cwd=repo_root, capture_output=True, text=True, check=True
    ).stdout
    assert "generate_assignment" in dry and "--force" in dry
    assert "CourseDirectory.db_url" in dry and "mktemp" in dry
    assert "cd grader" in dry
    assert "for a in" in dry and "oublier" in dry


def test_hooks_grade_out_of_kernel_and_restore_student_cells(repo_root, sample_answers):
    nb = build_submission(
        repo_root / "notebooks" / "oublier" / "oublier.ipynb", sample_answers["graine"]
    )
    resources: dict = {}
    nb, resources = StartOutOfKernelGrading().preprocess(nb, resources)
    try:
        assert os.environ[ENV_OUT_OF_KERNEL] == "1"  # the kernel would inherit this
        cells = {c.id: c for c in nb.cells}
        assert cells["oublier"].source == PLACEHOLDER  # the kernel never sees student code
        assert cells["explorer"].source == "" and cells["verifier"].source == ""
        assert cells["imports"].source == ""  # the placeholder imports what the tests need
        assert "noter(oublier" in cells["test-sessions"].source  # tests are left alone
    finally:
        nb, resources = ApplyOutOfKernelGrading().preprocess(nb, resources)
    assert ENV_OUT_OF_KERNEL not in os.environ
    cells = {c.id: c for c in nb.cells}
    assert cells["oublier"].source.startswith("async def oublier")
    assert "for s in (await service.list_sessions" in cells["oublier"].source
    assert "hors du noyau" in cells["oublier"].outputs[0].text
    assert "from course.tuteur import APP_NAME" in cells["imports"].source
    assert cells["test-sessions"].outputs[0].output_type == "stream"
    failed = cells["test-user-states"].outputs[0]
    assert failed.output_type == "error" and "user_states" in failed.evalue


def test_other_notebooks_pass_through(repo_root):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    resources: dict = {}
    nb, resources = StartOutOfKernelGrading().preprocess(nb, resources)
    assert nb.cells[0].source == "x = 1" and ENV_OUT_OF_KERNEL not in os.environ
    nb, resources = ApplyOutOfKernelGrading().preprocess(nb, resources)
    assert nb.cells[0].source == "x = 1" and resources == {}


def test_runner_app_name_is_the_tutor_s():
    from course.labo.runner import APP_NAME
    from course.tuteur import APP_NAME as TUTOR_APP

    assert APP_NAME == TUTOR_APP
