"""Give a learner their data (RGPD articles 15 and 20): one zip of everything the class system
holds about them, in open formats, with a French README (the article 13 information).

Their gradebook rows (each criterion of the statement once, its visible and hidden tests'
points summed) as JSON and as a French CSV, their roster line, their files in ``submitted/``,
``autograded/`` and ``feedback/`` and every earlier copy kept. Only their own folders and rows
are read: nothing of another learner can enter the archive. A link, a fifo or a hard link of
their submission is never exported, nor what nbgrader copied from it into the graded copy and
the feedback (the gradebook or ``/etc/shadow`` a link pointed to): such files are named, left
out. The id is NFC-normalised (a macOS keyboard or zip gives NFD); an unknown id is refused
with the closest known ids.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
import zipfile
from copy import deepcopy
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.api import Gradebook

from .classroom.class_lock import class_lock
from .classroom.class_places import PER_LEARNER, own_folders, quarantined_for
from .classroom.gradebook import gradebook_problem, sqlite_path
from .classroom.ids import normalize_id, shown
from .classroom.paths import course_dirs, files_under, not_regular
from .feedback import GRADES_SHOWN
from .french.french_args import FrenchParser
from .french.french_csv import french_csv_bytes
from .french.french_format import COURSE_TIME_ZONE, french_datetime, listed
from .french.system_reason import GradingError, french_message, french_reason
from .nbgrader_ext.criterion_titles import criterion_number, criterion_title
from .nbgrader_ext.late_penalty import refresh_penalties
from .privacy.backup_files import RETENTION_DAYS
from .privacy.learner_places import EXPORT_CARD, Context, Setup, roster_students

__all__ = ["ExportRefused", "export_learner", "main"]

README = """{title}
{underline}

Cette archive contient tout ce que le système de notation du cours garde à votre sujet
(identifiant «\u00a0{sid}\u00a0»), exportée le {when} ({zone}), au titre des articles 13 et 15
(information et droit d'accès) et 20 (droit à la portabilité) du RGPD.

Ce que contient l'archive
-------------------------

- eleve.json\u00a0: votre fiche (identifiant, prénom, nom, courriel) dans le carnet de notes, et
  votre ligne de la liste des élèves de l'enseignant\u00a0;
- notes.json\u00a0: pour chaque devoir, l'heure de votre rendu, la pénalité de retard,
  votre note, et pour chaque critère de l'énoncé (numéroté comme dans l'énoncé) les points
  (automatiques, donnés à la main, bonus) et les commentaires\u00a0;
- notes.csv\u00a0: les mêmes notes, une ligne par critère, pour un tableur (séparateur
  «\u00a0;\u00a0», virgule décimale, heures dans le fuseau {zone})\u00a0;
