"""The French title of the criterion each grade cell checks, for the report and the feedback
(the TP's criteria, and the shared-database lab's tests).

The one place the class tools read the lab's criteria: the report names its columns and charts
with these titles, the feedback template its headings.
"""

from __future__ import annotations

__all__ = ["criterion_title"]


def criterion_title(grade_id: str) -> str:
    """The title of the lab criterion checked by grade cell `grade_id`; `grade_id` otherwise."""
    from course.labo.criteria import grade_titles
    from course.labo.partage import partage_titles

    return {**grade_titles(), **partage_titles()}.get(grade_id, grade_id)
