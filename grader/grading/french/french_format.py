"""How the class tools write dates, scores and names' order for a French reader, in one place:
nbgrader's naive UTC dates in the course's time zone, the zone said; scores ``1,5 / 12``;
students in French order (``éloïse`` between ``élodie`` and ``emma``) with no OS locale (CI
machines have none).
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from course.labo.french_number import french_number

__all__ = [
    "ITEM_CHARS",
    "LISTED",
    "COURSE_TIME_ZONE",
    "collation_key",
    "french_datetime",
    "french_day",
    "french_integer",
    "french_score",
    "listed",
    "points_text",
    "seconds_text",
]

COURSE_TIME_ZONE = "Europe/Paris"
_ZONE = ZoneInfo(COURSE_TIME_ZONE)


def collation_key(text: str) -> tuple[str, str, str]:
    """French dictionary order without a locale: letters first (accents and case folded away),
    then accents, then the exact text so that no two distinct ids compare equal."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    letters = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return letters, decomposed.casefold(), str(text)


def french_datetime(value: object, with_zone: bool = False) -> str:
    """``14/03/2025 18:00`` in the course's time zone ("" without a date); with `with_zone`,
    followed by the zone: ``14/03/2025 18:00 (Europe/Paris)``. `value`: nbgrader's naive UTC
    datetime or its text; anything else ("", NaN) is no date."""
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value).strip())
        except ValueError:
            return ""
    local, zone = value if value.tzinfo is not None else value.replace(tzinfo=UTC), "UTC"
    try:
        local, zone = local.astimezone(_ZONE), COURSE_TIME_ZONE
    except OverflowError:  # 31/12/9999 23:59 UTC, the « never » of many tools: year 10000 here
        pass
    text = local.strftime("%d/%m/%Y %H:%M:%S" if local.second else "%d/%m/%Y %H:%M")
    return f"{text} ({zone})" if with_zone else text


def french_day(iso: str) -> str:
    """``2026-12-04`` as a French reader writes it: ``04/12/2026`` (anything else as it is)."""
    parts = iso.split("-")
    return "/".join(reversed(parts)) if len(parts) == 3 else iso


def french_integer(value: int) -> str:
    """A count the French way: ``6\u00a0300\u00a0000`` (thousands apart, no-break spaces)."""
    return f"{value:,}".replace(",", "\u00a0")


LISTED = 50  # items of a list the terminal shows; the whole list goes to a file
ITEM_CHARS = 300  # of each item shown, when the whole list is in a file


def listed(header: str, items: list, whole: Path | None = None) -> list[str]:
    """`header` and `items` one per line, in French order; with `whole` (the file where the
    whole list is written), cut at LISTED items of ITEM_CHARS characters at most: one hostile
    archive of 200,000 members printed 200,000 lines. Nothing for no items."""
    items = sorted(items, key=lambda item: collation_key(str(item)))
    if whole is not None:  # 60 names of 240 characters and their targets: 852 kB of one screen
        items = [f"{t[: ITEM_CHARS - 1]}…" if len(t := str(i)) > ITEM_CHARS else t for i in items]
    more = len(items) - LISTED if whole is not None else 0
    if more <= 0:
        return [header, *(f"  - {item}" for item in items)] if items else []
    tail = f"  … et {more} autre(s)\u00a0: liste complète dans {whole}"
    return [header, *(f"  - {item}" for item in items[:LISTED]), tail]


def points_text(value: float) -> str:
    """A number of points the French way, two decimals at most: ``1,5``, ``12``, ``0,25``."""
    return french_number(round(float(value), 2))


def french_score(score: float, max_score: float) -> str:
    """``1,5 / 12``: the one way a score is written in the report."""
    return f"{points_text(score)} / {points_text(max_score)}"


def seconds_text(value: float, decimals: int = 1) -> str:
    """A duration the French way: ``6,5\u00a0s`` (decimal comma, non-breaking space)."""
    return f"{french_number(round(float(value), decimals))}\u00a0s"
