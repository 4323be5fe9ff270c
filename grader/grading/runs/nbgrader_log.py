"""What nbgrader did for each student, read from its own log while it runs (never from the
folders). Its converters take the students one after the other: a notebook path names the
current one, "Skipping existing assignment" one left as it was, "Setting destination file
permissions" ends one, "There was an error processing assignment: <path>" starts a failure (its
traceback follows), "... '<a>' for student '<s>'" lists the failures at the end."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..classroom.ids import shown

__all__ = ["LOG_RECORD", "UNREADABLE", "LogWatcher", "Outcomes"]

# nbgrader issue 1961: harmless, logged for each locked cell whose hidden tests the release
# notebook does not carry (nbgrader puts them back from the gradebook).
CHECKSUM_WARNING = "Attribute 'checksum' for cell"
# one line of nbgrader's log, "[AutogradeApp | INFO] text" (what follows a record continues it)
LOG_RECORD = re.compile(r"^\[(?P<app>\w+) \| (?P<level>[A-Z]+)\] (?P<text>.*)$")
_SUMMARY = re.compile(
    r"There was an error processing assignment '(?P<a>.*)' for student '(?P<s>.*)'"
)
_STUDENT_ID = re.compile(r"student with ID '(?P<s>[^']+)'")
_QUALIFIED = re.compile(r"^(?:[A-Za-z_][\w]*\.)+(?=[A-Za-z_]\w*(?:Error|Exception)\b)")
# what reading a notebook that is no notebook raises (a number in a cell's source, nbformat 5,
# nesting deeper than json goes, a JSON array): its text is nbformat's, quoting the student's
_UNREADABLE = re.compile(
    r"^(?:NBFormatError|NotJSONError|ValidationError|JSONDecodeError|UnicodeDecodeError|"
    r"TypeError|AttributeError|KeyError|IndexError|ValueError|RecursionError)\b"
)
UNREADABLE = (
    "notebook illisible (abîmé, ou écrit ailleurs que dans Jupyter)\u00a0: demandez à l'élève "
    "de le rendre de nouveau depuis JupyterLab\u00a0; le détail est dans le journal"
)

DONE, SKIPPED, FAILED = "done", "skipped", "failed"


@dataclass
class Outcomes:
    """Students by what nbgrader did with them, and why those that failed did."""

    done: list[str] = field(default_factory=list)  # graded (autograde) or written (feedback)
    skipped: list[str] = field(default_factory=list)  # left as they were, already processed
    failed: dict[str, str] = field(default_factory=dict)  # student -> nbgrader's error
    checksum_warnings: int = 0

    def decided(self) -> set[str]:
        return set(self.done) | set(self.skipped) | set(self.failed)


class LogWatcher:
    """One converter's log, line by line; `on_decided(student, kind)` once per student (a bar)."""

    def __init__(
        self,
        assignment: str,
        students: list[str],
        on_decided: Callable[[str, str], None] | None = None,
    ) -> None:
        self.assignment = assignment
        self.students = set(students)
        self.outcomes = Outcomes()
        self._on_decided = on_decided or (lambda student, kind: None)
        self.current: str | None = None  # the student nbgrader is on
        self.errors: list[str] = []  # its ERROR lines: why it stopped, when it stops
        self._error: list[str] | None = None  # the ERROR record being read, with its traceback
        self._needs_reason: str | None = None  # failed student whose traceback comes next
        self._pending = ""  # the last ERROR line before a failure names its student
        self._summary: list[str] = []  # the students nbgrader's closing lines say failed
        self._path = re.compile(
            rf"/(?P<student>[^/]+)/{re.escape(assignment)}(?:/[^/]+\.ipynb)?/?(?:[\s,:']|$)"
        )

    def _student_in(self, text: str) -> str | None:
        found = [m["student"] for m in self._path.finditer(text)]
        if match := _STUDENT_ID.search(text):
            found.append(match["s"])
        return next((s for s in found if s in self.students), None)

    def _decide(self, student: str, kind: str, reason: str = "") -> None:
        out = self.outcomes
        reason = shown(reason)  # nbgrader's text may quote the notebook's: no escape sequence
        if kind == FAILED and student in out.done:  # an error after a student's end fails it
            out.done.remove(student)
        elif student in out.decided():
            if kind == FAILED and reason and not out.failed.get(student):
                out.failed[student] = reason
            return
        if kind == FAILED:
            out.failed[student] = reason
        else:
            (out.done if kind == DONE else out.skipped).append(student)
        self._on_decided(student, kind)

    def _close_error(self) -> None:
        lines = [line.strip() for line in self._error or [] if line.strip()]
        self._error = None
        if self._needs_reason and len(lines) > 1 and lines[0].startswith("Traceback"):
            reason = _QUALIFIED.sub("", lines[-1])
            reason = UNREADABLE if _UNREADABLE.match(reason) else shown(reason)
            self.outcomes.failed[self._needs_reason] = reason
            self._needs_reason = None

    def feed(self, line: str) -> None:
        """One line of nbgrader's output."""
        line = line.rstrip("\n")
        if "| ERROR]" in line or "| CRITICAL]" in line:
            self.errors.append(line.split("]", 1)[-1].strip())
        record = LOG_RECORD.match(line)
        if record is None:  # the rest of the previous record (a traceback)
            if self._error is not None:
                self._error.append(line)
            return
        self._close_error()
        text, level = record["text"], record["level"]
        if CHECKSUM_WARNING in text:
            self.outcomes.checksum_warnings += 1
            return
        if level in ("ERROR", "CRITICAL"):
            self._error = [text]
            if summary := _SUMMARY.fullmatch(text):
                if summary["a"] == self.assignment and summary["s"] in self.students:
                    self._summary.append(summary["s"])
                return
            student = self._student_in(text)
            if text.startswith("There was an error processing assignment") and student:
                self.current = student
                self._decide(student, FAILED, self._pending or "")
                self._needs_reason = student
            elif student and text.startswith("While processing assignment"):
                self._decide(student, FAILED, "le noyau ne répond plus (boucle ou mémoire\u00a0?)")
            else:
                self._pending = text
            return
        if text.startswith("Skipping existing assignment") and (student := self._student_in(text)):
            self._decide(student, SKIPPED)
            return
        if text.startswith("Setting destination file permissions"):
            if self.current and self.current not in self.outcomes.failed:
                self._decide(self.current, DONE)
            return
        student = self._student_in(text)
        if student and student != self.current:
            self.current = student
            self._pending = ""

    def finish(self) -> Outcomes:
        """After the process ended: what nbgrader did (students it never reached are absent).
        Its closing lines only name failures its log already showed: one naming a student it
        graded is a notebook's text quoted in an error (a student's key « There was an error
        processing assignment 'oublier' for student 'cid' » failed cid), never believed."""
        self._close_error()
        for student in self._summary:
            if student not in self.outcomes.decided():
                self._decide(student, FAILED)
        return self.outcomes
