"""The French title of the criterion each grade cell checks, for the report and the feedback.

The one place the class tools read the lab's criteria, numbered as the TP statement numbers
them (``course.labo.criteria.statement_table``), whatever the order of the grade cells. The
written answer, graded by hand, is no lab test: its grade id (``documentation``) gets a title.
"""

from __future__ import annotations

__all__ = ["criterion_number", "criterion_title", "numbered_title", "ordered_criteria"]

HAND_GRADED_TITLES = {
    "documentation": "Réponse écrite\u00a0: la procédure d'effacement (notée à la main)",
}


def criterion_title(grade_id: str) -> str:
    """The title of the lab criterion checked by grade cell `grade_id`; `grade_id` otherwise."""
    # course.labo (0.1 s) only when a title is asked: nbgrader_config.py names these filters
    # for every exporter nbgrader builds
    from course.labo.criteria import grade_titles
    from course.labo.partage import partage_titles

    grade_id = str(grade_id)
    titles = {**grade_titles(), **partage_titles()}
    return titles.get(grade_id) or HAND_GRADED_TITLES.get(grade_id, grade_id)


def criterion_number(title: str) -> int | None:
    """The statement's number of the criterion `title` (hand-graded ones last), or None."""
    from course.labo.criteria import CRITERIA  # as in criterion_title

    numbers = {c.title: c.number for c in CRITERIA}
    last = max(numbers.values(), default=0)
    for k, hand in enumerate(HAND_GRADED_TITLES.values(), 1):
        numbers.setdefault(hand, last + k)
    return numbers.get(title)


def numbered_title(grade_id: str) -> str:
    """« Critère 2\u00a0: Aucun de ses événements… »: the title as the statement numbers it."""
    title = criterion_title(grade_id)
    number = criterion_number(title)
    return f"Critère {number}\u00a0: {title}" if number is not None else title


def ordered_criteria(criteria: dict[str, float]) -> dict[str, float]:
    """`criteria` (title -> points) in the statement's order; titles it does not number last."""
    return dict(sorted(criteria.items(), key=lambda item: criterion_number(item[0]) or 10**6))
