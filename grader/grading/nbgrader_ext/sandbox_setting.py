"""Whether grading runs student code in the sandbox: one setting, one way off, one refusal.

The setting is ``StartOutOfKernelGrading.sandboxed`` (``hooks``), an nbgrader configurable; its
default reads ``NO_SANDBOX_ENV``, which the class tools' ``--sans-bac-a-sable`` (``make grade
SANS_BAC_A_SABLE=1``) sets for the nbgrader commands they start. ``course.labo`` only takes
``sandboxed=`` as an argument.
"""

from __future__ import annotations

__all__ = ["NO_SANDBOX_ENV", "SANDBOXED_HELP", "SandboxUnavailable", "refusal"]

NO_SANDBOX_ENV = "COURSE_GRADING_NO_SANDBOX"
SANDBOXED_HELP = (
    "Exécuter le code des élèves du TP dans le bac à sable bubblewrap (course.labo.sandbox). "
    "False est DANGEREUX\u00a0: leur code aurait tous les droits du correcteur. Par "
    f"défaut\u00a0: True, sauf si {NO_SANDBOX_ENV}=1 (ce que posent --sans-bac-a-sable et "
    "make grade SANS_BAC_A_SABLE=1)."
)


class SandboxUnavailable(RuntimeError):
    """Grading refused: no usable sandbox and no explicit unsafe mode."""


def refusal(problem: str) -> str:
    """The French refusal: why the sandbox is unusable here, and how to grade anyway."""
    return (
        f"{problem} La notation refuse d'exécuter le code des élèves sans bac à sable. "
        "Pour noter quand même, à vos risques (leur code aurait alors tous vos droits), "
        f"lancez-la avec --sans-bac-a-sable (make grade SANS_BAC_A_SABLE=1), qui pose "
        f"{NO_SANDBOX_ENV}=1."
    )
