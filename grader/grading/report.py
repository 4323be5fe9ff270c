"""The class report: ``notes.csv``, ``notes-tableur.csv`` and an offline ``rapport.html``.
Its rows ARE ``nbgrader export``'s (``SafeCsvExport``), so its totals are nbgrader's; it adds each
criterion's points, why a 0 is a 0 (what the lab's grading wrote in the autograded notebook, or a
submission never graded) and how late. Its charts are PNG inside the page (no CDN).

    nbgrader export --exporter=grading.report.ClassReport --assignment=oublier --to=rapport

``make rapport`` (``grading.rapport``) runs that command and sums it up in French.
"""

from __future__ import annotations

import base64
import html
import io
import math
import textwrap
from collections import defaultdict
from contextlib import suppress
from pathlib import Path

import jinja2
import nbformat
import pandas as pd
from markupsafe import Markup
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin

from course.labo.outcome import OUTCOMES, Outcome

from .classroom.ids import normalize_id
from .french.csv_safe import EXPORT_KEYS, LINE_END, PERSON_KEYS, SCORE_KEYS, neutralise_frame
from .french.french_csv import EXPORT_HEADER, REPORT_NAME, write_french_csv
from .french.french_format import collation_key, french_datetime, french_score, points_text
from .nbgrader_ext.criterion_titles import criterion_number, criterion_title, ordered_criteria
from .nbgrader_ext.hooks import LABS
from .nbgrader_ext.late_penalty import refresh_penalties, rule_of_config
from .nbgrader_ext.outcome_record import read_record
from .nbgrader_ext.safe_export import SafeCsvExport
from .runs.manual_grades import pending_hand_grades
from .runs.submitted_ids import submitted_students
from .zip_collect import DATING_FILE

__all__ = ["ClassReport", "class_table", "score_bins", "write_report"]

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"  # grader/templates
# The page runs no script and fetches nothing: names and ids come from students and archives.
CSP = (
    "default-src 'none';img-src data:;style-src 'unsafe-inline';base-uri 'none';form-action 'none'"
)
EXPORT_COLUMNS = [*PERSON_KEYS, "timestamp", "duedate", *SCORE_KEYS]
STATE = ["submitted", "seconds_late", "dating", "handed_in", "outcome", "why"]
# notes-tableur.csv: export-tableur.csv's French headers (the person, the submission time, the
# due date, the scores), then these, then one column per criterion
REPORT_HEADER = [*EXPORT_HEADER[3:7], EXPORT_HEADER[2], EXPORT_HEADER[1], *EXPORT_HEADER[7:]]
REPORT_HEADER += ["rendu", "retard", "état", "pourquoi"]
# handed in (a folder in submitted/) but no grade in the gradebook: make grade left it out
UNGRADED_WHY = (
    "rendu non noté\u00a0: il est dans submitted/ mais make grade l'a laissé de côté ou a "
    "échoué (un notebook inattendu, un lien…\u00a0: voir ce que make grade a dit, et "
    "rapport/autograde.log)"
)


def _outcome(folder: Path | None, lab: bool) -> tuple[str, str]:
    """(outcome, French detail) the lab's grading stored in `folder`'s autograded notebooks;
    (NOT_GRADED, "") without a copy, ("", "") if they say nothing. Only a lab's hooks write it: in
    another assignment's copy it would be the student's, never read."""
    if folder is None:
        return "", ""
    copies = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not copies:
        return Outcome.NOT_GRADED.value, ""
    if not lab:
        return "", ""
    records = []
    for path in copies:
        with suppress(Exception):  # an unreadable copy says nothing about the grade
            records.append(read_record(nbformat.read(path, as_version=4).metadata))
    failed = [(outcome, detail) for outcome, detail in records if outcome != Outcome.GRADED]
    if failed:
        return failed[0][0], " ".join(detail for _, detail in failed if detail)
    return (Outcome.GRADED.value if records else ""), ""


def _state(outcome: str) -> str:
    """The report's French state for an outcome ("" is a copy that says nothing: graded)."""
    outcome = outcome or Outcome.GRADED
    return Outcome(outcome).label if outcome in set(Outcome) else outcome


