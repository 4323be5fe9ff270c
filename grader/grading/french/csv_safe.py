"""CSV files a spreadsheet opens as data, never as formulas.

A student id comes from a folder name and is hostile: ``=HYPERLINK(...)`` written raw into
``notes.csv`` is a formula in a spreadsheet. Every CSV the course writes goes through
:func:`neutralise` (OWASP: a text cell starting with ``= + - @``, a tab or a CR gets a leading
``'``), ``make export``'s ``grades.csv`` included (``nbgrader_ext.safe_export``). Light on
purpose (no pandas, no nbgrader): ``make rapport`` reads the French CSV's names before starting
nbgrader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EXPORT_KEYS",
    "FORMULA_STARTS",
    "LINE_END",
    "PERSON_KEYS",
    "SCORE_KEYS",
    "neutralise",
    "neutralise_frame",
]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# RFC 4180's line end: the csv module then quotes a field holding a lone CR or LF (with "\n"
# alone, a CR inside an id was written bare and split its row in two).
LINE_END = "\r\n"
# nbgrader export's columns: the student, the scores, and all of them in its order
PERSON_KEYS = ["student_id", "last_name", "first_name", "email"]
SCORE_KEYS = ["raw_score", "late_submission_penalty", "score", "max_score"]
EXPORT_KEYS = ["assignment", "duedate", "timestamp", *PERSON_KEYS, *SCORE_KEYS]


def neutralise(value: object) -> object:
    """Text that would start a formula gets a ``'``; a number as text (``-1.5``) stays one."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS) and not _is_number(value):
        return "'" + value
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text


def neutralise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of `df` with every text cell neutralised (numbers are left as they are)."""
    out = df.copy()
    for column in out.columns:
        # pandas 3 gives text its own dtype (`str`): `== object` alone let it through raw;
        # numbers are booleans, integers, floats and complex ones (pandas' is_numeric_dtype)
        if out[column].dtype.kind not in "biufc":
            out[column] = out[column].map(neutralise)
    out.columns = [neutralise(str(c)) for c in out.columns]
    return out
