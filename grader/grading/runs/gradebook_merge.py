"""Gradebooks of parallel workers: a consistent copy for each, and their results copied back
into the real gradebook through nbgrader's API."""

from __future__ import annotations

__all__ = ["merge_gradebook"]


def merge_gradebook(main_url: str, worker_url: str, assignment: str, students: list[str]) -> int:
    """Copy `students`' autograded results (grades, comments, flag, late penalty) from a
    worker's gradebook into the main one, and the students the worker's nbgrader created."""
    from nbgrader.api import Gradebook, MissingEntry

    merged = 0
    with Gradebook(main_url) as gb, Gradebook(worker_url) as wg:
        for student in students:
            try:
                wsub = wg.find_submission(assignment, student)
            except MissingEntry:
                continue
            wstudent = wg.find_student(student)
            try:
                gb.find_student(student)
            except MissingEntry:
                gb.add_student(
                    student,
                    first_name=wstudent.first_name,
                    last_name=wstudent.last_name,
                    email=wstudent.email,
                    lms_user_id=wstudent.lms_user_id,
                )
            gb.update_or_create_submission(
                assignment, student, timestamp=wsub.timestamp, extension=wsub.extension
            )
            for wnb in wsub.notebooks:
                nb = gb.find_submission_notebook(wnb.name, assignment, student)
                nb.flagged = wnb.flagged
                nb.late_submission_penalty = wnb.late_submission_penalty
                for wgrade in wnb.grades:
                    grade = gb.find_grade(wgrade.name, wnb.name, assignment, student)
                    grade.auto_score = wgrade.auto_score
                    grade.manual_score = wgrade.manual_score
                    grade.extra_credit = wgrade.extra_credit
                    grade.needs_manual_grade = wgrade.needs_manual_grade
                for wcomment in wnb.comments:
                    comment = gb.find_comment(wcomment.name, wnb.name, assignment, student)
                    comment.auto_comment = wcomment.auto_comment
                    comment.manual_comment = wcomment.manual_comment
            gb.db.commit()
            merged += 1
    return merged