- rendus/\u00a0: les notebooks que vous avez rendus (format .ipynb, à ouvrir dans Jupyter)\u00a0;
- copies_remplacees/\u00a0: vos rendus précédents, remplacés par un rendu plus récent (gardés par
  l'enseignant, un dossier par date de remplacement)\u00a0;
- mises_de_cote/\u00a0: vos dépôts mis de côté à la collecte (par exemple déposés sous un autre
  nom), s'il y en a\u00a0;
- copies_notees/\u00a0: vos notebooks tels qu'ils ont été notés\u00a0;
- retours/\u00a0: vos pages de retour (HTML, à ouvrir dans un navigateur).

Pourquoi ces données, qui les voit, combien de temps
----------------------------------------------------

- Finalité\u00a0: noter vos travaux du cours, vous rendre un retour, et tenir le carnet de notes
  de la classe (mission d'enseignement de l'établissement).
- Destinataires\u00a0: votre enseignant et, s'il y en a, les autres enseignants ou assistants
  du cours qui notent avec lui, et l'administrateur de la plateforme (hub) du cours. Vos
  données ne sont ni vendues ni transmises à un tiers, et aucun service en ligne extérieur ne
  les reçoit pour la notation (elle se fait sur la machine du cours).
- Durée de conservation\u00a0: le temps du cours et de ses notes, puis jusqu'à l'effacement
  demandé par vous ou décidé par l'établissement. Les sauvegardes de la classe sont gardées
  {retention} jours (le réglage par défaut du cours), puis effacées par une sauvegarde
  suivante. Les archives reçues d'une plateforme (ENT, LMS)
  contiennent aussi les rendus d'autres élèves et ne sont donc pas jointes\u00a0: votre rendu en a
  été extrait (rendus/).

Vos droits
----------

Vous pouvez demander à votre enseignant, ou au délégué à la protection des données de votre
établissement, de corriger ces données ou de les effacer (articles 16 et 17 du RGPD)\u00a0;
l'effacement est alors fait partout dans le système de la classe et vérifié. Si vous estimez
que vos droits ne sont pas respectés, vous pouvez adresser une réclamation à la CNIL
(Commission nationale de l'informatique et des libertés, www.cnil.fr/fr/plaintes, ou par
courrier\u00a0: 3 place de Fontenoy, TSA 80715, 75334 Paris Cedex 07).
"""


class ExportRefused(GradingError):
    """An export refused, in one French sentence: an id with no trace anywhere (the message
    names the closest known ids), or no readable gradebook (the export would be incomplete)."""


SUBMITTED = "rendus"  # the place of their submissions in the archive (class_places)
LEFT_OUT = "ecartes"  # in the counts: the members left out (a link's copy), by name
POINTS = ("points_automatiques", "points_a_la_main", "bonus")  # None until a cell has some
# a criterion's entry in notes.json after its number and title, in this order
CRITERION = {"cellules": [], **dict.fromkeys(POINTS), "note": 0.0, "note_maximale": 0.0}
CRITERION |= {"a_noter_a_la_main": False, "commentaires_automatiques": []}
CRITERION |= {"commentaires_enseignant": []}
# who a gradebook row or a roster line names: the same attributes in both
CARD = {"identifiant": "id", "prenom": "first_name", "nom": "last_name", "courriel": "email"}


def _card(person: object) -> dict:
    return {key: getattr(person, attr) for key, attr in CARD.items()}


def _criteria(nb) -> list[dict]:
    """A notebook's grades, one entry per criterion of the statement: its visible and hidden
    tests' points summed."""
    comments = {c.name: c for c in nb.comments}
    by_title: dict[str, dict] = {}
    for grade in sorted(nb.grades, key=lambda g: g.name):
        title = criterion_title(grade.name)
        new = {"numero": criterion_number(title), "critere": title, **deepcopy(CRITERION)}
        c = by_title.setdefault(title, new)
        c["cellules"].append(grade.name)
        points = (grade.auto_score, grade.manual_score, grade.extra_credit)
        for key, value in zip(POINTS, points, strict=True):
            if value is not None:
                c[key] = (c[key] or 0.0) + float(value)
        c["note"] += float(grade.score or 0)
        c["note_maximale"] += float(grade.max_score or 0)
        c["a_noter_a_la_main"] = c["a_noter_a_la_main"] or grade.needs_manual_grade
        comment = comments.get(grade.name)
        if comment and comment.auto_comment:
            c["commentaires_automatiques"].append(comment.auto_comment)
        if comment and comment.manual_comment:
            c["commentaires_enseignant"].append(comment.manual_comment)
    return sorted(by_title.values(), key=lambda c: c["numero"] or 10**6)


def _gradebook_rows(db_url: str, sid: str) -> tuple[dict | None, list[dict]]:
    """Their card and submissions, under every Unicode form of their id the gradebook stores (a
    row made from a Mac's folder holds ``chlo`` + U+0301, which ``find_student`` misses)."""
    with Gradebook(db_url) as gb:
        students = [s for s in gb.students if normalize_id(s.id) == sid]
        if not students:
            return None, []
        record = {**_card(students[0]), "identifiant_lms": students[0].lms_user_id}
        submissions = [
            {
                "devoir": sub.assignment.name,
                "rendu_le": sub.timestamp.isoformat() if sub.timestamp else None,
                "date_limite": sub.duedate.isoformat() if sub.duedate else None,
                "secondes_de_retard": sub.total_seconds_late,
                "note": sub.score,
                "note_maximale": sub.max_score,
                "notebooks": [
                    {
                        "notebook": nb.name,
                        "penalite_de_retard": nb.late_submission_penalty,
                        "criteres": _criteria(nb),
                    }
                    for nb in sub.notebooks
                ],
            }
            for student in students
            for sub in student.submissions
        ]
    return record, submissions


GRADES_HEADER = ["devoir", f"heure de rendu (fuseau {COURSE_TIME_ZONE})", "notebook", "critère"]
GRADES_HEADER += ["titre du critère", "points automatiques", "points à la main", "bonus", "note"]
GRADES_HEADER += ["note maximale", "commentaire de l'enseignant"]


def _grades_csv(submissions: list[dict]) -> bytes:
    """notes.csv, as French spreadsheets read it (``;``, decimal comma, UTF-8 with a BOM):
    one row per criterion of the statement."""
    rows = [
        [
            sub["devoir"],
            french_datetime(sub["rendu_le"]),
            nb["notebook"],
            c["numero"] if c["numero"] is not None else "",
            c["critere"],
            *(c[key] for key in (*POINTS, "note", "note_maximale")),
            " / ".join(c["commentaires_enseignant"]),
        ]
        for sub in submissions
        for nb in sub["notebooks"]
        for c in nb["criteres"]
    ]
    return french_csv_bytes(GRADES_HEADER, rows)


def export_learner(
    student_id: str,
    out_dir: Path | None = None,
    roster: Path | None = None,
    grader_dir: Path | None = None,
) -> tuple[Path, dict[str, int | list[str]]]:
    """Write the learner's archive; (its path, what it holds: counts, and the files left out)."""
    sid = normalize_id(student_id.strip())
    ctx = Context(Setup(grader_dir=grader_dir, roster=roster))
    dirs = ctx.dirs
    if why := gradebook_problem(dirs):  # else « 0 devoir(s) », an incomplete answer
        raise ExportRefused(f"Aucune donnée exportée\u00a0: {why}.")
    with Gradebook(dirs.db_url) as gradebook:  # the late rule on the hand grades given since
        refresh_penalties(gradebook, ctx.config)
    record, submissions = _gradebook_rows(dirs.db_url, sid)
    line = next((s for s in roster_students(roster) if s.id == sid), None)
    # every folder of theirs per place: one per Unicode form of their id (NFC, a Mac's NFD)
    folders = {p.export_name: own_folders(p.folder(dirs), sid) for p in PER_LEARNER}
    earlier = _earlier_copies(dirs, sid)
    if record is None and line is None and not any(folders.values()) and not earlier:
        folded = {i.casefold(): i for i in ctx.known}
        close = difflib.get_close_matches(sid.casefold(), list(folded), n=5, cutoff=0.5)
        hint = ", ".join(folded[c] for c in close) or "aucun"
        raise ExportRefused(
            f"Aucune donnée pour l'identifiant «\u00a0{sid}\u00a0» (carnet de notes, liste des "
            f"élèves, rendus, copies notées, retours). Identifiants proches\u00a0: {hint}."
        )
    now = datetime.now(UTC)
    out_dir = out_dir or dirs.exports
    out_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(out_dir, 0o700)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in sid)
    path = out_dir / f"donnees-{safe}-{now:%Y%m%d-%H%M%S}.zip"
    # what nbgrader copied from a link of their submission is a plain file of its own: left out
    gradebook = [db] if (db := sqlite_path(dirs.db_url)) else []
    linked = {rel for f in folders[SUBMITTED] for rel, _ in not_regular(f, gradebook, 2)}
    submitted = dirs.submitted
    if submitted.is_dir() and any(
        p.is_symlink() and normalize_id(p.name) == sid for p in submitted.iterdir()
    ):
        linked.add(".")  # their submitted/ folder is a link: all nbgrader copied came from it
    left_out: list[str] = []
    members = {
        name: _copies(name, found, linked, left_out, gradebook) for name, found in folders.items()
    } | earlier
    # written under a name of its own, renamed once whole: a stopped export (a file unreadable,
    # the disk full) never leaves a zip that looks like an answer and holds half of it
    partial = path.with_name(f"{path.name}.partiel")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        _write_export(fd, ctx, sid, now, record, line, submissions, members)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    counts = {"devoirs": len(submissions)} | {k: len(v) for k, v in members.items()}
    return path, counts | {LEFT_OUT: left_out}


