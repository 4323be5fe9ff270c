"""``make collect``: stock ``nbgrader collect`` (``OwnerCheckedCollect``), said back in French from
its log (``rapport/collect.log``). A time shown is the deposit's, never the student's claim (an
earlier claim is named); an id not on the class list (``make grade`` would refuse it) is named
with the closest registered one and fails the command."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.utils import parse_utc

from .classroom.gradebook import gradebook_problem
from .classroom.ids import closest, normalize_id, quoted, registered_students, shown
from .classroom.paths import course_dirs
from .french.french_format import collation_key, french_datetime
from .nbgrader_ext import exchange  # the log lines it writes, the student's claimed time
from .runs.nbgrader_log import LOG_RECORD
from .runs.nbgrader_run import assignment_command, run_quiet

__all__ = ["CollectRecord", "collect", "main", "read_collect_log"]

_KIND_OF = {lead: kind for kind, lead in exchange.COLLECT_LINES.items()}
_NONE = "No submissions of "
_SET_ASIDE = re.compile(r"mise\(s\) de côté, non collectée\(s\)")
CLAIM_SLACK = 60  # seconds between nbgrader submit's own time and the copy's deposit


@dataclass
class CollectRecord:
    """What nbgrader's log says its collect did, student by student."""

    students: dict[str, list[str]] = field(default_factory=dict)  # kind -> ids
    nothing_to_collect: bool = False
    set_aside: list[str] = field(default_factory=list)  # the course's French lines, one per copy
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (folder, its files not taken)
    unconfined: str = ""  # why the copier ran without Landlock (French), "" when confined

    def of(self, kind: str) -> list[str]:
        return sorted(self.students.get(kind, []), key=collation_key)


def read_collect_log(log: str, assignment: str) -> CollectRecord:
    """The students of each kind in an ``nbgrader collect`` log, and the copies set aside."""
    record = CollectRecord()
    suffix = f" {assignment}"
    in_set_aside = False
    for line in log.splitlines():
        match = LOG_RECORD.match(line)
        if not match:  # a record's continuation: the log indents what follows
            if in_set_aside and line.lstrip().startswith("- "):
                record.set_aside.append(line.lstrip()[2:])
            continue
        text = match["text"]
        in_set_aside = bool(_SET_ASIDE.search(text))
        if text.startswith(exchange.IGNORED_LEAD):
            folder, _, names = text[len(exchange.IGNORED_LEAD) :].partition(exchange.IGNORED_SEP)
            record.ignored.append((folder, names))
        if text.startswith(exchange.UNCONFINED_LEAD):
            record.unconfined = text[len(exchange.UNCONFINED_LEAD) :]
        if text.startswith(_NONE):
            record.nothing_to_collect = True
        lead, sep, rest = text.partition(exchange.LEAD_SEP)
        kind = _KIND_OF.get(lead)
        if kind and sep and rest.endswith(suffix):
            record.students.setdefault(kind, []).append(rest[: -len(suffix)])
    return record


_UPDATE_HINT = " (un rendu plus récent\u00a0: make collect ARGS=--update)"
# what the summary says of each kind of student: its words, with the copy's time, a hint
_SUMMARY = (
    ("collected", "rendu(s) ramassé(s)", True, ""),
    ("updated", "rendu(s) remplacé(s) par un plus récent", True, ""),
    ("unchanged", "déjà ramassé(s), rien de plus récent", False, ""),
    ("already", "déjà ramassé(s), gardé(s) tel(s) quel(s)", False, _UPDATE_HINT),
)


def _stamp(folder: Path) -> str:
    """The submission's time (``timestamp.txt``) in the course's time zone."""
    try:
        text = (folder / "timestamp.txt").read_bytes().decode("utf-8", "replace").strip()
    except OSError:
        return ""
    try:
        return french_datetime(parse_utc(text))
    except (ValueError, OverflowError):
        return shown(text)  # as nbgrader would fail to read it: shown as it is, inert


