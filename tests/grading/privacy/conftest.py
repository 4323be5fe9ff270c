"""The erasure's attack tests (test_erase_*.py) get the small class as fixtures, as before the
split: ``petite_classe``, a test's own copy of ``petite_classe_template`` (erase_scenes.py)."""

from __future__ import annotations

from erase_scenes import petite_classe, petite_classe_template

__all__ = ["petite_classe", "petite_classe_template"]
