"""nbgrader configuration of the course (stock nbgrader 0.9.6 commands read it).

Run nbgrader commands from this folder (``cd grader``): nbgrader reads the configuration of the
folder it runs in. The course root is computed from this file. Generated files (gradebook,
submitted/, autograded/, feedback/) live under ``grader/`` and are git-ignored.
"""

import os
import sys
from pathlib import Path

import nbgrader

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# The instructor-side package `grading` (hidden tests, hooks, class tools) lives here, never in
# the installed `course` package that students can read. This line is how nbgrader finds it
# wherever it runs (nbgrader puts its own folder on sys.path, which is enough only in grader/):
# formgrader, the hub's instructors (their configuration loads this file), the demo course, in
# any venv; nothing is installed or exported for it. The class tools (`python -m
# grading.<tool>`) run in this folder, where Python finds it first.
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
# `nbgrader db upgrade` runs `alembic` from PATH: the one next to this Python, so that
# `../.venv/bin/nbgrader db upgrade` works without an activated venv
_BIN = str(Path(sys.executable).parent)
if _BIN not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join(filter(None, [_BIN, os.environ.get("PATH", "")]))

from grading.classroom.gradebook import sqlite_url  # noqa: E402  (importable from the line above)
from grading.classroom.paths import root_problem  # noqa: E402
from grading.classroom.schema_stamp import stamp_in_process  # noqa: E402
from grading.nbgrader_ext.export_choice import export_plugin  # noqa: E402
from grading.nbgrader_ext.outcome_record import METADATA_KEY  # noqa: E402

# a new gradebook is stamped without running `alembic` (1 s of CPU each)
stamp_in_process()

c = get_config()  # noqa: F821  (injected by traitlets when nbgrader loads this file)

# Grades and personal data are private files: whatever a process reading this configuration
# creates (the gradebook, submitted/, autograded/, feedback/, rapport/ with its logs, reports and
# exports, the quarantine) is the instructor's alone (files 0600, folders 0700); a course shared
# by an instructors' group (CourseDirectory.groupshared, set before this file) keeps the group's
# access (0660/0770). Every class tool (grading.classroom.paths.course_dirs) and every nbgrader
# command from grader/ reads this file. What students must read keeps the modes nbgrader gives it
# explicitly: the release in the exchange (0644/0755) and each student's feedback page
# (grading.nbgrader_ext.exchange.CheckedReleaseFeedback: 0644, under a name only its student can
# compute).
_GROUP = bool(c.CourseDirectory.get("groupshared", False))
os.umask(0o007 if _GROUP else 0o077)
if not _GROUP:  # nbgrader chmods these explicitly (444 and 644 by default)
    c.Autograde.permissions = 400
    c.GenerateFeedback.permissions = 600

c.CourseDirectory.course_id = "memoire-tuteur"
if _problem := root_problem(ROOT):  # every nbgrader command would match no notebook
    raise SystemExit(_problem)
c.CourseDirectory.root = str(ROOT)
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"
c.CourseDirectory.submitted_directory = "grader/submitted"
c.CourseDirectory.autograded_directory = "grader/autograded"
c.CourseDirectory.feedback_directory = "grader/feedback"
c.CourseDirectory.solution_directory = "grader/solution"
c.CourseDirectory.db_url = sqlite_url(HERE / "gradebook.db")  # « cours ? » stays a folder
# Only notebooks and the files they need are released; never databases or caches.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "*.db",
    "*.db-*",
    "feedback",
]

# Student code must never stop the grading of a class.
# ipykernel cannot interrupt a coroutine started by top-level await (ipykernel issue 881): with
# nbgrader's default raise_on_iopub_timeout=True such a notebook would be dropped with no grade.
c.Execute.timeout = 30
c.Execute.raise_on_iopub_timeout = False
c.Execute.interrupt_on_timeout = True
# Minimal tracebacks: an error in a hidden test shows its message, never the hidden code.
c.Execute.extra_arguments = [
    "--HistoryManager.hist_file=:memory:",
    "--InteractiveShell.xmode=Minimal",
]

# The TP "oublier" is graded OUTSIDE the kernel (grader/grading/nbgrader_ext/hooks.py): the
# student's function runs in separate processes, in the bubblewrap sandbox (course/labo/sandbox.py),
# on copies of the example base and of a base with hidden learners
# (grader/grading/nbgrader_ext/hidden.py), and
# the files
# are checked by another fresh process, so nothing a submission does (monkeypatching sqlite3,
# subprocess, the helpers, IPython itself) can change its grade. Without a usable sandbox it
# refuses to grade, unless StartOutOfKernelGrading.sandboxed is False
# (grading/nbgrader_ext/sandbox_setting.py:
# COURSE_GRADING_NO_SANDBOX=1, unsafe, on purpose).
# Nothing in the submitted file is trusted: sanitizing starts by rebuilding every notebook of the
# TP's assignment on the release (RebuildFromRelease: the instructor's cells, the student's
# answer and written answer, nothing else; a copy-pasted or metadata-stripped answer cell is
# graded as what it is and never reaches DeduplicateIds/CheckCellMetadata), and no cell of the
# TP's notebook runs in nbgrader's kernel (ExecuteOutsideTheLab). Other assignments pass through.
c.Autograde.sanitize_preprocessors = [
    "grading.nbgrader_ext.hooks.RebuildFromRelease",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "grading.nbgrader_ext.hooks.StartOutOfKernelGrading",
    "grading.nbgrader_ext.hooks.ExecuteOutsideTheLab",
    "grading.nbgrader_ext.hooks.ApplyOutOfKernelGrading",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]
