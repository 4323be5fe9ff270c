"""Which plugin ``nbgrader export`` runs (``ExportApp.plugin_class``, set by nbgrader_config.py):
the course's CSV (``safe_export``), or the class report (``grading.report``) when ``make
rapport`` asks through the environment. Not ``--exporter``: nbgrader imports a command-line
plugin before nbgrader_config.py puts ``grading`` on sys.path, so the option worked only in a
folder holding ``grading/`` (not in grader/demo). Light: ``make rapport`` imports it."""

from __future__ import annotations

import os

__all__ = ["CLASS_REPORT_ENV", "export_plugin"]

CLASS_REPORT_ENV = "COURSE_CLASS_REPORT"


def export_plugin() -> str:
    """The plugin's import path: the class report when asked, else the course's CSV."""
    if os.environ.get(CLASS_REPORT_ENV) == "1":
        return "grading.report.ClassReport"
    return "grading.nbgrader_ext.safe_export.SafeCsvExport"