def _write_export(
    fd: int,
    ctx: Context,
    sid: str,
    now: datetime,
    record: dict | None,
    line: object | None,
    submissions: list[dict],
    members: dict[str, list[tuple[str, Path]]],
) -> None:
    """The learner's zip, into `fd`; ExportRefused, naming it, if one of their files cannot be
    read (an answer to their request holds all of it, or is not given)."""
    with os.fdopen(fd, "wb") as raw, zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        when = french_datetime(now).replace(" ", " à ", 1)
        course, days, zone = ctx.course_id or "cours", f"{RETENTION_DAYS:g}", COURSE_TIME_ZONE
        title = f"Vos données dans le cours «\u00a0{course}\u00a0»"
        readme = README.format(
            title=title, underline="=" * len(title), sid=sid, when=when, zone=zone, retention=days
        )
        zf.writestr("LISEZMOI.txt", readme)
        fiche = {
            "carnet_de_notes": record,
            "liste_des_eleves": None if line is None else {"ligne": line.line, **_card(line)},
        }
        zf.writestr(EXPORT_CARD, json.dumps(fiche, ensure_ascii=False, indent=2))
        zf.writestr("notes.json", json.dumps(submissions, ensure_ascii=False, indent=2))
        zf.writestr("notes.csv", _grades_csv(submissions))
        for member, file in (m for files in members.values() for m in files):
            try:
                data = file.read_bytes()
            except OSError as exc:
                raise ExportRefused(
                    f"Aucune donnée exportée\u00a0: {shown(str(file))} est illisible "
                    f"({french_reason(exc)})\u00a0; une réponse à sa demande contient toutes ses "
                    "données. Rendez ce fichier lisible (chmod u+r), puis relancez."
                ) from None
            zf.writestr(member, data)


