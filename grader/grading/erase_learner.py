"""Erase one learner from the whole class system, and prove it with a control (RGPD article 17).

``make oublier-eleve ID=ben`` lists every place (``privacy.learner_places``), touching nothing;
``CONFIRMER=1`` erases them, then proves it: the same scan finds nothing of them, still finds the
control (``--temoin``, default another learner) everywhere it was, and the others' export rows
are unchanged; a failure is named in French (status 1). A second run erases nothing."""

from __future__ import annotations

import dbm
import html
import json
import os
import pwd
import shutil
import sqlite3
import sys
import zipfile
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from .classroom.class_lock import ERASING, class_lock
from .classroom.class_places import FAILURES_FILE, FAILURES_TMP, own_folders, registered_ids
from .classroom.ids import closest, normalize_id, quoted, read_roster
from .classroom.kept_columns import read_table, restore_hand_edits
from .french.french_args import FrenchParser
from .french.french_csv import EXPORT_NAME, write_export
from .french.french_format import french_day
from .french.system_reason import GradingError, french_message
from .nbgrader_ext.late_penalty import rule_of_config
from .nbgrader_ext.safe_export import SafeCsvExport
from .privacy import learner_places as places
from .privacy.backup_files import RETENTION_DAYS, retention_days
from .privacy.erasure_register import erased_on, record_erasure, registers_of, write_private
from .privacy.learner_places import Context, ErasureError, Found, Scan, Setup, scan

__all__ = ["Result", "Setup", "erase", "main", "scan", "temporary_name"]

READERS_WAIT_MS = 20_000  # how long the final checkpoint waits for another program's reads


def temporary_name(name: str) -> str:
    """The name of the next version of the file `name` while the erasure writes it, beside it,
    before it replaces it. One a kill -9 left is no learner's: the erasure run again removes it
    (``ERASING`` names it), and so does a restore run again (backup._remove_left), as their
    proof would otherwise count it."""
    return f".{name}.oubli"


def _next_versions(ctx: Context, found: list[Found]) -> list[Path]:
    """Where the erasure of `found` writes the next version of each file it rewrites: the logs,
    the mentions and the archives, the roster, and the reports (their folder's new version)."""
    files = {Path(f.target[0]) for f in found if f.action in ("log", "mention", "zip")}
    files |= {ctx.setup.roster for f in found if f.action == "roster"}
    reports = {Path(f.target) for f in found if f.action == "report"}
    files |= reports | ({ctx.dirs.report} if reports else set())
    return sorted(p.with_name(temporary_name(p.name)) for p in files)


