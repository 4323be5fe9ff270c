"""The grading settings at the seam with ``course.labo``, without running nbgrader: the sandbox
and the time limit are nbgrader configurables whose defaults come from the documented switches,
and the nbgrader flags the class tools read are read as nbgrader reads them."""

from __future__ import annotations

import pytest
from grading.french.system_reason import GradingError
from grading.nbgrader_ext.hooks import StartOutOfKernelGrading
from grading.nbgrader_ext.sandbox_setting import NO_SANDBOX_ENV, refusal
from grading.runs.nbgrader_run import nbgrader_env, student_pattern, with_force
from traitlets.config import Config

from course.labo.evaluate import DEFAULT_TIMEOUT


def test_the_sandbox_setting_has_one_name_and_its_switch(monkeypatch):
    monkeypatch.delenv(NO_SANDBOX_ENV, raising=False)
    monkeypatch.delenv("COURSE_LABO_TIMEOUT", raising=False)
    hook = StartOutOfKernelGrading()
    assert hook.sandboxed is True and hook.timeout == DEFAULT_TIMEOUT
    assert NO_SANDBOX_ENV not in nbgrader_env()
    assert nbgrader_env(sandboxed=False)[NO_SANDBOX_ENV] == "1"
    monkeypatch.setenv(NO_SANDBOX_ENV, "1")
    monkeypatch.setenv("COURSE_LABO_TIMEOUT", "4.5")
    hook = StartOutOfKernelGrading()
    assert hook.sandboxed is False and hook.timeout == 4.5
    config = Config()
    config.StartOutOfKernelGrading.sandboxed = True  # the configuration wins over the switch
    assert StartOutOfKernelGrading(config=config).sandboxed is True
    traits = StartOutOfKernelGrading.class_traits(config=True)
    assert (
        "bac à sable" in traits["sandboxed"].help
        and "COURSE_LABO_TIMEOUT" in traits["timeout"].help
    )


def test_one_refusal_says_how_to_grade_anyway():
    message = refusal("Le bac à sable manque.")
    assert message.startswith("Le bac à sable manque. ")
    assert "--sans-bac-a-sable" in message and "SANS_BAC_A_SABLE=1" in message
    assert f"{NO_SANDBOX_ENV}=1" in message


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        ((), None),
        (("--student", "a*"), "a*"),
        (("--student=b*",), "b*"),
        (("--student=d", "--CourseDirectory.student_id", "d"), "d"),  # the same one twice
        (("--student",), None),  # no value: nbgrader will say so
        (("--students=x",), None),
    ],
)
def test_student_pattern_is_read_as_nbgrader_reads_it(args, pattern):
    assert student_pattern(args) == pattern


@pytest.mark.parametrize(
    "args",
    [("--student=ana", "--student=ben"), ("--CourseDirectory.student_id=c", "--student", "d")],
)
def test_two_student_patterns_are_refused_nbgrader_would_grade_the_last_only(args):
    with pytest.raises(GradingError) as refused:
        student_pattern(args)
    assert "plusieurs fois" in str(refused.value) and "--student='ana*'" in str(refused.value)


def test_force_from_either_side():
    assert with_force((), False) == (False, ())
    assert with_force((), True) == (True, ("--force",))
    assert with_force(("-f",), False) == (True, ("-f", "--force"))
    assert with_force(("--force",), False) == (True, ("--force",))
