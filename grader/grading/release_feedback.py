"""``make release-feedback``: stock ``nbgrader release_feedback``, said back in French from its log
(``rapport/release-feedback.log``): the pages given back, those it could not match (an error it
only logs, status 0: here the command fails), the students ``CheckedReleaseFeedback`` left out
(no usable ``submission_secret.txt``: fails too), those with a copy but no page yet, and the
pages given back whose grade is provisional or older than the gradebook's (given all the same:
a teacher may give back early, and is told whom to give back again)."""

from __future__ import annotations

import re
from pathlib import Path

from nbgrader.api import Gradebook

from .classroom.gradebook import gradebook_problem
from .classroom.ids import quoted
from .classroom.paths import CourseDirs, course_dirs
from .feedback import grades_shown, stale_feedback
from .french.french_format import collation_key
from .nbgrader_ext.exchange import LEFT_OUT
from .runs.manual_grades import pending_hand_grades
from .runs.nbgrader_log import LOG_RECORD
from .runs.nbgrader_run import assignment_command, run_quiet
from .runs.submitted_ids import submitted_students

__all__ = ["main", "read_release_log", "release_feedback"]

# nbgrader 0.9.6's ExchangeReleaseFeedback.copy_files: the text of its INFO and ERROR records
_RELEASED = re.compile(
    r"Releasing feedback for student '(?P<student>.*)' on assignment '.*' \(.*\)"
)
_UNMATCHED = re.compile(r"Could not match '(?P<path>.*)' with regexp")
# CheckedReleaseFeedback's failure: a header, then one "- «id» : why" per student
_LEFT_OUT_OPEN, _LEFT_OUT_CLOSE = "- «\u00a0", "\u00a0»\u00a0: "


def read_release_log(log: str) -> tuple[list[str], list[str], dict[str, str]]:
    """(students whose page was given back, pages nbgrader could not match, students the course's
    release left out -> why in French) in a log."""
    released, unmatched, left_out = [], [], {}
    inside = False
    for line in log.splitlines():
        record = LOG_RECORD.match(line)
        if not record:
            if inside and line.strip().startswith(_LEFT_OUT_OPEN):
                student, _, why = line.strip()[len(_LEFT_OUT_OPEN) :].partition(_LEFT_OUT_CLOSE)
                left_out[student] = why
            continue
        inside = LEFT_OUT in record["text"]
        if record["level"] == "INFO" and (match := _RELEASED.fullmatch(record["text"])):
            released.append(match["student"])
        elif record["level"] == "ERROR" and (match := _UNMATCHED.match(record["text"])):
            unmatched.append(match["path"])
    return sorted(set(released), key=collation_key), unmatched, left_out


def _not_final(dirs: CourseDirs, assignment: str, released: list[str]) -> list[str]:
    """Warnings on pages just given back: a written answer still to grade by hand (the page says
    « note provisoire »), or grades changed since the page was made (it shows the older ones)."""
    if not released or gradebook_problem(dirs):  # nothing to compare with: never create one
        return []
    with Gradebook(dirs.db_url) as gradebook:
        waiting = pending_hand_grades(gradebook, assignment)
    pending = [s for s in released if s in waiting]
    older = stale_feedback(dirs, assignment, released, grades_shown(dirs.db_url, assignment))
    lines = []
    if pending:
        lines.append(
            f"⚠ {len(pending)} page(s) rendue(s) avec une note provisoire (réponse à noter à la "
            "main : formgrader, make feedback, puis make release-feedback à nouveau) : "
            + ", ".join(map(quoted, pending))
        )
    if older := [s for s in older if s not in pending]:
        lines.append(
            f"⚠ {len(older)} page(s) rendue(s) plus ancienne(s) que le carnet de notes (make "
            "feedback, puis make release-feedback à nouveau) : " + ", ".join(map(quoted, older))
        )
    return lines


def _has_page(dirs: CourseDirs, student: str, assignment: str) -> bool:
    """Whether make feedback wrote a page for `student`'s copy of `assignment`."""
    return any((dirs.feedback / student / assignment).glob("*.html"))


def release_feedback(
    assignment: str, nbgrader_args: list[str], grader_dir: Path | None = None
) -> tuple[int, list[str]]:
    """Give `assignment`'s feedback pages back; (exit status, French summary lines)."""
    dirs = course_dirs(grader_dir)
    args = ["release_feedback", assignment, *nbgrader_args]
    run = run_quiet(dirs.grader_dir, args, dirs.log_file("release-feedback"))
    released, unmatched, left_out = read_release_log(run.log)
    handed_in = submitted_students(dirs.submitted, assignment, nbgrader_args)
    # those make feedback has not written a page for yet (not those nbgrader failed to give back)
    waiting = sorted(
        (
            s
            for s in set(handed_in) - set(released) - set(left_out)
            if not _has_page(dirs, s, assignment)
        ),
        key=collation_key,
    )
    lines = [f"Retours de {quoted(assignment)} rendus dans l'échange de nbgrader\u00a0:"]
    given = ", ".join(map(quoted, released))
    given = f"{len(released)} page(s) de retour rendue(s)\u00a0: {given}" if released else ""
    lines.append(f"  - {given or 'aucune page de retour rendue'}")
    lines += _not_final(dirs, assignment, released)
    if waiting:
        lines.append(
            f"  - {len(waiting)} rendu(s) ramassé(s) sans page de retour (make feedback "
            "d'abord)\u00a0: " + ", ".join(map(quoted, waiting))
        )
    if unmatched:
        lines.append(f"✘ {len(unmatched)} page(s) que nbgrader n'a pas su attribuer\u00a0:")
        lines += [f"    {path}" for path in unmatched]
    if left_out:
        lines.append(f"✘ {len(left_out)} {LEFT_OUT} (les autres l'ont)\u00a0:")
        lines += [f"    {quoted(s)}\u00a0: {why}" for s, why in sorted(left_out.items())]
    if run.status and not left_out:  # otherwise the failure is the students left out, listed above
        lines.append(run.failure(f"retours de {quoted(assignment)}"))
    lines.append(f"Journal de nbgrader\u00a0: {run.log_path}")
    return int(bool(unmatched or left_out or run.status)), lines


def main(argv: list[str] | None = None) -> int:
    return assignment_command(
        argv,
        "python -m grading.release_feedback",
        "Rend les pages de retour aux élèves par l'échange de nbgrader (nbgrader "
        "release_feedback) et dit en français à qui. Les autres options vont à nbgrader "
        "(--student=…).",
        release_feedback,
        "make release-feedback",
    )


if __name__ == "__main__":
    raise SystemExit(main())