# How each submission's grading went ({"outcome", "detail"}, written by the hooks) stays in the
# autograded notebook for the class report: nbconvert's default mask keeps only the language.
c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = {
    ("language_info", "name"),
    (METADATA_KEY,),
}

# Feedback never shows hidden tests (their source is removed before export).
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "grading.nbgrader_ext.feedback_page.StudentName",  # the page names its student
    "grading.nbgrader_ext.feedback_page.PendingGrades",  # « à noter », not 0, before formgrader
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# Feedback pages in French: grader/templates/feedback replaces nbgrader's "feedback" template (it
# comes first in the search path, so `nbgrader generate_feedback` and formgrader's button both use
# it); test cells are named by the lab criterion they check, `code` in messages shown as code.
c.HTMLExporter.extra_template_basedirs = [
    str(HERE / "templates"),
    str(Path(nbgrader.__file__).parent / "server_extensions" / "formgrader" / "templates"),
]
c.HTMLExporter.filters = {
    "criterion_title": "grading.nbgrader_ext.criterion_titles.criterion_title",
    "numbered_title": "grading.nbgrader_ext.criterion_titles.numbered_title",
    "code_spans": "grading.nbgrader_ext.feedback_page.code_spans",
    "points": "grading.nbgrader_ext.feedback_page.points",
    # Student text is inert in every page (grading/nbgrader_ext/safe_html.py): nbconvert's own
    # filter names, so nbgrader's templates (formgrader's submission view, the feedback page) use
    # them too.
    "markdown2html": "grading.nbgrader_ext.safe_html.markdown2html",
    "clean_html": "grading.nbgrader_ext.safe_html.clean_html",
    # nbconvert's own regex is quadratic on a long line of "[" (student text): a linear twin
    "strip_files_prefix": "grading.nbgrader_ext.safe_html.strip_files_prefix",
}
# HTML outputs, raw cells and SVG go through clean_html; outputs' JavaScript and widgets are
# dropped; formgrader's page gets the student's id and names escaped; output image paths (any URL)
# are dropped.
c.HTMLExporter.sanitize_html = True
c.HTMLExporter.preprocessors = [
    "grading.nbgrader_ext.safe_html.EscapeStudentNames",
    "grading.nbgrader_ext.safe_html.DropOutputFilenames",
]

# `nbgrader export` (make export): nbgrader's CSV, with any cell that a spreadsheet would take for
# a formula (a student id such as =2+5) neutralised, and quoted as CSV needs
# (grading/nbgrader_ext/safe_export.py; the rule in grading/french/csv_safe.py).
# `make rapport` asks for the class report instead (grading/nbgrader_ext/export_choice.py).
c.ExportApp.plugin_class = export_plugin()

# Late submissions: nbgrader compares each submission's timestamp.txt with the assignment's due
# date (`nbgrader db assignment add oublier --duedate="2025-03-14 18:00:00 Europe/Paris"`) and asks
# this plugin for the penalty: 1 point per started day late, never below 0. The TP's statement and
# the class report state the same rule (grading.nbgrader_ext.late_penalty.rule).
c.AssignLatePenalties.plugin_class = "grading.nbgrader_ext.late_penalty.PointsPerDayLate"
c.PointsPerDayLate.points_per_day = 1.0

# Collect from the exchange (make collect, nbgrader collect, formgrader's Collect): only copies
# owned by the student they name are collected; a copy dropped under a classmate's name (`nbgrader
# submit --student <classmate>`), a link or an unreadable folder is set aside in
# grader/quarantaine/<assignment>/, named, and the command fails
# (grader/grading/nbgrader_ext/exchange.py).
# Only the assignment's notebooks are copied, never through a link, dated by their deposit (the
# files' change time), the student's claimed time kept in claimed_timestamp.txt.
c.ExchangeFactory.collect = "grading.nbgrader_ext.exchange.OwnerCheckedCollect"
# Feedback release: only the page of each notebook of the assignment; a student without a
# submission secret is named and left out, the others get their page.
c.ExchangeFactory.release_feedback = "grading.nbgrader_ext.exchange.CheckedReleaseFeedback"

# Submissions gathered outside a hub (LMS download, e-mail): put the zip files (or notebooks) in
# grader/downloaded/<assignment>/archive/ and run `nbgrader zip_collect <assignment>`; inside, each
# student's notebooks sit in a folder named after their id: <id>/oublier.ipynb.
c.ZipCollectApp.downloaded_directory = "grader/downloaded"
c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/]+)/(?P<file_id>[^/]+\.ipynb)$"

# Student version: no outputs, stable cell ids (nbformat 4.5 ids are kept by nbgrader).
c.ClearSolutions.code_stub = {"python": "# VOTRE CODE ICI\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "VOTRE RÉPONSE ICI"
