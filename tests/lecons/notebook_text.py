"""What the lesson tests read in a notebook: a cell's tags, its markdown, a cell's printed
text; one copy each (non-breaking spaces read as spaces, so a claim is written once)."""

from __future__ import annotations

__all__ = ["NBSP", "markdown", "tags", "text_of"]

NBSP = "\u00a0"


def tags(cell) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


def markdown(nb) -> str:
    """Every markdown cell's source, joined."""
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown").replace(NBSP, " ")


def text_of(nb, cell_id: str) -> str:
    """Everything a cell printed or displayed as text, joined."""
    cell = next(c for c in nb.cells if c.get("id") == cell_id)
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif "data" in out:
            parts.append(out.data.get("text/plain", ""))
    return "".join(parts).replace(NBSP, " ")
