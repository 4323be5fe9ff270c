"""The TP's answer appears nowhere a learner reads before the due date.

A *complete erasure* is what the TP asks for: DELETE statements on the three tables that hold a
learner (``events``, ``sessions``, ``user_states``) plus a ``VACUUM``, in one place a learner
reads. It is found by reading the SQL that the code can build (string constants, f-strings,
concatenations, ``.format``/``%`` templates, ``executescript`` scripts, ``%%sql`` cells, SQL in
Markdown code), not by looking for one spelling. A DELETE whose table is a placeholder
(``f"DELETE FROM {table}"``) stands for every table named by a string in the same place.

Where a learner reads: every notebook under notebooks/, every notebook under solutions/ as
nbgrader gives it to students (its own ClearSolutions and ClearHiddenTests, with the course's
configuration), and every file of the installed ``course`` package. Only grader/ (the TP's hidden
side) and the solution regions may hold the answer.
"""

from __future__ import annotations

import ast
import copy
import importlib.resources
import re
from pathlib import Path

import nbformat
import pytest
from helpers import REPO

ERASED = frozenset({"events", "sessions", "user_states"})
HOLE = "\x00"  # a part of a SQL text that the code fills at run time
PLACEHOLDER = re.compile(r"\{[^{}]*\}|%(?:\([^)]*\))?[sdr]")
DELETE = re.compile(
    r"^\s*DELETE\s+FROM\s+(?:[\"'`\[]?\w+[\"'`\]]?\.)?(?:[\"'`\[]?(\w+)[\"'`\]]?|(\x00))",
    re.IGNORECASE,
)
VACUUM = re.compile(r"^\s*VACUUM\b", re.IGNORECASE)
IDENTIFIER = re.compile(r"[\"'`\[]?(\w+)[\"'`\]]?")
FENCE = re.compile(r"```(\w*)[^\n]*\n(.*?)```", re.DOTALL)
INLINE = re.compile(r"`([^`\n]+)`")


# ------------------------------------------------------------------- reading the SQL of code


