"""Jinja filters of the French feedback template: `code` spans shown as code, scores French."""

from __future__ import annotations

import re

from course.labo.french_number import french_number

__all__ = ["code_spans", "points"]

_CODE = re.compile(r"`([^`\n<>]+)`")


def code_spans(escaped_html: str) -> str:
    """`x` -> <code>x</code> in text already escaped for HTML (nbconvert's ansi2html output)."""
    return _CODE.sub(r"<code>\1</code>", escaped_html)


def points(value: object) -> str:
    """A score as a French reader writes it: 10, 7,5, 0,25 (two decimals at most)."""
    try:
        number = round(float(value), 2)
    except (TypeError, ValueError):
        return "—"
    return french_number(number)
