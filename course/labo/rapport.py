"""Grade report from nbgrader's gradebook: a CSV and a self-contained HTML page with plots.

The page shows the score distribution and, for each criterion, the share of students who lost
points on it, so a teacher sees at a glance what the class missed. Images are embedded as
base64 PNG: the page opens offline, with no CDN.

    python -m course.labo.rapport [--db URL] [--assignment oublier] [--out DOSSIER]

Run from the course root or its ``grader/`` folder: by default the gradebook is the one nbgrader
would use there (``CourseDirectory.db_url`` of ``nbgrader_config.py``, see ``course.labo.cours``)
and the report goes to ``rapport/`` next to that configuration.
"""

from __future__ import annotations

import argparse
import base64
import html
import io
from pathlib import Path

import pandas as pd

from .criteria import CRITERES, TESTS

__all__ = ["collect", "criteria_failures", "main", "write_report"]


def collect(db_url: str, assignment: str) -> pd.DataFrame:
    """One row per submission: student_id, score, max_score, then one column per grade cell."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    max_points: dict[str, float] = {}
    with Gradebook(db_url) as gb:
        try:
            gb.find_assignment(assignment)
            submissions = gb.assignment_submissions(assignment)
        except MissingEntry as exc:
            raise ValueError(
                f"Le devoir « {assignment} » n'est pas dans le carnet de notes {db_url}."
            ) from exc
        for sub in submissions:
            row = {"student_id": sub.student_id, "score": sub.score, "max_score": sub.max_score}
            for nb in sub.notebooks:
                for grade in nb.grades:
                    if grade.max_score:
                        row[grade.name] = grade.score
                        max_points[grade.name] = grade.max_score
            rows.append(row)
    df = pd.DataFrame(rows, columns=None if rows else ["student_id", "score", "max_score"])
    if not df.empty:
        df = df.sort_values("student_id").reset_index(drop=True)
    df.attrs["max_points"] = max_points
    return df


def _criterion_of(grade_name: str) -> str:
    test = TESTS.get(grade_name.removeprefix("test_"))
    return CRITERES[test.critere] if test else grade_name


def criteria_failures(df: pd.DataFrame) -> pd.Series:
    """Share of students (0..1) who lost points on each criterion, largest first.

    A grade cell without a known maximum (``df.attrs["max_points"]``) counts as lost below 1.
    """
    max_points = df.attrs.get("max_points", {})
    cells = [c for c in df.columns if c not in ("student_id", "score", "max_score")]
    if df.empty or not cells:
        return pd.Series(dtype=float)
    by_criterion: dict[str, pd.Series] = {}
    for cell in cells:
        lost = df[cell].fillna(0) < max_points.get(cell, 1)
        name = _criterion_of(cell)
        by_criterion[name] = by_criterion.get(name, False) | lost
    return pd.Series({k: float(v.mean()) for k, v in by_criterion.items()}).sort_values(
        ascending=False
    )


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plots(df: pd.DataFrame, failures: pd.Series) -> tuple[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    max_score = float(df["max_score"].max()) if not df.empty else 10.0
    fig, ax = plt.subplots(figsize=(6, 3.2))
    bins = [x - 0.5 for x in range(int(max_score) + 2)]
    ax.hist(df["score"], bins=bins, color="#4C72B0", edgecolor="white")
    ax.set_xlabel("note")
    ax.set_ylabel("élèves")
    ax.set_title("Répartition des notes")
    ax.set_xticks(range(int(max_score) + 1))
    scores = _png(fig)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7.5, 0.5 + 0.45 * max(len(failures), 1)))
    ax.barh(list(failures.index)[::-1], list(failures.values * 100)[::-1], color="#DD8452")
    ax.set_xlim(0, 100)
    ax.set_xlabel("% des élèves qui perdent des points")
    ax.set_title("Critères manqués")
    crit = _png(fig)
    plt.close(fig)
    return scores, crit


def write_report(
    df: pd.DataFrame, out_dir: str | Path, assignment: str = "oublier"
) -> tuple[Path, Path]:
    """Write ``notes.csv`` and ``rapport.html`` into `out_dir`; return both paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "notes.csv"
    df.to_csv(csv_path, index=False)
    failures = criteria_failures(df)
    scores_png, crit_png = _plots(df, failures)
    n = len(df)
    mean = f"{df['score'].mean():.1f}" if n else "—"
    median = f"{df['score'].median():.1f}" if n else "—"
    max_score = f"{df['max_score'].max():g}" if n else "—"
    fail_table = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{v:.0%}</td></tr>" for k, v in failures.items()
    )
    page = f"""<!DOCTYPE html>
<html lang="fr"><head><meta charset="utf-8">
<title>Rapport de notes — {html.escape(assignment)}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .5em}}</style>
</head><body>
<h1>Rapport de notes — {html.escape(assignment)}</h1>
<p>{n} rendus notés ; moyenne {mean} / {max_score}, médiane {median}.</p>
<h2>Répartition des notes</h2>
<img alt="Histogramme des notes des {n} élèves" src="data:image/png;base64,{scores_png}">
<h2>Ce que la classe a manqué</h2>
<img alt="Part des élèves qui perdent des points, par critère"
 src="data:image/png;base64,{crit_png}">
<table><tr><th>Critère</th><th>élèves qui perdent des points</th></tr>{fail_table}</table>
<h2>Notes par élève</h2>
{df.to_html(index=False, na_rep="", float_format=lambda x: f"{x:g}")}
</body></html>
"""
    html_path = out / "rapport.html"
    html_path.write_text(page, encoding="utf-8")
    return csv_path, html_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Rapport de notes (CSV et HTML) depuis le carnet de notes nbgrader."
    )
    parser.add_argument(
        "--db",
        default=None,
        help="URL du carnet de notes (défaut : celui "
        "de nbgrader_config.py, trouvé depuis le dossier courant)",
    )
    parser.add_argument("--assignment", default="oublier")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="dossier du rapport (défaut : rapport/ à côté de nbgrader_config.py)",
    )
    args = parser.parse_args(argv)
    if args.db is None or args.out is None:
        from .cours import course_dirs

        try:
            dirs = course_dirs()
        except FileNotFoundError as exc:
            parser.error(str(exc))
        args.db = args.db or dirs.db_url
        args.out = args.out or dirs.grader_dir / "rapport"
    df = collect(args.db, args.assignment)
    csv_path, html_path = write_report(df, args.out, args.assignment)
    print(f"{len(df)} rendus : {csv_path}\n{html_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