def _unfinished(ctx: Context) -> list[Path]:
    """The next versions an erasure of this class was writing when it stopped (``ERASING``)."""
    top = ctx.dirs.grader_dir
    try:
        marked = json.loads((top / ERASING).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    # relative to grader/: a copy of the class (a restore elsewhere) never names the original's
    return [top / m for m in marked if isinstance(m, str)] if isinstance(marked, list) else []


def _mark_unfinished(ctx: Context, paths: list[Path]) -> None:
    """``ERASING`` naming `paths` (removed when none is left)."""
    top = ctx.dirs.grader_dir
    marker = top / ERASING
    names = {str(p.relative_to(top)) if p.is_relative_to(top) else str(p) for p in paths}
    if names:
        write_private(marker, json.dumps(sorted(names), ensure_ascii=False).encode())
    else:
        marker.unlink(missing_ok=True)


def _left(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _remove_left(ctx: Context) -> list[Path]:
    """The next versions a stopped erasure (kill -9, Ctrl-C, a machine off) left beside the
    files it rewrote, removed: only those ``ERASING`` names by their exact place, each written
    by it (``_claim``), and only a file or a folder, never through a link."""
    removed = []
    for left in _unfinished(ctx):
        if not left.is_symlink() and (left.is_file() or left.is_dir()):
            _rm(left)
            removed.append(left)
    _release(ctx)
    return removed


def _claim(ctx: Context, found: list[Found]) -> None:
    """Where the erasure of `found` writes its next versions, named in ``ERASING`` before it
    writes any; refused if a file is there already: not one it wrote, never overwritten."""
    mine = _next_versions(ctx, found)
    for left in mine:
        if _left(left):
            of = left.name.removeprefix(".").removesuffix(".oubli")
            raise ErasureError(
                f"Rien n'a été effacé\u00a0: {left} existe déjà, et cette commande ne l'a pas "
                f"écrit (elle y écrirait la nouvelle version de «\u00a0{of}\u00a0»)\u00a0: "
                "déplacez-le (ou, s'il n'est à personne, supprimez-le), puis relancez."
            )
    _mark_unfinished(ctx, [*_unfinished(ctx), *mine])


def _release(ctx: Context) -> None:
    """The next versions that replaced their files (or were removed) out of ``ERASING``."""
    _mark_unfinished(ctx, [p for p in _unfinished(ctx) if _left(p)])


def _rm(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)  # by file descriptors: a link swapped in meanwhile is never followed
    elif path.exists() or path.is_symlink():
        path.unlink()


def _erase_gradebook(ctx: Context, db: Path, ids: list[str]) -> None:
    """The learner's rows (`ids`: each Unicode spelling the gradebook holds) out with nbgrader's
    API, then the file rebuilt: no trace left in free pages or in ``-wal``."""
    if ids:
        with Gradebook(ctx.dirs.db_url) as gb:
            for stored in ids:
                with suppress(MissingEntry):
                    gb.remove_student(stored)
    con = sqlite3.connect(db, timeout=60)  # a grading's write transactions are short
    try:
        con.execute("PRAGMA secure_delete = ON")
        con.execute("PRAGMA wal_checkpoint(PASSIVE)")  # what it can, never waiting on readers
        con.execute("VACUUM")
        con.execute(f"PRAGMA busy_timeout = {READERS_WAIT_MS}")  # one wait for the readers
        if con.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]:  # (busy, log, done)
            # a reader (formgrader, a grading) of an old copy: -wal and its pages hold the learner
            raise sqlite3.OperationalError("database is read by another program")
    except sqlite3.OperationalError as exc:
        raise ErasureError(
            f"VACUUM impossible sur {db} ({exc})\u00a0: une notation est-elle en cours\u00a0? "
            "Relancez la commande quand elle est finie."
        ) from None
    finally:
        con.close()


def _rewrite_zip(
    file: Path, mine: list[str], redact: tuple[str, Callable[[bytes], bytes]] | None = None
) -> None:
    """The archive without the members `mine`, or with one member redacted (`redact`: its name
    and its cleaner); every other member keeps its name, date, attributes, compression, bytes."""
    with zipfile.ZipFile(file) as src:
        keep = [i for i in src.infolist() if i.filename not in set(mine)]
        if not keep:
            file.unlink()
            return
        tmp = file.with_name(temporary_name(file.name))
        try:
            with zipfile.ZipFile(tmp, "w") as dst:
                dst.comment = src.comment
                for info in keep:
                    data = src.read(info)
                    if redact is not None and info.filename == redact[0]:
                        data = redact[1](data)
                    dst.writestr(info, data, compress_type=info.compress_type)
        except BaseException:
            tmp.unlink(missing_ok=True)  # the archive stays as it was; the failure is named
            raise
    os.replace(tmp, file)


def _redact(file: Path, member: str | None, pattern) -> None:
    """Replace every mention of the learner by a fixed text in one file, or in one member of an
    archive (the others keep their bytes); a notebook must stay a notebook."""

    def clean(data: bytes) -> bytes:
        out = pattern.sub(data, places.REDACTED.encode())
        # make grade's failure record, or its next version a stopped make grade left
        record = member is None and (
            file.name == FAILURES_FILE or file.name.startswith(FAILURES_TMP)
        )
        if (member or file.name).endswith((".ipynb", ".json")) or record:
            loaded = json.loads(out)  # ValueError: named, the file left as it was
            if record and isinstance(loaded, dict):
                # a failure record keyed by the learner: dropped whole, as its submission's
                # digest and time would still single them out under « [retiré] »
                for failures in loaded.values():
                    if isinstance(failures, dict):
                        failures.pop(places.REDACTED, None)
                out = json.dumps(loaded, ensure_ascii=False, indent=1, sort_keys=True).encode()
        return out

    if member is not None:
        return _rewrite_zip(file, [], (member, clean))
    tmp = file.with_name(temporary_name(file.name))
    try:
        tmp.write_bytes(clean(file.read_bytes()))
        shutil.copystat(file, tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)  # the file stays as it was; the failure is named
        raise
    os.replace(tmp, file)


def _erase_roster(ctx: Context, who_sid: str, line: int) -> None:
    """One roster line out, the others' bytes and encoding kept; read back before it replaces."""
    path = ctx.setup.roster
    before = read_roster(path)
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ErasureError(f"{path}\u00a0: liste en UTF-16, retirez la ligne {line} à la main.")
    lines = data.splitlines(keepends=True)
    if not (0 < line <= len(lines)):
        raise ErasureError(f"{path}\u00a0: ligne {line} introuvable.")
    tmp = path.with_name(temporary_name(path.name))
    tmp.write_bytes(b"".join(lines[: line - 1] + lines[line:]))
    fields = attrgetter("id", "first_name", "last_name", "email")
    try:
        if [fields(s) for s in read_roster(tmp)] != [fields(s) for s in before if s.id != who_sid]:
            raise ErasureError(
                f"{path}\u00a0: la ligne {line} ne se retire pas proprement (champ sur plusieurs "
                "lignes\u00a0?)\u00a0; retirez-la à la main."
            )
        shutil.copymode(path, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _regenerate_reports(ctx: Context, sid: str, paths: set[Path]) -> list[str]:
    """The reports without the learner, the teacher's hand edits kept; the French notes on them.
    Each is written beside (temporary_name), its hand edits put back, then replaces its file: a
    stop leaves every report whole, the old one (the learner in it: done again) or the new."""
    from .report import class_table, write_report  # pandas (1 to 2 s): only to rewrite one

    report = ctx.dirs.report
    pages = {report / n for n in ("notes.csv", "notes-tableur.csv", "rapport.html")}
    csvs = {p for p in paths if p.suffix == ".csv"}
    if pages & paths:  # write_report writes the three: each one's hand edits kept
        csvs |= {p for p in pages if p.suffix == ".csv" and p.is_file()}
    before, notes = {}, []
    for path in csvs:
        try:
            before[path] = read_table(path)
        except ValueError as exc:
            before[path] = None
            notes.append(f"{exc}\u00a0: ce qui y était ajouté à la main est perdu")
    written = report.with_name(temporary_name(report.name))  # write_report's folder
    new: dict[Path, Path] = {}  # each report: its next version
    with Gradebook(ctx.dirs.db_url) as gb:
        if pages & paths:
            page = report / "rapport.html"
            title = places.TITLE.search(page.read_text()) if page.is_file() else None
            assignment = html.unescape(title.group(1)) if title else "oublier"
            df = class_table(gb, assignment, ctx.dirs.autograded)
            written.mkdir(mode=0o700)
            write_report(df, written, assignment, rule_of_config(ctx.config))
            new |= {report / p.name: p for p in written.iterdir()}
        for path in paths - pages:
            tmp = path.with_name(temporary_name(path.name))
            if path.name == "grades.csv":
                SafeCsvExport(to=str(tmp)).export(gb)
            elif path.name == EXPORT_NAME:
                write_export(SafeCsvExport().rows(gb), tmp)
            else:
                continue
            new[path] = tmp
    for path in sorted(csvs):
        notes += restore_hand_edits(new[path], before[path], sid, path)
    for path, tmp in new.items():
        with suppress(FileNotFoundError):  # a new report: as private as the class folder
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    with suppress(FileNotFoundError):
        written.rmdir()
    return notes


def _hub_user_delete(ctx: Context, sid: str) -> None:
    status, _ = places.hub_request(ctx.setup, "DELETE", sid)
    if status not in (204, 404):
        raise ErasureError(f"Le hub refuse d'effacer «\u00a0{sid}\u00a0» (statut {status}).")


def _erase_firstuse(path: Path, sid: str) -> None:
    """Their key out of FirstUseAuthenticator's dbm; ``reorganize``, if any, rewrites the record."""
    with dbm.open(str(path), "w") as db:
        del db[sid.encode()]
        if hasattr(db, "reorganize"):
            db.reorganize()


def _erase_home(ctx: Context, sid: str, home: Path) -> None:
    """The learner's home, only under the homes folder named, and only if it is theirs."""
    homes = ctx.setup.homes.resolve()
    if home.resolve().parent != homes or home.is_symlink():
        raise ErasureError(f"{home}\u00a0: pas un dossier de {homes}, laissé tel quel.")
    owner, expected = home.stat().st_uid, None
    with suppress(KeyError):
        expected = pwd.getpwnam(f"{ctx.setup.unix_prefix}{sid}").pw_uid
    if owner == 0 or (expected is not None and owner != expected):
        raise ErasureError(
            f"{home}\u00a0: appartient à l'uid {owner}, pas à l'élève\u00a0; laissé tel quel."
        )
    shutil.rmtree(home)


def _apply(ctx: Context, sid: str, found: list[Found], notes: list[str]) -> list[str]:
    """Erase every place; the failures, each in one French sentence (the rest to `notes`)."""
    failures: list[str] = []
    reports: set[Path] = set()
    erasers: dict[str, Callable[[Found], object]] = {  # in this order
        "log": lambda f: _redact(*f.target),
        # another learner's work: only with --caviarder, named by erase() otherwise
        "mention": lambda f: _redact(*f.target) if ctx.setup.redact else None,
        "hub_user": lambda f: _hub_user_delete(ctx, sid),
        "firstuse": lambda f: _erase_firstuse(Path(f.target), sid),
        "home": lambda f: _erase_home(ctx, sid, Path(f.target)),
        "tree": lambda f: _rm(Path(f.target)),
        "zip": lambda f: _rewrite_zip(*f.target),
        "roster": lambda f: _erase_roster(ctx, sid, f.target),
        "gradebook": lambda f: _erase_gradebook(ctx, f.target[0], f.target[1] or [sid]),
        "vacuum": lambda f: _erase_gradebook(ctx, f.target[0], []),  # free pages only
        "report": lambda f: reports.add(Path(f.target)),
    }
    for action, erase_one in erasers.items():
        for f in (x for x in found if x.action == action):
            try:
                erase_one(f)
            except Exception as exc:  # noqa: BLE001 — every place is tried, each failure named
                failures.append(f"{f.kind} ({f.where})\u00a0: {french_message(exc, f.where)}")
    if reports:
        try:
            notes += _regenerate_reports(ctx, sid, reports)
        except Exception as exc:  # noqa: BLE001
            failures.append(f"rapport\u00a0: régénération impossible ({french_message(exc)})")
    return failures + [
        f"{f.kind} ({f.where})\u00a0: effacez l'utilisateur par l'API du hub "
        f"(--hub-url et le jeton d'un administrateur dans {places.HUB_TOKEN_ENV})"
        for f in found
        if f.action == "hub_db"
    ]


def _export_rows(ctx: Context, without: str) -> list[dict]:
    """Every row of nbgrader's CSV export except the learner's."""
    if ctx.gradebook is not None and not ctx.gradebook.is_file():
        return []
    with Gradebook(ctx.dirs.db_url) as gb:
        rows = SafeCsvExport().rows(gb)
    return [r for r in rows if normalize_id(r["student_id"]) != without]


@dataclass
class Result:
    before: Scan
    after: Scan | None
    control_before: Scan | None
    control_after: Scan | None
    failures: list[str]
    notes: list[str] = field(default_factory=list)  # for the teacher: hand edits kept or lost
    erased: str | None = None  # the register's date (AAAA-MM-JJ) of an earlier erasure


def _described(f: Found) -> str:
    return f"{f.kind} ({f.where}{' — ' + f.detail if f.detail else ''})"


def erase(
    sid: str,
    setup: Setup,
    confirm: bool,
    control: str | None = None,
    record: bool = True,
    restoring: bool = False,
) -> Result:
    """Scan, then (confirmed) erase and prove it: rescan, control, others' export rows. Not
    `record`: the register left as it is (a restore, from a backup older than their re-enrolment,
    erasing a learner enrolled again). `restoring`: a restore erasing what it just wrote of
    them; files to clean by hand do not hold back the rest, they stay failures of the proof."""
    sid = places.checked_id(sid)
    ctx = Context(setup)
    if control:
        witness = normalize_id(control.strip())
    else:  # another registered learner (a class that registered nobody: its folders), with work
        roster_ids = (s.id for s in places.roster_students(setup.roster))
        others = (registered_ids(ctx.dirs, roster_ids) or ctx.known) - {sid}
        submitted = ctx.dirs.submitted
        witness = min(others, key=lambda i: (not own_folders(submitted, i), i), default=None)
    if witness == sid:
        raise ErasureError("Le témoin doit être un autre élève que celui à effacer.")
    left = _remove_left(ctx) if confirm else []  # a stopped erasure's: before any scan
    before = places.scan_in(ctx, sid)
    registers = registers_of(ctx.gradebook.parent, ctx.backups)  # scan_in refused any other
    erased = erased_on(sid, registers)
    by_others = ("mention", "log", places.BY_HAND)  # in others' files: not a learner's own place
    if not [f for f in before.found if f.action not in by_others] and erased is None:
        raise places.unknown_id(sid, ctx.known)  # read only: no gradebook created
    control_before = places.scan_in(ctx, witness) if witness else None
    if control and control_before is not None and not control_before.found:  # a typo
        hint = closest(witness, sorted(ctx.known - {sid}))
        raise ErasureError(
            f"Témoin {quoted(witness)} trouvé nulle part : la recherche ne prouverait rien."
            + (f" Vouliez-vous dire {quoted(hint)} ?" if hint else "")
            + " Rien n'a été effacé (--temoin, un élève encore présent)."
        )
    if not confirm or not before.found:
        return Result(before, None, control_before, None, [], erased=erased)
    if control_before is None or not control_before.found:
        raise ErasureError(
            f"Aucun témoin trouvé ({quoted(witness) if witness else 'aucun autre élève'})\u00a0: "
            "sans lui, l'effacement ne pourrait pas être prouvé. Rien n'a été effacé "
            "(--temoin, un élève encore présent)."
        )
    # a learner is in the class (gradebook, roster, submissions) or a plain user of the hub, never
    # an admin or instructor of the hub, whatever else is found; erased before: what is left
    staff = any(f.action == "hub_user" and f.target for f in before.found)
    known = erased is not None or any(
        f.kind in ("carnet de notes", "liste des élèves", "rendus")
        or (f.action == "hub_user" and not f.target)
        for f in before.found
    )
    if staff or not known:
        raise ErasureError(
            f"{quoted(sid)} n'est ni dans la liste des élèves, ni dans le carnet de notes, ni "
            "dans submitted/\u00a0: ce n'est pas un élève du cours (un enseignant, un "
            "assistant\u00a0?). Rien n'a été effacé."
        )
    by_hand = [f for f in before.found if f.action == places.BY_HAND]
    if by_hand and not restoring:
        # never rewritten, and found by nothing after the erasure: the teacher's, before anything
        raise ErasureError(
            f"Rien n'a été effacé\u00a0: {before.who.identity()} est encore, ou peut-être encore "
            f"(«\u00a0à vérifier à la main\u00a0»), dans {len(by_hand)} endroit(s) que cette "
            "commande ne réécrit pas ou ne lit pas en entier (une base SQLite, une archive ou un "
            "fichier binaire qu'une réécriture abîmerait, un fichier hors des dossiers de données "
            "de la classe, un PDF, un fichier illisible, un dossier à un identifiant presque le "
            f"sien)\u00a0: {', '.join(map(_described, by_hand))}. Supprimez-les (ou retirez-en "
            "l'élève à la main\u00a0; ce qui est à un autre élève, mettez-le de côté le temps de "
            "l'effacement), puis relancez\u00a0; tant qu'ils peuvent contenir ses données, la "
            "preuve ne peut pas être faite."
        )
    mentions = [f for f in before.found if f.action == "mention"]
    if mentions and not setup.redact:
        # after the erasure nothing knows her name to find them: the teacher decides first
        raise ErasureError(
            f"Rien n'a été effacé\u00a0: {before.who.identity()} est nommé(e) dans {len(mentions)} "
            "endroit(s) du travail d'autres élèves ou de fichiers de la classe (listés par "
            f"l'essai à blanc, make oublier-eleve ID={sid}). Relisez-les, puis relancez avec "
            f"CAVIARDER=1 (make oublier-eleve ID={sid} CONFIRMER=1 CAVIARDER=1)\u00a0: chaque "
            f"mention y sera remplacée par «\u00a0{places.REDACTED}\u00a0» dans toutes les copies, "
            "notes inchangées. Sans cela, la preuve ne pourrait pas être faite (après "
            "l'effacement, son nom et son courriel ne sont plus connus)."
        )
    rows_before = _export_rows(ctx, sid)
    notes = [f"version inachevée d'un effacement interrompu supprimée\u00a0: {p}" for p in left]
    _claim(ctx, before.found)
    # recorded first: a restore, a roster import or a collect never brings them back unseen
    if record:
        record_erasure(sid, registers)
    failures = _apply(ctx, sid, before.found, notes)
    _release(ctx)
    after = places.scan_in(ctx, sid, before.who)  # her names: no longer in roster or gradebook
    control_after = places.scan_in(ctx, witness)
    failures += [f"encore trouvé après l'effacement\u00a0: {_described(f)}" for f in after.found]
    # the control's every place, member and count as it was: another learner touched shows
    after_places = {f.key() for f in control_after.found}
    lost = [f for f in control_before.found if f.key() not in after_places]
    if lost:
        failures.append(
            f"le témoin {quoted(witness)} n'est plus trouvé tel qu'il était dans\u00a0: "
            f"{', '.join(map(_described, lost))} (un autre élève a été touché, ou la recherche "
            "ne prouve plus rien)"
        )
    if _export_rows(ctx, sid) != rows_before:
        failures.append("les lignes de nbgrader export des autres élèves ont changé")
    return Result(before, after, control_before, control_after, failures, notes, erased)


def _print_scan(title: str, s: Scan) -> None:
    print(f"{title} {s.who.identity()}\u00a0: {len(s.found)} endroit(s).")
    for f in s.found:
        print(f"  - {f.kind}\u00a0: {f.where}" + (f" — {f.detail}" if f.detail else ""))


def _print_pending(s: Scan) -> None:
    if s.pending:
        print("Ne peut pas être effacé tout de suite (à purger)\u00a0:")
    for p in s.pending:
        print(f"  - {p.kind}\u00a0: {p.where} — expire {p.expires}\n      purge\u00a0: {p.command}")


OUTSIDE = (
    "l'ENT ou la plateforme (Moodle, Pronote…) d'où viennent les archives : son compte, ses "
    "dépôts, l'archive téléchargée sur votre ordinateur",
    "votre tableur maître de la classe (la liste d'où vient make students) et ses copies",
    "les courriels échangés avec l'élève ou à son sujet, et leurs pièces jointes",
    "les copies imprimées, clés USB et dossiers partagés où vous auriez mis ses travaux",
    "l'historique git du dépôt du cours (ses branches et étiquettes), et de ses clones dans "
    "grader/, si vous y avez versionné des données de la classe (git log --all -S <son "
    "identifiant> les montre\u00a0; git gc --prune=now efface ce qu'un git add annulé a "
    "gardé)\u00a0; le reste d'un dépôt git dans grader/ est cherché",
)
KEEP_HELP = f"leur durée de conservation, en jours (défaut\u00a0: {RETENTION_DAYS:g})"
# the options that name a place of the class system: (option, Setup field, type, value, help)
PLACE_OPTIONS = (
    ("--eleves", "roster", Path, "CSV", "la liste des élèves (CSV)"),
    ("--echange", "exchange", Path, "DOSSIER", "Exchange.root de nbgrader"),
    ("--hub-url", "hub_url", str, "URL", "API du hub, ex. http://127.0.0.1:8081/hub/api"),
    ("--hub-db", "hub_db", Path, "FICHIER", "la base SQLite du hub"),
    ("--dossiers-personnels", "homes", Path, "DOSSIER", "ex. /home"),
    ("--prefixe-unix", "unix_prefix", str, "PREFIXE", "ex. jupyter- (TLJH)"),
    ("--sauvegardes", "backups", Path, "DOSSIER", "le dossier des sauvegardes"),
    ("--garder-jours", "keep_days", retention_days, "JOURS", KEEP_HELP),
    ("--helm-release", "helm_release", str, "NOM", "la release Helm du hub (Kubernetes)"),
    ("--mots-de-passe-tljh", "firstuse_db", Path, "FICHIER", "ex. /opt/tljh/state/passwords.dbm"),
)


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.erase_learner",
        description="Effacer un élève de tout le système de la classe (RGPD, article 17), "
        "avec une preuve par un témoin. Sans --confirmer, rien n'est effacé.",
    )
    parser.add_argument("student_id", metavar="IDENTIFIANT", help="l'identifiant de l'élève")
    parser.add_argument("--confirmer", action="store_true", help="effacer vraiment")
    redact = "remplacer aussi ses mentions dans le travail des autres élèves (notes inchangées)"
    parser.add_argument("--caviarder", action="store_true", help=redact)
    parser.add_argument(
        "--temoin", metavar="IDENTIFIANT", help="l'élève témoin (défaut\u00a0: un autre)"
    )
    for option, name, kind, value, text in PLACE_OPTIONS:
        default = getattr(Setup, name)  # the dataclass's default
        parser.add_argument(option, dest=name, type=kind, default=default, metavar=value, help=text)
    parser.add_grader_dir("le dossier grader/ (défaut\u00a0: trouvé)")
    args = parser.parse_args(argv)
    token = os.environ.get(places.HUB_TOKEN_ENV)
    where = {name: getattr(args, name) for _, name, *_ in PLACE_OPTIONS}
    setup = Setup(grader_dir=args.grader_dir, hub_token=token, redact=args.caviarder, **where)
    try:
        if args.hub_url and not token:
            raise ErasureError(
                f"--hub-url demande le jeton d'un administrateur dans {places.HUB_TOKEN_ENV}."
            )
        if args.roster is not None and not args.roster.is_file():
            raise ErasureError(
                f"Liste des élèves introuvable\u00a0: {args.roster}. Rien n'a été effacé "
                "(sans elle, sa ligne resterait dans la liste)."
            )
        places.checked_id(args.student_id)  # a path or a control character: before any folder
        with class_lock(args.grader_dir, "make oublier-eleve"):
            result = erase(args.student_id, setup, args.confirmer, args.temoin)
    except (GradingError, FileNotFoundError) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    before, control = result.before, result.control_before
    if not before.found:
        print(
            f"Aucune trace de {before.who.identity()} dans le système de la classe\u00a0: "
            f"effacé(e) le {french_day(result.erased or '?')} (registre des effacements), "
            "rien à effacer."
        )
        if control is None or not control.found:
            print("✘ Et aucun témoin trouvé\u00a0: la recherche ne prouve rien.", file=sys.stderr)
            return 1
        print(
            f"Le témoin {control.who.identity()} est bien trouvé ({len(control.found)} "
            "endroit(s))\u00a0: la recherche fonctionne."
        )
        _print_pending(before)
        return 0
    _print_scan("Trouvé", before)
    if control is not None:
        _print_scan("Témoin (un autre élève, la preuve que la recherche trouve)", control)
    after = result.after
    if after is not None:
        print(
            f"Effacé\u00a0: {len(before.found) - len(after.found)} endroit(s).\n"
            f"Vérification de l'effacement\u00a0: {before.who.identity()} encore trouvé(e) dans "
            f"{len(after.found)} endroit(s) (0 attendu).\n"
            "Témoin (un autre élève, qui doit rester trouvé partout)\u00a0: "
            f"{result.control_after.who.identity()}, {len(control.found)} endroit(s) "
            f"avant, {len(result.control_after.found)} après."
        )
    _print_pending(after or before)
    print(
        "Hors de ce système, à effacer par vous (le registre des effacements empêche "
        "seulement leur retour dans la classe) :",
        *(f"  - {place}" for place in OUTSIDE),
        *(f"    - clone du dépôt du cours\u00a0: {where}" for where in before.course_copies),
        f"Si l'élève revient dans le cours : make students REINSCRIRE={before.who.sid} "
        "(sinon make students, make collect, make zip-collect et make restauration le refusent).",
        sep="\n",
    )
    if after is None:
        print(
            "Rien n'a été effacé (essai à blanc). Pour effacer\u00a0: make oublier-eleve "
            f"ID={before.who.sid} CONFIRMER=1"
        )
        return 0
    for note in result.notes:
        print(f"Note\u00a0: {note}.")
    if result.failures:
        failures = (f"  - {failure}" for failure in result.failures)
        print(f"✘ {len(result.failures)} échec(s)\u00a0:", *failures, sep="\n", file=sys.stderr)
        return 1
    print(
        "Preuve faite\u00a0: plus rien de l'élève, le témoin partout où il était, les notes des "
        "autres inchangées."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