def _flatten(node: ast.AST) -> str | None:
    """The text a string expression builds, with a HOLE where a value is filled in."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return PLACEHOLDER.sub(HOLE, node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(
            PLACEHOLDER.sub(HOLE, v.value) if isinstance(v, ast.Constant) else HOLE
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mod):
        left = _flatten(node.left)
        if isinstance(node.op, ast.Mod):
            return left
        right = _flatten(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else HOLE) + (right if right is not None else HOLE)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "format":
            return _flatten(node.func.value)
    return None


def _python_texts(source: str) -> list[str] | None:
    """Every string a piece of Python builds (None if it does not parse)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)  # %%sql cells, magics
    except Exception:  # noqa: BLE001 - plain Python then
        pass
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    texts, inside = [], set()
    for node in ast.walk(tree):
        if id(node) in inside:
            continue
        text = _flatten(node)
        if text is not None:
            texts.append(text)
            inside.update(id(n) for n in ast.walk(node))
    # every constant too, whole: the table names a template is filled with (format, %, loops)
    texts += [
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    return texts


def _comments(source: str) -> list[str]:
    """Comments a learner reads too (``# DELETE FROM events``)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return []
    return [t.string.lstrip("#") for t in tokens if t.type == tokenize.COMMENT]


def _quoted(source: str) -> list[str]:
    """Strings in code that does not parse: whatever sits between quotes."""
    return [m.group(2) for m in re.finditer(r"([\"'])(.*?)(?<!\\)\1", source, re.DOTALL)]


def _markdown_texts(source: str) -> list[str]:
    texts = []
    for language, body in FENCE.findall(source):
        found = _python_texts(body) if language in ("python", "py", "ipython3") else None
        texts.extend(found if found is not None else [body])
    prose = FENCE.sub("", source)
    texts.extend(INLINE.findall(prose))
    # a line of plain Markdown that is a statement (list markers and quotes taken off)
    texts.extend(re.sub(r"^[\s>*+\-\d.)]*", "", line) for line in prose.splitlines())
    return texts


def _statements(texts: list[str]) -> list[str]:
    """Each text cut into SQL statements (a script holds several)."""
    return [part for text in texts for part in re.split(r";|\n\s*\n", text)]


def erasure(texts: list[str]) -> dict[str, object]:
    """What the texts of one place erase: the DELETE targets and whether a VACUUM runs."""
    names = {m.group(1) for t in texts for m in [IDENTIFIER.fullmatch(t.strip())] if m}
    targets: set[str] = set()
    vacuum = False
    for statement in _statements(texts):
        if VACUUM.match(statement):
            vacuum = True
        m = DELETE.match(statement)
        if m:
            table = m.group(1)
            if table is None:  # f"DELETE FROM {table}": any table this place names
                targets |= {n.lower() for n in names}
            else:
                targets.add(table.lower())
    return {"tables": targets & ERASED, "vacuum": vacuum}


def is_complete(found: dict[str, object]) -> bool:
    return found["tables"] == ERASED and bool(found["vacuum"])


def notebook_texts(nb: nbformat.NotebookNode) -> list[str]:
    """Every SQL candidate of a notebook (all its cells: a learner reads them all)."""
    texts: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            found = _python_texts(cell.source)
            texts.extend(found if found is not None else _quoted(cell.source))
            texts.extend(_comments(cell.source))
        else:
            texts.extend(_markdown_texts(cell.source))
    return texts


def file_texts(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".py":
        found = _python_texts(text)
        return (found if found is not None else _quoted(text)) + _comments(text)
    if path.suffix == ".ipynb":
        return notebook_texts(nbformat.reads(text, as_version=4))
    if path.suffix == ".md":
        return _markdown_texts(text)
    return text.splitlines()


# ------------------------------------------------------------------------- what students get


def nbgrader_config():
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(REPO / "grader")).load_config()


def as_released(path: Path) -> nbformat.NotebookNode:
    """The notebook as `nbgrader generate_assignment` strips it (the course's own settings)."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    nb = nbformat.read(path, as_version=4)
    config = nbgrader_config()
    for preprocessor in (ClearSolutions, ClearHiddenTests):
        nb, _ = preprocessor(config=config).preprocess(nb, {})
    return nb


def student_side() -> dict[str, list[str]]:
    """Every place a learner reads, with its SQL candidates."""
    places: dict[str, list[str]] = {}
    for path in sorted((REPO / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            places[str(path.relative_to(REPO))] = notebook_texts(nbformat.read(path, 4))
    for path in sorted((REPO / "solutions").rglob("*.ipynb")):
        if ".ipynb_checkpoints" not in path.parts:
            name = f"{path.relative_to(REPO)} (version élève)"
            places[name] = notebook_texts(as_released(path))
    package = importlib.resources.files("course")
    for path in sorted(Path(str(package)).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            places[f"course/{path.relative_to(Path(str(package)))}"] = file_texts(path)
    places["README.md"] = file_texts(REPO / "README.md")
    return places


def test_no_place_a_learner_reads_holds_a_complete_erasure():
    places = student_side()
    assert any(p.startswith("course/") and p.endswith(".py") for p in places)
    assert "notebooks/lecons/08_annexe_adk.ipynb" in places
    assert "solutions/oublier/oublier.ipynb (version élève)" in places
    complete = [place for place, texts in places.items() if is_complete(erasure(texts))]
    assert complete == [], f"le corrigé du TP se lit ici : {complete}"


def test_the_tp_solution_is_found_before_nbgrader_strips_it():
    """Positive control: the same search finds the answer in the instructor's notebook, and
    loses it exactly where nbgrader clears the solution region."""
    path = REPO / "solutions" / "oublier" / "oublier.ipynb"
    raw = erasure(notebook_texts(nbformat.read(path, as_version=4)))
    assert raw == {"tables": ERASED, "vacuum": True}
    released = as_released(path)
    assert not is_complete(erasure(notebook_texts(released)))
    answer = next(c for c in released.cells if c.id == "oublier")
    assert "NotImplementedError" in answer.source and "VACUUM" not in answer.source


# ------------------------------------------------------------------ the search, attacked

OLD_APPENDIX = """
async def oublier_avec_adk(service, chemin, user_id):
    c = sqlite3.connect(chemin)
    with c:
        for table in ("events", "sessions", "user_states"):
            c.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                      (APP_NAME, user_id))
    c.execute("VACUUM")
"""

DISGUISED = {
    "boucle et f-string (l'ancienne annexe)": OLD_APPENDIX,
    "un seul script": (
        'conn.executescript("""\n  delete from events where user_id = ?;\n'
        "  DELETE FROM sessions WHERE user_id = ?;\n"
        '  DELETE FROM "user_states" WHERE user_id = ?;\n  vacuum;\n""")'
    ),
    "concaténation": (
        'for t in TABLES:\n    c.execute("DELETE FROM " + t + " WHERE user_id = ?", (u,))\n'
        'TABLES = ["events", "sessions", "user_states"]\nc.execute("VACUUM")'
    ),
    "format et %": (
        'c.execute("DELETE FROM {} WHERE user_id = ?".format("events"))\n'
        'c.execute("DELETE FROM %s WHERE user_id = ?" % "sessions")\n'
        'c.execute("DELETE FROM main.[user_states] WHERE user_id = ?")\n'
        'c.execute(" Vacuum ")'
    ),
    "cellule %%sql": (
        "%%sql\nDELETE FROM events WHERE user_id = 'alice';\n"
        "DELETE FROM sessions WHERE user_id = 'alice';\n"
        "DELETE FROM user_states WHERE user_id = 'alice';\nVACUUM;"
    ),
    "chaînes collées": (
        'q = ("DELETE FROM " "events")\nr = "DELETE FROM sessions"\n'
        's = "DELETE FROM `user_states`"\nv = "VACUUM"'
    ),
    "code qui ne s'analyse pas": (
        'c.execute("DELETE FROM events") ; c.execute("DELETE FROM sessions")\n'
        'c.execute("DELETE FROM user_states") ; c.execute("VACUUM") )'
    ),
}


@pytest.mark.parametrize("name", sorted(DISGUISED))
def test_a_disguised_erasure_in_one_cell_is_found(name: str):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(DISGUISED[name])])
    assert is_complete(erasure(notebook_texts(nb))), name


def test_an_erasure_in_comments_and_plain_markdown_is_found():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("# DELETE FROM events WHERE user_id = ?\nx = 1  # VACUUM"),
            nbformat.v4.new_markdown_cell(
                "La recette :\n\n1. DELETE FROM sessions WHERE user_id = ?\n"
                "> DELETE FROM user_states WHERE user_id = ?"
            ),
        ]
    )
    assert is_complete(erasure(notebook_texts(nb)))


def test_an_erasure_spread_over_cells_and_markdown_is_found():
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell('c.execute("DELETE FROM events WHERE user_id = ?", (u,))'),
            nbformat.v4.new_markdown_cell(
                "Puis `DELETE FROM sessions WHERE user_id = ?` et :\n\n"
                "```sql\nDELETE FROM user_states WHERE user_id = ?;\n```"
            ),
            nbformat.v4.new_markdown_cell("```python\nconn.execute('VACUUM')\n```"),
        ]
    )
    assert is_complete(erasure(notebook_texts(nb)))


def test_pieces_and_prose_are_not_an_erasure():
    """What the lessons may show: two DELETEs and a VACUUM (the events by the cascade), the
    word VACUUM in a sentence, a SELECT over the three tables."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                'c.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?", a)\n'
                'c.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?", a)\n'
                'c.execute("VACUUM")\n'
                'for table in ("events", "sessions", "user_states"):\n'
                '    c.execute(f"SELECT count(*) FROM {table}")\n'
                'Option("close() fait un VACUUM, puis DELETE FROM events", False, "Non.")'
            ),
            nbformat.v4.new_markdown_cell("Sans `VACUUM`, un DELETE FROM events ne suffit pas."),
        ]
    )
    found = erasure(notebook_texts(nb))
    assert found == {"tables": {"sessions", "user_states"}, "vacuum": True}
    assert not is_complete(found)
    with_events = copy.deepcopy(nb)
    with_events.cells.append(nbformat.v4.new_code_cell('c.execute("DELETE FROM events")'))
    assert is_complete(erasure(notebook_texts(with_events)))  # control: one piece more
