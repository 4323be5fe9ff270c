"""The backups' names and retention: what the erasure's scan and a learner's export read of the
backups, apart from the machinery that makes and restores them (``grading.backup``)."""

from __future__ import annotations

import argparse
import re
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ..french.french_format import french_integer

__all__ = ["GRADEBOOK", "RETENTION_DAYS", "ROSTER", "backups_in", "dated_ahead", "retention_days"]

# names carry their UTC time (sauvegarde-20250314-180000.tar.gz): retention reads it, not mtime
# the second backup of one second is ``…-1.tar.gz``: newer than ``….tar.gz``, older than ``…-2``
NAME = re.compile(r"^sauvegarde-(\d{8}-\d{6})(?:-(\d+))?\.tar\.gz$")
GRADEBOOK = "gradebook.db"  # the gradebook's member in a backup
ROSTER = "eleves.csv"  # the roster's member in a backup
RETENTION_DAYS = 30.0  # days a backup is kept (make sauvegarde GARDER_JOURS), the erasure's expiry
RETENTION_MAX_DAYS = 36_600  # a century: beyond it, an expiry Python cannot date
# a name dated later than this from now: not a backup of this clock (another machine's, renamed);
# taken as the newest, the purge would delete every real one after it; never purged
AHEAD = timedelta(minutes=5)


def retention_days(text: str) -> float:
    """``--garder-jours``' value (« 2,5 » too): nan, inf or 1e10 would end in a traceback, or a
    retention under which nothing ever expires."""
    try:
        days = float(text.replace(",", "."))
    except ValueError:
        raise argparse.ArgumentTypeError(f"attend un nombre, pas «\u00a0{text}\u00a0»") from None
    if not 0 <= days <= RETENTION_MAX_DAYS:  # nan fails it too
        limit = french_integer(RETENTION_MAX_DAYS)
        raise argparse.ArgumentTypeError(
            f"attend un nombre de jours de 0 à {limit}, pas «\u00a0{text}\u00a0»"
        )
    return days


def backups_in(folder: Path) -> list[tuple[datetime, Path]]:
    """The course's backups in `folder`, newest first, with the UTC time in their name. A name
    with an impossible time (« 20260230 ») was not written by ``make sauvegarde``: any other file
    of the folder (the erasure searches it as such, the purge never deletes it)."""
    found = []
    for path in folder.iterdir() if folder.is_dir() else []:
        if (match := NAME.match(path.name)) and path.is_file():
            with suppress(ValueError):
                when = datetime.strptime(match.group(1), "%Y%m%d-%H%M%S").replace(tzinfo=UTC)
                found.append((when, int(match.group(2) or 0), path))
    return [(when, path) for when, _, path in sorted(found, reverse=True)]


def dated_ahead(when: datetime) -> bool:
    """Whether a backup's name is dated in the future (``AHEAD``): the purge never deletes it."""
    return when > datetime.now(UTC) + AHEAD
