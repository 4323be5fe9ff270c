"""The French summary of one class run: counts, out-of-date grades, failures, the log."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..french.french_format import seconds_text
from .nbgrader_log import Outcomes
from .submitted_ids import IdReport

__all__ = ["CHECKSUM_NOTE", "Summary"]

CHECKSUM_NOTE = (
    "avertissements « Attribute 'checksum' … has changed » de nbgrader dans le journal\u00a0: sans "
    "gravité (issue 1961 de nbgrader), voir « Ce que disent les avertissements » dans "
    "grader/README.md"
)


@dataclass
class Summary:
    """What one class run did, from nbgrader's log and gradebook."""

    students: list[str]
    outcomes: Outcomes
    stale: dict[str, str]  # skipped by nbgrader although their grade is out of date -> why
    seconds: float
    jobs: int
    status: int  # nbgrader's worst exit status
    log_path: Path
    note: str | None = None  # the gradebook had to be completed first
    ids: IdReport | None = None  # folders of submitted/ not matched to the class

    @property
    def ok(self) -> bool:
        ids_ok = self.ids is None or not self.ids.problems
        return not self.outcomes.failed and not self.stale and self.status == 0 and ids_ok

    def lines(self, assignment: str) -> list[str]:
        out = self.outcomes
        graded = len(out.done)
        per = f", {seconds_text(self.seconds / graded, 2)} par rendu noté" if graded else ""
        lines = [self.note] if self.note else []
        lines.append(
            f"{assignment}\u00a0: {graded} rendu(s) noté(s), {len(out.skipped)} déjà noté(s) "
            f"(laissé(s) tel(s) quel(s)), {len(out.failed)} en échec — {seconds_text(self.seconds)}"
            f"{per}, {self.jobs} processus."
        )
        if self.stale:
            lines.append(
                f"⚠ {len(self.stale)} rendu(s) sauté(s) par nbgrader alors que leur note n'est pas "
                "à jour\u00a0:"
            )
            lines += [f"  - {s}\u00a0: {why}" for s, why in self.stale.items()]
            lines.append(
                "  Pour les renoter\u00a0: make grade FORCE=1 (nbgrader autograde --force, qui "
                "renote tous les rendus)."
            )
        if out.failed:
            lines.append(f"✘ {len(out.failed)} rendu(s) en échec\u00a0:")
            lines += [f"  - {s}\u00a0: {why or 'voir le journal'}" for s, why in out.failed.items()]
        if self.status != 0 and not out.failed:
            lines.append(f"✘ nbgrader s'est arrêté en erreur (code {self.status}).")
        if out.checksum_warnings:
            lines.append(f"({out.checksum_warnings} {CHECKSUM_NOTE}.)")
        if self.ids is not None:
            lines += self.ids.lines()
        lines.append(f"Journal complet de nbgrader\u00a0: {self.log_path}")
        return lines
