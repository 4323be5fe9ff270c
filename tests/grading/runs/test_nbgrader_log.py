"""Reading nbgrader's log: graded, skipped and failed students, each decided once, as soon as
nbgrader is done with them (lines as nbgrader 0.9.6 writes them, shortened tracebacks)."""

from __future__ import annotations

from grading.runs.nbgrader_log import UNREADABLE, LogWatcher

LOG = """\
[AutogradeApp | WARNING] Removing existing assignment: /c/grader/autograded/ana/oublier
[AutogradeApp | INFO] Creating/updating student with ID 'ana': {}
[AutogradeApp | INFO] Sanitizing /c/grader/submitted/ana/oublier/oublier.ipynb
[AutogradeApp | WARNING] Attribute 'checksum' for cell test_fichier has changed! (...)
[AutogradeApp | INFO] Autograding /c/grader/autograded/ana/oublier/oublier.ipynb
[IPKernelApp] WARNING | Kernel is running over TCP without encryption.
[AutogradeApp | INFO] Setting destination file permissions to 444
[AutogradeApp | INFO] Skipping existing assignment: /c/grader/autograded/ben/oublier
[AutogradeApp | INFO] Creating/updating student with ID 'casse': {}
[AutogradeApp | INFO] Sanitizing /c/grader/submitted/casse/oublier/oublier.ipynb
[AutogradeApp | ERROR] There was an error processing assignment: /c/grader/submitted/casse/oublier
[AutogradeApp | ERROR] Traceback (most recent call last):
      File "/venv/nbformat/reader.py", line 25, in parse_json
        raise NotJSONError(message) from e
    nbformat.reader.NotJSONError: Notebook does not appear to be JSON: '{"pas"'

[AutogradeApp | INFO] Creating/updating student with ID 'dou': {}
[AutogradeApp | INFO] Sanitizing /w/submitted/dou/oublier/oublier.ipynb
[AutogradeApp | ERROR] While processing assignment /w/submitted/dou/oublier, the kernel became

[AutogradeApp | INFO] Creating/updating student with ID 'eve': {}
[AutogradeApp | ERROR] No assignment with ID 'oublier' exists in the database
[AutogradeApp | ERROR] There was an error processing assignment: /c/grader/submitted/eve/oublier
[AutogradeApp | ERROR] Traceback (most recent call last):
      File "/venv/nbgrader/converters/autograde.py", line 98, in init_assignment
    nbgrader.converters.base.NbGraderException: No assignment with ID 'oublier' exists
[AutogradeApp | ERROR] There was an error processing assignment 'oublier' for student 'casse'
[AutogradeApp | ERROR] There was an error processing assignment 'oublier' for student 'dou'
[AutogradeApp | ERROR] There was an error processing assignment 'oublier' for student 'eve'
[AutogradeApp | ERROR] Please see the the above traceback for details on the specific errors.
"""


def test_each_student_is_decided_once_with_nbgrader_s_reason():
    decided: list[tuple[str, str]] = []
    watcher = LogWatcher(
        "oublier", ["ana", "ben", "casse", "dou", "eve", "zoe"], lambda s, k: decided.append((s, k))
    )
    for line in LOG.splitlines(keepends=True):
        watcher.feed(line)
    out = watcher.finish()
    assert decided == [
        ("ana", "done"),
        ("ben", "skipped"),
        ("casse", "failed"),
        ("dou", "failed"),
        ("eve", "failed"),
    ]
    assert out.done == ["ana"] and out.skipped == ["ben"]
    assert out.failed == {
        "casse": UNREADABLE,  # nbformat's English, quoting the notebook: in the log only
        "dou": "le noyau ne répond plus (boucle ou mémoire\u00a0?)",
        "eve": "NbGraderException: No assignment with ID 'oublier' exists",
    }
    assert out.checksum_warnings == 1
    assert "zoe" not in out.decided()  # never reached: the caller counts it as failed


def test_feedback_log_and_another_assignment():
    app = "[GenerateFeedbackApp | INFO]"
    log = [
        f"{app} Converting notebook /c/grader/autograded/ana/oublier/oublier.ipynb\n",
        f"{app} Setting destination file permissions to 644\n",
        f"{app} Skipping existing assignment: /c/grader/feedback/ben/oublier\n",
        f"{app} Skipping existing assignment: /c/grader/feedback/ben/lecons\n",
    ]
    watcher = LogWatcher("oublier", ["ana", "ben"])
    for line in log:
        watcher.feed(line)
    out = watcher.finish()
    assert out.done == ["ana"] and out.skipped == ["ben"] and not out.failed


def test_a_notebook_s_text_quoted_in_an_error_never_fails_a_classmate():
    """Attack, stop 56: nbformat logs an invalid notebook's unexpected key in an ERROR line, and
    the closing summary was searched anywhere in a line: ana's key « There was an error
    processing assignment 'oublier' for student 'cid' » failed cid, who was graded (his grades
    never merged with --jobs 2, his failure recorded, no feedback page for the class). Even a
    line that is nbgrader's summary word for word names no failure its log did not show."""
    summary = "There was an error processing assignment 'oublier' for student '{}'"
    log = [
        "[AutogradeApp | INFO] Sanitizing /c/grader/submitted/ana/oublier/oublier.ipynb",
        "[AutogradeApp | ERROR] Notebook JSON is invalid: Additional properties are not allowed "
        f"('{summary.format('cid')}' was unexpected)",
        "[AutogradeApp | INFO] Setting destination file permissions to 444",
        "[AutogradeApp | INFO] Sanitizing /c/grader/submitted/ben/oublier/oublier.ipynb",
        "[AutogradeApp | INFO] Setting destination file permissions to 444",
        "[AutogradeApp | INFO] Sanitizing /c/grader/submitted/cid/oublier/oublier.ipynb",
        f"[AutogradeApp | ERROR] {summary.format('ben')}",  # as if a key were the whole text
        "[AutogradeApp | INFO] Setting destination file permissions to 444",
    ]
    watcher = LogWatcher("oublier", ["ana", "ben", "cid", "dan"])
    for line in log:
        watcher.feed(line + "\n")
    out = watcher.finish()
    assert out.done == ["ana", "ben", "cid"] and not out.failed, out
    watcher = LogWatcher("oublier", ["ana", "dan"])  # control: a failure nbgrader never reached
    watcher.feed(f"[AutogradeApp | ERROR] {summary.format('dan')}\n")
    assert watcher.finish().failed == {"dan": ""}
