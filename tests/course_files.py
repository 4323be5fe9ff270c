"""Rewrite grader/grading/privacy/course_files.txt (``make course-files``): the digests of the
files the course ships in grader/, after a change there (grading.privacy.course_files says why)."""

from __future__ import annotations

import sys

from helpers import REPO

sys.path.insert(0, str(REPO / "grader"))
from grading.privacy.course_files import LIST, listing  # noqa: E402

if __name__ == "__main__":
    text = listing(REPO / "grader")
    LIST.write_text(text, encoding="utf-8")
    print(f"{LIST.name}\u00a0: {len(text.splitlines())} fichiers du cours")
