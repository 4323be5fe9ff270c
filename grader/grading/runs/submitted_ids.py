"""The folders of ``submitted/`` matched against the class before grading, never guessed: a macOS
name (``chlo`` + U+0301) renamed to NFC ``chloé`` when none exists (not a ghost student); a
submission holding a link, fifo, device or hard link refused, never followed (nbgrader would copy
its target, the gradebook or ``/etc/shadow``, into the graded copy, the feedback, the export); an
unregistered folder (``zoe``), a notebook outside ``<id>/<assignment>/`` or not of the assignment
(``oublier (1).ipynb``) named with the closest name, left out, and failed."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nbformat.validator import get_validator

from ..classroom.gradebook import sqlite_path
from ..classroom.ids import (
    closest,
    normalize_id,
    quoted,
    registered_students,
    shown,
    stored_id_problem,
)
from ..classroom.paths import TOO_DEEP, TOO_LONG, not_regular
from .nbgrader_run import student_pattern
from .read_cost import costly_reads

__all__ = [
    "IdReport",
    "check_submitted_ids",
    "expected_notebooks",
    "matching",
    "submitted_students",
    "unknown_student_message",
]


@dataclass
class IdReport:
    problems: dict[str, str] = field(default_factory=dict)  # folder or file -> why (French)
    excluded: set[str] = field(default_factory=set)  # folders left out of the grading
    notes: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)  # student -> why (French): a failure

    def lines(self) -> list[str]:
        out = list(self.notes)
        if self.problems:
            out += [f"✘ {len(self.problems)} rendu(s) non noté(s), à renommer ou déplacer\u00a0:"]
            out += [f"  - {name}\u00a0: {why}" for name, why in sorted(self.problems.items())]
        return out

    def refused_lines(self) -> list[str]:
        """The refused submissions, when no grading summary names them."""
        if not self.refused:
            return []
        out = [f"✘ {len(self.refused)} rendu(s) refusé(s)\u00a0:"]
        return out + [f"  - {name}\u00a0: {why}" for name, why in sorted(self.refused.items())]


def _strange_entries(
    folder: Path, shown_as: str, gradebook: Path | None, levels: int
) -> str | None:
    """Why `folder` (`levels` below grader/) cannot be graded (``classroom.paths.not_regular``),
    in French, or None."""
    found = not_regular(folder, [gradebook] if gradebook else [], levels)
    if not found:
        return None
    named = shown(
        "\u00a0; ".join(f"{shown_as}/{rel} ({what})".replace("/. (", " (") for rel, what in found)
    )
    if any(what.startswith((TOO_DEEP, TOO_LONG)) for _, what in found):
        return (
            f"dossiers trop profonds, jamais lus ni copiés (dossier laissé tel quel)\u00a0: "
            f"{named}. Déplacez ce dossier hors du cours (ou supprimez-le), puis relancez."
        )
    return (
        f"{len(found)} entrée(s) qui ne sont pas de simples fichiers, jamais lues ni copiées "
        f"(dossier laissé tel quel)\u00a0: {named}. Remplacez-les par les fichiers eux-mêmes, "
        "puis relancez."
    )


# nbformat reports each invalid output, attachment or cell of a notebook it reads at about 44 kB
# and 0.25 ms, as the instructor, outside the sandbox: 150,000 empty outputs in a 470 kB file
# took 7 GB and 71 s; the same in an old format's worksheets or as attachments
MAX_ITEMS = 2000


def _invalid(nb: dict) -> bool:
    """Whether fastjsonschema (nbformat's first check, fast) finds `nb` invalid: nbformat then
    reads it again with jsonschema, at a cost read_cost measures."""
    minor = nb.get("nbformat_minor")
    try:
        get_validator(
            version=4, version_minor=minor if type(minor) is int else None, name="fastjsonschema"
        ).validate(nb)
    except Exception:  # noqa: BLE001 - fastjsonschema's own errors: invalid, whatever the kind
        return True
    return False


def _notebook_problem(notebook: Path) -> tuple[str | None, bool]:
    """Why nbgrader must not read `notebook` (French): too many outputs, or a lone half of a
    surrogate pair (« \\ud800 », which a browser saves and nbgrader cannot write back, failing
    the submission on every run); None when it may (one it cannot parse, it names). And
    whether it is invalid (its reading is then measured before nbgrader's: read_cost)."""
    try:
        nb = json.loads(notebook.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None, False
    if not isinstance(nb, dict):
        return None, False  # no notebook: nbgrader names it, at no cost
    if type(nb.get("nbformat")) is int and nb["nbformat"] < 4:  # its worksheets: as costly
        return (
            "notebook d'un ancien format, que JupyterLab n'écrit plus\u00a0: demandez à l'élève "
            "de l'ouvrir dans JupyterLab, de l'enregistrer, puis de le rendre de nouveau"
        ), False
    cells = nb.get("cells") if isinstance(nb.get("cells"), list) else []
    items = len(cells) + sum(
        len(c.get(key) or ())
        for c in cells
        if isinstance(c, dict)
        for key in ("outputs", "attachments")
        if isinstance(c.get(key), list | dict)
    )
    if items > MAX_ITEMS:
        return (
            f"{items} cellules, sorties et pièces jointes, au-delà des {MAX_ITEMS} qu'il peut "
            "avoir (les lire coûterait des gigaoctets)\u00a0: demandez à l'élève d'effacer les "
            "sorties (Édition > Effacer toutes les sorties), puis de le rendre de nouveau"
        ), False
    try:
        json.dumps(nb, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return (
            "un caractère qui n'existe pas seul (une moitié de paire de substitution, U+D800 à "
            "U+DFFF), que nbgrader ne sait pas écrire\u00a0: demandez à l'élève de retirer ce "
            "caractère, puis de le rendre de nouveau"
        ), False
    return None, _invalid(nb)


def expected_notebooks(dirs, assignment: str) -> list[str]:
    """The notebooks an assignment's submission holds: its release's, else its source's."""
    for folder in (dirs.release / assignment, dirs.source / assignment):
        if names := sorted(p.name for p in folder.glob("*.ipynb")):
            return names
    return []


def check_submitted_ids(dirs, assignment: str) -> IdReport:
    """Check (and NFC-rename) the folders of ``dirs.submitted`` for `assignment`."""
    report = IdReport()
    submitted: Path = dirs.submitted
    if not submitted.is_dir():
        return report
    db_file = sqlite_path(dirs.db_url)
    registered = [normalize_id(s) for s in registered_students(dirs.db_url)]  # read-only
    expected = expected_notebooks(dirs, assignment)
    measured: dict[Path, str] = {}  # invalid notebooks -> student: their reading measured
    for folder in sorted(p for p in submitted.iterdir() if p.is_dir()):
        name = folder.name
        nfc = normalize_id(name)
        if nfc != name:
            target = submitted / nfc
            if target.exists():
                report.problems[name] = (
                    f"même identifiant que le dossier {quoted(nfc)} (écrit autrement en "
                    "Unicode)\u00a0: fusionnez-les à la main"
                )
                report.excluded.add(name)
                continue
            folder.rename(target)
            report.notes.append(
                f"Dossier {quoted(nfc)} réécrit en Unicode NFC (les accents de son nom étaient "
                "décomposés, comme les écrit macOS\u00a0: «\u00a0e\u00a0» + accent combinant "
                "au lieu de «\u00a0é\u00a0»\u00a0; même nom à l'écran, même identifiant)."
            )
            folder, name = target, nfc
        problem = stored_id_problem(name)
        if problem is None and registered and name not in registered:
            hint = closest(name, registered)
            problem = "pas un élève inscrit" + (
                f"\u00a0; le plus proche inscrit est {quoted(hint)}" if hint else ""
            )
        if problem:
            report.problems[f"{name}/"] = problem
            report.excluded.add(name)
            continue
        # what nbgrader copies, links followed: the assignment's folder (or a linked student's)
        if folder.is_symlink():
            why = _strange_entries(folder, name, db_file, 2)
        else:
            why = _strange_entries(folder / assignment, f"{name}/{assignment}", db_file, 3)
        if why:
            report.refused[name] = why
            report.excluded.add(name)
            continue
        for stray in sorted(folder.glob("*.ipynb")):
            report.problems[f"{name}/{stray.name}"] = (
                f"notebook hors du dossier {quoted(assignment)}\u00a0: attendu dans "
                f"{name}/{assignment}/"
            )
            report.excluded.add(name)
        inner = folder / assignment
        if not inner.is_dir() or not expected:
            continue
        for notebook in sorted(inner.glob("*.ipynb")):
            if normalize_id(notebook.name) in expected:
                why, invalid = _notebook_problem(notebook)
                if why:
                    report.refused[name] = f"{notebook.name}\u00a0: {why}"
                    report.excluded.add(name)
                elif invalid:
                    measured[notebook] = name
                continue
            hint = closest(notebook.name, expected)
            report.problems[f"{name}/{assignment}/{notebook.name}"] = (
                f"pas un notebook de {quoted(assignment)}"
                + (f"\u00a0; attendu\u00a0: {quoted(hint)}" if hint else "")
            )
            report.excluded.add(name)
    for notebook, why in costly_reads(list(measured)).items():
        report.refused[measured[notebook]] = f"{notebook.name}\u00a0: {why}"
        report.excluded.add(measured[notebook])
    return report


def unknown_student_message(assignment: str, pattern: str, submitted: list[str]) -> str:
    """French sentence for a ``--student`` that matches no submission: who did submit."""
    who = ", ".join(submitted) if submitted else "personne"
    hint = closest(pattern, submitted) if not any(c in pattern for c in "*?[") else None
    near = f" Vouliez-vous dire {quoted(hint)}\u00a0?" if hint else ""
    return (
        f"Aucun rendu de {quoted(assignment)} pour {quoted(pattern)}. Rendus présents\u00a0: "
        f"{who}.{near}"
    )


def matching(pattern: str, students: list[str]) -> list[str]:
    """Students an nbgrader ``--student`` glob names, compared in NFC."""
    pattern = normalize_id(pattern)
    return [s for s in students if fnmatch.fnmatchcase(normalize_id(s), pattern)]


def submitted_students(submitted: Path, assignment: str, args: Sequence[str] = ()) -> list[str]:
    """Students who have a submission of `assignment` in `submitted` (those nbgrader's
    ``--student`` in `args` names)."""
    if not submitted.is_dir():
        return []
    found = sorted(p.name for p in submitted.iterdir() if (p / assignment).is_dir())
    return matching(pattern, found) if (pattern := student_pattern(args)) else found
