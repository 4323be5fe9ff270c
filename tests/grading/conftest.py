"""Fixtures for the tests of grader/grading (the instructor's side of the TP)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def sample_answers() -> dict[str, str]:
    folder = ROOT / "grader" / "submissions"
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}