def _why(outcome: str, detail: str, row: dict) -> str:
    """Why a student has their grade, for the teacher, when it needs saying (a 0 always does)."""
    if outcome in (Outcome.NOT_GRADED, Outcome.NO_SUBMISSION):
        return Outcome(outcome).why
    if outcome not in ("", Outcome.GRADED):
        known = Outcome(outcome) if outcome in OUTCOMES else None
        why = known.why if known else outcome
        if detail and known is not Outcome.NOT_WRITTEN:
            why += f" (message donné à l'élève\u00a0: «\u00a0{detail}\u00a0»)"
        return why
    if row["score"] == 0 and row["raw_score"] > 0:
        return "note ramenée à 0 par la pénalité de retard"
    if row["raw_score"] == 0:
        return "l'élève ne réussit aucun critère"
    return ""


def _late(timestamp: str, duedate: str) -> float | None:
    """Seconds late (0 when on time), None without a due date or a submission time."""
    ts, due = (pd.to_datetime(value, errors="coerce") for value in (timestamp, duedate))
    return None if pd.isna(ts) or pd.isna(due) else max(0.0, (ts - due).total_seconds())


def class_table(
    gradebook: Gradebook,
    assignment: str,
    autograded: Path | None,
    submitted_dir: Path | None = None,
) -> pd.DataFrame:
    """One row per student of the gradebook: nbgrader's export columns, then ``submitted``
    (graded: in the gradebook), ``handed_in`` (that, or a folder in `submitted_dir`),
    ``seconds_late``, ``dating``, ``outcome``, ``why`` (French) and the points of each criterion
    (French titles); ``df.attrs``: ``criteria`` (title -> maximum) and ``pending``."""
    try:
        spec = gradebook.find_assignment(assignment)
    except MissingEntry as exc:
        raise ValueError(
            f"Le devoir «\u00a0{assignment}\u00a0» n'est pas dans le carnet de notes\u00a0: rien "
            "à exporter."
        ) from exc
    criteria: dict[str, float] = defaultdict(float)
    for cell in (cell for notebook in spec.notebooks for cell in notebook.grade_cells):
        criteria[criterion_title(cell.name)] += float(cell.max_score)
    # nbgrader export's rows, not its file: stock nbgrader's unquoted CSV shifted every column
    # after a comma in a name or an id; in French order
    rows = SafeCsvExport(assignment=[assignment]).rows(gradebook)
    rows.sort(key=lambda r: collation_key(r["student_id"]))
    df = pd.DataFrame(rows, columns=EXPORT_KEYS, dtype=object)[EXPORT_COLUMNS]
    for column in SCORE_KEYS:
        df[column] = pd.to_numeric(df[column])
    points: dict[str, dict[str, float]] = {}
    for sub in gradebook.assignment_submissions(assignment):
        row = points.setdefault(sub.student_id, defaultdict(float, dict.fromkeys(criteria, 0.0)))
        for grade in (grade for notebook in sub.notebooks for grade in notebook.grades):
            row[criterion_title(grade.name)] += float(grade.score or 0)
    # grades a grader has not graded yet (needs_manual_grade): their 0 is no failure
    pending = {
        student: {
            criterion_title(name): "réponse écrite à noter"
            if kind == "markdown"
            else f"{criterion_title(name)}\u00a0: note à la main à revoir"
            for name, kind in grades
        }
        for student, grades in pending_hand_grades(gradebook, assignment).items()
    }
    handed = submitted_students(submitted_dir, assignment) if submitted_dir is not None else []
    folders = {normalize_id(s) for s in handed}
    state = []
    for r in df.to_dict("records"):
        student, submitted = r["student_id"], r["student_id"] in points
        ungraded = not submitted and normalize_id(student) in folders
        graded = None if autograded is None else autograded / student / assignment
        outcome, detail = _outcome(graded, assignment in LABS)
        if not submitted:
            outcome = (Outcome.NOT_GRADED if ungraded else Outcome.NO_SUBMISSION).value
        # what waits for hand grading first (« réponse écrite à noter »), then why
        why = [*pending.get(student, {}).values(), _why(outcome, detail, r)]
        state.append(
            [
                submitted,
                _late(r["timestamp"], r["duedate"]),
                _dating(graded),
                submitted or ungraded,
                outcome,
                UNGRADED_WHY if ungraded else "\u00a0; ".join(dict.fromkeys(filter(None, why))),
                *(points[student][title] if submitted else math.nan for title in criteria),
            ]
        )
    df = df.join(pd.DataFrame(state, index=df.index, columns=[*STATE, *criteria]))
    df.attrs["criteria"] = ordered_criteria(criteria)  # the TP statement's order and numbers
    df.attrs["pending"] = pending
    return df


