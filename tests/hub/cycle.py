"""One assignment's life through a hub, as users do it: shared by the hub test modules.

The instructor drives formgrader's REST API on their server (or the course's shared formgrader),
students drive nbgrader's assignment list on theirs; everything goes through the hub's proxy with
the user's own token, as a browser would.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import requests
from helpers import REPO

from course.labo.tp_notebook import ANSWER_GRADE_ID

__all__ = [
    "COURSE_ID",
    "Lab",
    "assignment_list",
    "feedback_score",
    "formgrader",
    "load_lab",
    "ok",
    "page_score",
    "student_action",
    "write_answer",
]

COURSE_ID = "memoire-tuteur"


@dataclass
class Lab:
    """What the class works on: the assignment, sample answers and their expected scores."""

    name: str
    notebook: str
    answers: dict[str, str]  # sample name (grader/submissions/<name>.py) -> `oublier` cell text
    expected: dict[str, float]  # sample name -> score
    max_score: float  # every graded cell, the written answer (graded by hand) included
    auto_max_score: float  # the cells autograde scores


def load_lab(samples: list[str], name: str = "oublier") -> Lab:
    """The course's own TP and the sample answers of grader/submissions with their scores."""
    notebook = f"{name}.ipynb"
    source = REPO / "solutions" / name / notebook
    assert source.is_file(), f"le TP {source} manque"
    cells = nbformat.read(source, as_version=4).cells
    points = sum(cell.metadata.get("nbgrader", {}).get("points", 0) for cell in cells)
    auto_points = sum(
        cell.metadata.get("nbgrader", {}).get("points", 0)
        for cell in cells
        if cell.cell_type == "code"
    )
    folder = REPO / "grader" / "submissions"
    expected = json.loads((folder / "attendus.json").read_text(encoding="utf-8"))
    return Lab(
        name=name,
        notebook=notebook,
        answers={s: (folder / f"{s}.py").read_text(encoding="utf-8").rstrip("\n") for s in samples},
        expected={s: float(expected[s]["score"]) for s in samples},
        max_score=float(points),
        auto_max_score=float(auto_points),
    )


def ok(response: requests.Response) -> dict | list:
    assert response.status_code == 200, (response.status_code, response.text[:2000])
    return response.json()


def formgrader(hub, owner: str, path: str, token_of: str | None = None, prefix: str = "") -> dict:
    """POST to formgrader's API on `owner`'s server (or `prefix`: a service's URL prefix)."""
    if prefix:
        headers = {"Authorization": f"token {hub.token_for(token_of or owner)}"}
        response = requests.post(
            f"{hub.url}{prefix}/formgrader/api/{path}", headers=headers, timeout=300
        )
    else:
        response = hub.server(owner, "POST", f"/formgrader/api/{path}", timeout=300)
    result = ok(response)
    # the end of nbgrader's log says why (the start is its routine INFO lines)
    assert result.get("success"), (result.get("error"), str(result.get("log", ""))[-6000:])
    return result


def assignment_list(hub, student: str) -> list[dict]:
    listing = ok(hub.server(student, "GET", "/assignments", params={"course_id": COURSE_ID}))
    assert listing["success"], listing
    return listing["value"]


def student_action(hub, student: str, action: str, lab: Lab) -> list[dict]:
    """fetch, submit or fetch_feedback, from the student's own server."""
    response = hub.server(
        student,
        "POST",
        f"/assignments/{action}",
        data={"course_id": COURSE_ID, "assignment_id": lab.name},
    )
    result = ok(response)
    assert result.get("success"), result
    return result["value"]


def write_answer(hub, student: str, lab: Lab, answer: str) -> dict:
    """Put `answer` in the fetched notebook's `oublier` cell and save it; return the notebook."""
    path = f"/api/contents/{lab.name}/{lab.notebook}"
    nb = ok(hub.server(student, "GET", path))["content"]
    cells = [
        cell
        for cell in nb["cells"]
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == ANSWER_GRADE_ID
    ]
    assert len(cells) == 1, [c.get("metadata") for c in nb["cells"]]
    cells[0]["source"] = answer
    body = {"type": "notebook", "format": "json", "content": nb}
    saved = hub.server(student, "PUT", path, json=body)
    assert saved.status_code == 200, (saved.status_code, saved.text[:500])
    return nb


def feedback_score(hub, student: str, lab: Lab) -> tuple[str, str]:
    """Score and maximum shown by the student's only feedback page, read from their server."""
    folder = ok(hub.server(student, "GET", f"/api/contents/{lab.name}/feedback"))
    stamps = [item["name"] for item in folder["content"] if item["type"] == "directory"]
    assert len(stamps) == 1, folder
    html_path = f"/api/contents/{lab.name}/feedback/{stamps[0]}/{Path(lab.notebook).stem}.html"
    html = ok(hub.server(student, "GET", html_path))["content"]
    return page_score(html)


def page_score(html: str) -> tuple[str, str]:
    """Score and maximum of a feedback page in the course's French template
    ("oublier — note : 9 / 12", decimal comma), with a decimal point."""
    found = re.findall(r"note\u00a0:\s*([0-9]+(?:,[0-9]+)?)\s*/\s*([0-9]+(?:,[0-9]+)?)", html)
    assert found, html[:500]
    score, total = found[0]
    return score.replace(",", "."), total.replace(",", ".")
