"""``nbgrader export`` runs the course's CSV unless ``make rapport`` asks for the class report."""

from __future__ import annotations

from grading.nbgrader_ext.export_choice import CLASS_REPORT_ENV, export_plugin
from traitlets.utils.importstring import import_item


def test_the_csv_by_default_the_report_when_asked(monkeypatch):
    monkeypatch.delenv(CLASS_REPORT_ENV, raising=False)
    assert import_item(export_plugin()).__name__ == "SafeCsvExport"
    monkeypatch.setenv(CLASS_REPORT_ENV, "0")
    assert import_item(export_plugin()).__name__ == "SafeCsvExport"
    monkeypatch.setenv(CLASS_REPORT_ENV, "1")
    assert import_item(export_plugin()).__name__ == "ClassReport"
