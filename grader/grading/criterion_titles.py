"""The French title of the criterion each grade cell checks, for the report and the feedback
(the TP's criteria, and the shared-database lab's tests).

The one place the class tools read the lab's criteria: the report names its columns and charts
with these titles, the feedback template its headings. The written answer, graded by hand, is
no test of ``course.labo.criteria``: its grade id (``documentation``) is a name for nbgrader,
never for a reader, so it has its own title here.
"""

from __future__ import annotations

__all__ = ["HAND_GRADED_TITLES", "criterion_title"]

# grade ids of the cells graded by hand -> their French title
HAND_GRADED_TITLES = {
    "documentation": "Réponse écrite\u00a0: la procédure d'effacement (notée à la main)",
}


def criterion_title(grade_id: str) -> str:
    """The title of the lab criterion checked by grade cell `grade_id`; `grade_id` otherwise."""
    from course.labo.criteria import grade_titles
    from course.labo.partage import partage_titles

    grade_id = str(grade_id)
    titles = {**grade_titles(), **partage_titles()}
    return titles.get(grade_id) or HAND_GRADED_TITLES.get(grade_id, grade_id)