def _copies(
    name: str,
    folders: list[Path],
    linked: set[str] = frozenset(),
    left_out: list[str] | None = None,
    guarded: list[Path] | tuple[()] = (),
) -> list[tuple[str, Path]]:
    """(path in the archive, file) of every file of the learner's `folders` of one place (one per
    Unicode form of their id: the second in `name`-2/…); a file that is no plain file
    (``not_regular``, `guarded`: the gradebook), or whose path a link of their submission has
    (`linked`; ``.``: their submitted/ folder itself is a link), is named in `left_out` instead."""
    found: list[tuple[str, Path]] = []
    skipped = [] if left_out is None else left_out
    for k, folder in enumerate(folders):
        prefix = name if k == 0 else f"{name}-{k + 1}"
        strange_here = not_regular(folder, guarded, 2)  # grader/<place>/<id>
        for rel, what in strange_here:  # hers, unread: an answer holds all of it, or is not given
            if what.startswith("illisible"):
                raise ExportRefused(
                    f"Aucune donnée exportée\u00a0: {shown(str(folder / rel))} est illisible "
                    f"({what})\u00a0; une réponse à sa demande contient toutes ses données. "
                    "Rendez-le lisible (chmod -R u+rX), puis relancez."
                )
        own = {rel for rel, _ in strange_here}
        strange = linked | own
        files = files_under(folder, 2)  # never a link, so a link is named here
        skipped += [f"{prefix}/{rel}" for rel in sorted(own - {r for r, _ in files})]
        for rel, file in files:
            if Path(rel).name == GRADES_SHOWN:  # make feedback's own digest: no page of theirs
                continue
            if "." in linked or any(rel == s or rel.startswith(f"{s}/") for s in strange):
                skipped.append(f"{prefix}/{rel}")
            else:
                found.append((f"{prefix}/{rel}", file))
    return found


def _earlier_copies(dirs, sid: str) -> dict[str, list[tuple[str, Path]]]:
    """Every other copy the class kept of the learner: the copies zip_collect replaced
    (``<downloaded>/<assignment>/remplaces/<id>/<when>/``) and the quarantine's
    (``quarantaine/<assignment>/<id>+…``); (path in the archive, file), links skipped."""
    old, aside = "copies_remplacees", "mises_de_cote"
    found: dict[str, list[tuple[str, Path]]] = {old: [], aside: []}
    for base in sorted(dirs.downloaded.iterdir()) if dirs.downloaded.is_dir() else []:
        found[old] += _copies(f"{old}/{base.name}", own_folders(base / "remplaces", sid))
    for entry in quarantined_for(dirs.quarantine, sid, authored=True):
        found[aside] += _copies(f"{aside}/{entry.parent.name}/{entry.name}", [entry])
    return {k: v for k, v in found.items() if v}


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.learner_export",
        description="Exporter dans une archive zip toutes les données d'un élève (RGPD, "
        "articles 15 et 20).",
    )
    parser.add_argument("student_id", metavar="IDENTIFIANT", help="l'identifiant de l'élève")
    parser.add_argument("--eleves", type=Path, metavar="CSV", help="la liste des élèves (CSV)")
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DOSSIER",
        help="le dossier de l'archive (défaut\u00a0: grader/exports)",
    )
    parser.add_grader_dir()
    args = parser.parse_args(argv)
    try:
        with class_lock(args.grader_dir, "make donnees-eleve"):
            path, counts = export_learner(args.student_id, args.out, args.eleves, args.grader_dir)
    except (GradingError, FileNotFoundError) as exc:
        print(f"✘ {french_message(exc)}", file=sys.stderr)
        return 2
    except OSError as exc:  # the disk full, a size limit: no archive left (written .partiel)
        print(f"✘ Aucune donnée exportée\u00a0: {french_message(exc)}", file=sys.stderr)
        return 2
    sid = normalize_id(args.student_id.strip())
    print(
        f"Données de «\u00a0{sid}\u00a0»\u00a0: {path} ({counts['devoirs']} "
        f"devoir(s), {counts['rendus']} fichier(s) rendu(s), {counts['copies_notees']} copie(s) "
        f"notée(s), {counts['retours']} retour(s), {counts.get('copies_remplacees', 0)} copie(s) "
        f"remplacée(s), {counts.get('mises_de_cote', 0)} mise(s) de côté)."
    )
    if items := [shown(m) for m in counts[LEFT_OUT]]:
        whole = course_dirs(args.grader_dir).log_file("donnees-eleve")
        whole.write_text("\n".join(items) + "\n", encoding="utf-8")
        header = (
            f"⚠ {len(items)} fichier(s) non exporté(s)\u00a0: un lien, un fichier spécial de son "
            "rendu ou ce que nbgrader en a copié (peut-être le contenu d'un autre fichier de la "
            "machine)\u00a0:"
        )
        print(*listed(header, items, whole), sep="\n", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