def _early_claim(folder: Path) -> str:
    """The student's claimed time when it is earlier than the deposit (French), else ""."""
    try:
        claim = parse_utc((folder / exchange.CLAIMED_TIMESTAMP).read_text(encoding="utf-8").strip())
        deposit = parse_utc((folder / "timestamp.txt").read_text(encoding="utf-8").strip())
    except (OSError, ValueError, OverflowError):
        return ""
    if (deposit - claim).total_seconds() <= CLAIM_SLACK:
        return ""
    return f"heure déclarée {french_datetime(claim)}, déposé le {french_datetime(deposit)}"


def collect(
    assignment: str, nbgrader_args: list[str], grader_dir: Path | None = None
) -> tuple[int, list[str]]:
    """Collect `assignment` from the exchange; (exit status, French summary lines)."""
    dirs = course_dirs(grader_dir)
    if why := gradebook_problem(dirs, missing_ok=True):  # else a traceback, after nbgrader's copy
        return 2, [f"✘ Rien n'a été ramassé\u00a0: {why}."]
    run = run_quiet(
        dirs.grader_dir, ["collect", assignment, *nbgrader_args], dirs.log_file("collect")
    )
    record = read_collect_log(run.log, assignment)
    submitted = dirs.submitted
    lines = [f"Ramassage de {quoted(assignment)} dans l'échange de nbgrader\u00a0:"]
    if record.nothing_to_collect:
        lines.append("  - aucun rendu déposé pour l'instant")
    for kind, what, stamped, after in _SUMMARY:
        if students := record.of(kind):
            names = ", ".join(
                f"{quoted(s)} ({stamp})"
                if stamped and (stamp := _stamp(submitted / s / assignment))
                else quoted(s)
                for s in students
            )
            lines.append(f"  - {len(students)} {what}\u00a0: {names}{after}")
    for folder, names in record.ignored:
        lines.append(
            f"  - fichiers non ramassés (seuls les notebooks du devoir le sont) dans "
            f"{shown(folder)}\u00a0: {shown(names)}"
        )
    if record.unconfined:
        lines.append(
            f"ℹ Copie faite sans confinement ({shown(record.unconfined)}) : avec tous les "
            "droits de l'enseignant, sans le mur qui interdit au copieur de lire le carnet de "
            "notes (les mêmes vérifications sur chaque fichier, aucun lien suivi)."
        )
    taken = record.of("collected") + record.of("updated")
    if early := [(s, why) for s in taken if (why := _early_claim(submitted / s / assignment))]:
        lines.append(
            f"⚠ {len(early)} rendu(s) dont l'heure déclarée par l'élève précède le dépôt dans "
            "l'échange (l'heure retenue, pour le retard aussi, est celle du dépôt)\u00a0:"
        )
        lines += [f"    {quoted(s)}\u00a0: {why}" for s, why in early]
    if record.set_aside:
        lines.append(
            f"✘ {len(record.set_aside)} rendu(s) mis de côté, non ramassé(s) "
            f"(gardés dans {dirs.quarantine / assignment})\u00a0:"
        )
        lines += [f"    {shown(item)}" for item in record.set_aside]
    registered = registered_students(dirs.db_url)  # none: no class list to check against
    known = {normalize_id(s) for s in registered}
    strangers = [s for s in taken if normalize_id(s) not in known] if registered else []
    if strangers:
        lines.append(
            f"✘ {len(strangers)} rendu(s) ramassé(s) au nom d'un élève non inscrit "
            "(make grade les refusera\u00a0; inscrivez-les avec make students)\u00a0:"
        )
        for student in strangers:
            hint = closest(student, registered)
            near = f"\u00a0; le plus proche inscrit est {quoted(hint)}" if hint else ""
            lines.append(f"    {quoted(student)}{near}")
    if run.status and not record.set_aside:  # otherwise the set-aside copies are the failure
        lines.append(run.failure(f"ramassage de {quoted(assignment)}"))
    lines.append(f"Journal de nbgrader\u00a0: {run.log_path}")
    return int(bool(record.set_aside or strangers or run.status)), lines


def main(argv: list[str] | None = None) -> int:
    return assignment_command(
        argv,
        "python -m grading.collect",
        "Ramasse les rendus déposés dans l'échange de nbgrader (nbgrader collect) "
        "et dit en français ce qui a été ramassé, remplacé ou mis de côté. Les autres options "
        "vont à nbgrader (--update, --student=…).",
        collect,
        "make collect",
    )


if __name__ == "__main__":
    raise SystemExit(main())
