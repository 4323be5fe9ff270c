"""The instructor's side of the TP's grading: never installed, never readable by students.

Importable from ``grader/`` only: nbgrader finds it because ``grader/nbgrader_config.py`` puts
its own folder on ``sys.path``; ``python -m grading.<tool>``, run in ``grader/`` (as ``make`` runs
it), because Python puts the current folder first. The installed ``course`` package holds only
what students may read and run.
"""

from .runs.nbgrader_import import defer_package_init

__all__: list[str] = []

# every class command starts here: nbgrader's server extensions only if something asks for them
defer_package_init()
