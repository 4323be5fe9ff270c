"""The instructor's side of the TP's grading: never installed, never readable by students.

Loaded from this folder (``grader/nbgrader_config.py`` puts ``grader/`` on ``sys.path``); the
installed ``course`` package holds only what students may read and run.
"""

__all__: list[str] = []
