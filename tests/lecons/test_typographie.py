"""French typography and vocabulary in the lessons' learner-facing text: markdown, and the
strings and comments of their code (quiz texts, prints), wherever a learner reads them."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "lecons"
NOTEBOOKS = sorted(p.name for p in SOLUTIONS.glob("*.ipynb"))
NBSP = "\u00a0"
# a plain space where French wants a non-breaking one
BAD_SPACING = re.compile(r"(?<=\S) [:;?!]|«(?!\u00a0)|(?<!\u00a0)»")
# a string printed after another argument: print puts a plain space before it
STARTS_WITH_PUNCTUATION = re.compile(r"^[:;?!](\s|$)")
# SQL is code, not prose: its `= ?` placeholders keep their space
SQL_START = re.compile(
    r"^\s*(SELECT|DELETE|INSERT|UPDATE|PRAGMA|CREATE|WITH|DROP|VACUUM|WHERE|AND|OR|FROM|ORDER|"
    r"GROUP|JOIN|LIMIT|SET|VALUES|ON)\b"
)
FENCE = re.compile(r"(```[a-z]*\n.*?```)", re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]+`")
# the glossary's words (BRIEF): notebook, TP, répartiteur de charge, alice and bob in lowercase
FORBIDDEN = {
    r"\bcarnets?\b": "« notebook »",
    r"\blabo?s?\b": "« TP »",
    r"équilibreur": "« répartiteur de charge »",
    r"\bAlice\b": "`alice`, en minuscules",
    r"\bBob\b(?! Lemercier)": "`bob`, en minuscules",
}


def _string_body(token: str) -> tuple[str, str]:
    prefix = re.match(r"[rRbBuUfF]*", token).group(0)
    quote = '"""' if token[len(prefix) :].startswith(('"""', "'''")) else token[len(prefix)]
    return prefix, token[len(prefix) + len(quote) : -len(quote)]


def python_texts(source: str) -> list[str]:
    """The prose of Python source: non-SQL string literals (implicitly joined pieces are one
    SQL statement if any piece starts one) and comments."""
    texts, group = [], []

    def flush() -> None:
        bodies = [_string_body(t) for t in group]
        if not any(SQL_START.match(body) for _p, body in bodies):
            texts.extend(body for prefix, body in bodies if "b" not in prefix.lower())
        group.clear()

    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.STRING:
            group.append(tok.string)
            continue
        if tok.type == tokenize.COMMENT:
            texts.append(tok.string)
        if tok.type not in (tokenize.NL, tokenize.COMMENT) and group:
            flush()
    if group:
        flush()
    return texts


def markdown_texts(source: str) -> tuple[list[str], list[str]]:
    """(prose, python) of a markdown cell: prose without code spans; python fences apart."""
    prose, python = [], []
    for part in FENCE.split(source):
        if part.startswith("```python"):
            python.append(part[len("```python\n") : -3])
        elif part.startswith("```text"):
            continue
        else:  # prose, and Mermaid labels that a learner reads too
            prose.append(INLINE_CODE.sub("", part))
    return prose, python


def learner_texts(name: str) -> list[tuple[str, str]]:
    """(cell id, text) for every piece of learner-facing text of a notebook."""
    out = []
    for cell in nbformat.read(SOLUTIONS / name, as_version=4).cells:
        if cell.cell_type == "markdown":
            prose, python = markdown_texts(cell.source)
            out += [(cell.id, t) for t in prose]
            out += [(cell.id, t) for block in python for t in python_texts(block)]
        else:
            out += [(cell.id, t) for t in python_texts(cell.source)]
    return out


def spacing_errors(text: str) -> list[str]:
    errors = [text[max(0, m.start() - 20) : m.end() + 5] for m in BAD_SPACING.finditer(text)]
    if STARTS_WITH_PUNCTUATION.match(text):
        errors.append(text[:20])
    return errors


def test_the_checker_finds_what_it_must_and_spares_code():
    assert spacing_errors("Bonjour !") and spacing_errors("« oui »") and spacing_errors(":")
    assert not spacing_errors(f"Bonjour{NBSP}! «{NBSP}oui{NBSP}» a{NBSP}: b")
    assert python_texts('c.execute("SELECT * FROM t WHERE a = ? AND "\n  "b = ?")') == []
    assert python_texts('print("Quoi ?")  # voir : ici') == ["Quoi ?", "# voir : ici"]
    prose, python = markdown_texts('Texte ? `a = ?`\n```python\nprint("x :")\n```\n')
    assert prose == ["Texte ? \n", "\n"] and python == ['print("x :")\n']


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_non_breaking_spaces_before_double_punctuation_and_inside_guillemets(name: str):
    errors = [(cid, e) for cid, text in learner_texts(name) for e in spacing_errors(text)]
    assert not errors, errors[:10]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_one_vocabulary_the_glossarys(name: str):
    found = [
        (cid, m.group(0), word)
        for cid, text in learner_texts(name)
        for pattern, word in FORBIDDEN.items()
        for m in re.finditer(
            pattern, text, re.IGNORECASE if "Alice" not in pattern and "Bob" not in pattern else 0
        )
    ]
    assert not found, found