def _criteria_failures(df: pd.DataFrame) -> pd.Series:
    """Share (0..1) of the submitted students who lost points on each criterion, largest first;
    a grade still to give by hand (the written answer before formgrader) is not lost, and not
    counted: before any is graded its criterion is at 0 %, not 100 %."""
    criteria, pending = df.attrs["criteria"], df.attrs.get("pending", {})
    submitted = df[df["submitted"]]
    if submitted.empty or not criteria:
        return pd.Series(dtype=float)
    shares = {}
    for title, maximum in criteria.items():
        graded = submitted[[title not in pending.get(s, {}) for s in submitted["student_id"]]]
        lost = graded[title].fillna(0) < maximum - 1e-9
        shares[title] = float(lost.mean()) if len(lost) else 0.0
    return pd.Series(shares).sort_values(ascending=False, kind="stable")


def _png(fig) -> str:
    fig.savefig(buf := io.BytesIO(), format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def score_bins(max_score: float) -> list[float]:
    """One bin per half point, centred on it (11,5 is not 12: the TP's points are halves)."""
    return [k / 2 - 0.25 for k in range(math.ceil(max_score * 2) + 2)]


def _plots(df: pd.DataFrame, failures: pd.Series) -> dict[str, str]:
    """Scores' histogram, criteria's bars: 100 dpi, ≤ 1000 px wide (``Figure``: no pyplot state)."""
    # matplotlib (1 to 1.5 s) only when the charts are drawn, not for class_table's readers
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    max_score = float(df["max_score"].max()) if not df.empty else 10.0
    scores = Figure(figsize=(7, 3.4), layout="constrained")
    ax = scores.subplots()
    ax.hist(df["score"], bins=score_bins(max_score), color="#4C72B0", edgecolor="white")
    ax.set_xlabel("note (pénalités de retard comprises)")
    ax.set_ylabel("nombre d'élèves")
    ax.set_title("Répartition des notes (par demi-point)")
    ax.set_xticks(range(math.ceil(max_score) + 1))
    ax.set_xticks([k / 2 for k in range(math.ceil(max_score * 2) + 1)], minor=True)
    ax.xaxis.set_major_formatter(lambda value, _pos: points_text(value))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    labels = [
        textwrap.fill(f"critère {_number(k, title)} — {title}", 48)
        for k, title in enumerate(failures.index)
    ]
    criteria = Figure(figsize=(10, 0.9 + 0.6 * max(len(failures), 1)), layout="constrained")
    ax = criteria.subplots()
    ax.barh(labels[::-1], list(failures.values * 100)[::-1], color="#DD8452")
    ax.set_xlim(0, 100)
    ax.set_xlabel("% des élèves ayant rendu qui perdent des points")
    ax.set_title("Critères manqués")
    ax.tick_params(axis="y", labelsize=9)
    return {"scores_png": _png(scores), "criteria_png": _png(criteria)}


def _dating(folder: Path | None) -> str:
    """How `make zip-collect` found the copy's submission time (grading.zip_collect), or ""."""
    if folder is None or not (path := folder / DATING_FILE).is_file() or path.is_symlink():
        return ""
    with path.open(encoding="utf-8", errors="replace") as fh:
        return fh.readline(400).strip()


def _row_lateness(r: pd.Series) -> str:
    """How late, one rule for every submission (dropped by hand, collected from a hub or a zip):
    "à l'heure", "35 min", "1 j 12 h (−2 pt)", then how zip-collect dated it; "—" without a
    submission; one whose time or due date is unknown is on time for nbgrader, and says why."""
    seconds, penalty = r["seconds_late"], r["late_submission_penalty"]
    if not r["submitted"]:
        return "—"
    if not r["duedate"]:
        late = "à l'heure (pas de date limite)"
    elif not r["timestamp"]:
        late = "à l'heure (heure de rendu inconnue)"
    elif seconds is None or math.isnan(seconds):
        late = "—"
    elif seconds <= 0:
        late = "à l'heure"
    else:
        days, rest = divmod(int(seconds), 86400)
        hours, rest = divmod(rest, 3600)
        late = f"{days} j {hours} h" if days else f"{hours} h {rest // 60} min"
        late = late if days or hours else f"{max(1, rest // 60)} min"
        late += f" (−{points_text(penalty)}\u00a0pt)" if penalty else ""
    dating = r.get("dating") or ""
    return f"{late} — heure\u00a0: {dating}" if dating else late


def _number(k: int, title: str) -> int:
    """The statement's number of a criterion (its rank `k` + 1 for a title it does not know)."""
    number = criterion_number(title)
    return number if number is not None else k + 1


def _lost(row: pd.Series, criteria: dict[str, float], waiting: dict[str, str]):
    """The criteria a student lost points on: None without a submission, "all", or
    (title, number) pairs; a grade still to be graded by hand is not lost."""
    if not row["submitted"]:
        return None
    lost = [
        (t, _number(k, t))
        for k, t in enumerate(criteria)
        if (row[t] or 0) < criteria[t] - 1e-9 and t not in waiting
    ]
    return "all" if lost and len(lost) == len(criteria) else lost


def write_report(
    df: pd.DataFrame, out_dir: str | Path, assignment: str = "oublier", late_rule: str = ""
) -> tuple[Path, Path]:
    """Write ``notes.csv``, ``notes-tableur.csv``, ``rapport.html``; return the first, the last."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "notes.csv"
    # an id such as =2+5 is no formula; a CR or LF inside a cell is quoted
    neutralise_frame(df).to_csv(csv_path, index=False, lineterminator=LINE_END)
    criteria = df.attrs["criteria"]
    header = REPORT_HEADER + [
        f"critère {_number(k, t)} — {t} (sur {points_text(m)})"
        for k, (t, m) in enumerate(criteria.items())
    ]
    rows = [
        [
            *(r[c] for c in PERSON_KEYS),
            french_datetime(r["timestamp"]),
            french_datetime(r["duedate"]),
            *(r[c] for c in SCORE_KEYS),
            bool(r["handed_in"]),
            _row_lateness(r),
            _state(r["outcome"]),
            r["why"],
            *(r[t] for t in criteria),
        ]
        for _, r in df.iterrows()
    ]
    write_french_csv(out / REPORT_NAME, header, rows)
    failures = _criteria_failures(df)
    n, graded = len(df), int(df["handed_in"].sum())
    # the page, from grader/templates/rapport.html.j2: student text escaped
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["h"] = lambda value: Markup(html.escape(str(value)))
    page = env.get_template("rapport.html.j2").render(
        nbsp="\u00a0",
        csp=Markup(CSP),
        assignment=assignment,
        n=n,
        graded=graded,
        missing=n - graded,
        mean=points_text(df["score"].mean()) if n else "—",
        median=points_text(df["score"].median()) if n else "—",
        max_score=points_text(df["max_score"].max()) if n else "—",
        duedate=french_datetime(df["duedate"].iloc[0], with_zone=True) if n else "",
        late_rule=late_rule,
        **_plots(df, failures),
        legend=[
            {
                "number": _number(k, t),
                "title": t,
                "points": points_text(criteria[t]),
                "share": f"{round(failures.get(t, 0) * 100)}\u00a0%",
            }
            for k, t in enumerate(criteria)
        ],
        rows=[
            {
                "student_id": r["student_id"],
                "name": " ".join(x for x in (r["first_name"], r["last_name"]) if x),
                "score": french_score(r["score"], r["max_score"]),
                "late": _row_lateness(r),
                "lost": _lost(r, criteria, df.attrs["pending"].get(r["student_id"], {})),
                "why": r["why"],
                "zero": r["score"] == 0,
            }
            for _, r in df.iterrows()
        ],
    )
    (html_path := out / "rapport.html").write_text(page, encoding="utf-8")
    return csv_path, html_path


class ClassReport(ExportPlugin):
    """``nbgrader export --exporter=grading.report.ClassReport``; ``--to``: the report's folder."""

    def export(self, gradebook: Gradebook) -> None:
        refresh_penalties(gradebook, self.config)
        assignments = [str(a) for a in self.assignment] or [a.name for a in gradebook.assignments]
        coursedir = getattr(self.parent, "coursedir", None)
        autograded = coursedir and Path(coursedir.root) / coursedir.autograded_directory
        submitted = coursedir and Path(coursedir.root) / coursedir.submitted_directory
        try:
            if len(assignments) != 1:
                raise ValueError(
                    "Le rapport porte sur un seul devoir\u00a0: précisez --assignment "
                    f"(devoirs du carnet de notes\u00a0: {', '.join(assignments) or 'aucun'})."
                )
            df = class_table(gradebook, assignments[0], autograded, submitted)
        except ValueError as exc:
            self.log.error(str(exc))
            raise SystemExit(1) from exc
        out = Path(self.to or "rapport")
        csv_path, html_path = write_report(df, out, assignments[0], rule_of_config(self.config))
        self.log.info("Class report written to %s and %s", csv_path, html_path)


if __name__ == "__main__":  # its own command is gone: the report is make rapport's
    raise SystemExit(
        "✘ python -m grading.report n'est pas une commande\u00a0: le rapport de la classe se "
        "fait avec make rapport (python -m grading.rapport, depuis grader/)."
    )
