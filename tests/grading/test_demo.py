"""The demo never takes a folder it did not create (the full demo run, next to a real class, is
in test_cycle_fresh_clone.py)."""

from __future__ import annotations

import pytest
from grading_course import copy_course, grading, tree_digest

pytestmark = pytest.mark.slow  # nbgrader, kernels or the sandbox: not in make test-fast


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
