"""Checker of the French in learner-facing text: typography and the course's vocabulary.

A test tool (tests/test_french_text.py runs it on the course). Why a checker of our own: the
rule is French typography (a non-breaking space, U+00A0 or the narrow U+202F, before ``: ; ? !``
and inside « »), but the same characters are code in the texts it reads (``user:progression``,
``10:30``, ``{"a": 1}``, ``x[1:]``, SQL's ``= ?``, ``!=``, URLs, Mermaid's ``A : label``).
So it reads prose only: Markdown without its code spans, fenced blocks (Mermaid included), URLs,
HTML tags and math; Python's string literals (not its syntax), without SQL placeholders, Mermaid
sources and code held in strings. Every finding says where (file, line or cell and line) and
shows an excerpt, the offending ordinary space drawn as ``␣``.

The vocabulary check enforces one word per idea (the glossary's): « notebook », not « carnet »;
« TP », not « lab »/« labo », for the graded exercise; « répartiteur de charge », not
« équilibreur »; the learner ``alice``, as her ``user_id``. Code identifiers and paths
(``quiz_du_carnet``, ``course.labo``, ``make lab``, ``JupyterLab``) are allowed.
"""

from __future__ import annotations

import ast
import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "NBSP",
    "NNBSP",
    "Finding",
    "check_file",
    "check_markdown",
    "check_notebook",
    "check_python_file",
    "check_python_source",
    "check_text",
    "check_vocabulary",
    "learner_files",
    "looks_french",
    "mask_markdown",
]

NBSP, NNBSP = "\u00a0", "\u202f"
NON_BREAKING = NBSP + NNBSP
PLAIN = " \t"
CODE = "⟨code⟩"  # what a masked code span reads as (a word: punctuation after it still counts)

# ---------------------------------------------------------------------------- findings


@dataclass(frozen=True)
class Finding:
    """One problem: where it is, what is wrong, and the text around it."""

    where: str
    message: str
    excerpt: str

    def __str__(self) -> str:
        return f"{self.where} : {self.message} : « {self.excerpt} »"


def _excerpt(text: str, index: int, mark: int | None = None, width: int = 32) -> str:
    """The text around ``index`` on one line; the ordinary space at ``mark`` drawn as ␣."""
    if mark is not None:
        text = text[:mark] + "␣" + text[mark + 1 :]
    start, end = max(0, index - width), min(len(text), index + width)
    piece = " ".join(text[start:end].split("\n"))
    return ("…" if start else "") + piece.strip() + ("…" if end < len(text) else "")


# ---------------------------------------------------------------------------- the rules

# after ':' or ';' (prose): a space or the end; after '?' or '!': that or closing punctuation
_AFTER_COLON = re.compile(r"$|[\s\u00a0\u202f]")
_AFTER_MARK = re.compile(r"$|[\s\u00a0\u202f)\]}\"'»*_.,;:…?!<]")


def check_text(text: str, *, strict: bool = True) -> list[tuple[int, str, int | None]]:
    """Typography problems of a prose ``text`` (code already masked): (index, message, index of
    the offending ordinary space or None). ``strict=False`` reports only ordinary spaces where a
    non-breaking one belongs, not missing spaces (for text that may not be French)."""
    found: list[tuple[int, str, int | None]] = []
    for i, ch in enumerate(text):
        if ch in ":;?!":
            after = text[i + 1 : i + 2]
            pattern = _AFTER_COLON if ch in ":;" else _AFTER_MARK
            if not pattern.match(after) or (ch == "!" and after in "=["):
                continue
            before = text[i - 1] if i else ""
            if before in NON_BREAKING or before in ("", "\n"):
                continue
            if before in PLAIN:
                found.append((i, f"espace ordinaire avant « {ch} » (insécable U+00A0)", i - 1))
            elif strict and before not in "?!([{«'\"" and not (ch in ":;" and before in "?!"):
                found.append((i, f"pas d'espace avant « {ch} » (insécable U+00A0)", None))
        elif ch == "«":
            after = text[i + 1 : i + 2]
            if after in PLAIN and after:
                found.append((i, "espace ordinaire après « « » (insécable U+00A0)", i + 1))
            elif strict and after and after not in NON_BREAKING + "»\n":
                found.append((i, "pas d'espace après « « » (insécable U+00A0)", None))
        elif ch == "»":
            before = text[i - 1] if i else ""
            if before in PLAIN and before:
                found.append((i, "espace ordinaire avant « » » (insécable U+00A0)", i - 1))
            elif strict and before and before not in NON_BREAKING + "«\n":
                found.append((i, "pas d'espace avant « » » (insécable U+00A0)", None))
    return found


# (pattern, the course's word, lessons only); a word glued to '_', '.', '/', '-' or a letter is
# code or part of another word (quiz_du_carnet, course.labo, tests/labo, JupyterLab) and is left
# alone, and so are the commands `make lab` and `jupyter lab`
_WORD = r"(?<![\w./\-]){}(?![\w/\-]|\.\w)"
VOCABULARY: list[tuple[re.Pattern[str], str, bool]] = [
    # « carnet de notes » is nbgrader's gradebook, another idea
    (re.compile(_WORD.format(r"carnets?(?! de notes)"), re.I), "« notebook »", False),
    (re.compile(_WORD.format(r"(?<!make )(?<!jupyter )labo?s?"), re.I), "« TP »", False),
    (re.compile(_WORD.format(r"équilibreurs?"), re.I), "« répartiteur de charge »", False),
    # the glossary's entry is « Checkpoint » (PRAGMA wal_checkpoint), as every lesson says it
    (re.compile(_WORD.format(r"points? de contrôle"), re.I), "« checkpoint »", False),
    # a person's name takes a capital in prose (« Alice va écrire », issue 21); her user_id is
    # code, `alice`, and a quoted id ('bob' in SQL, "alice" in a call) is left alone
    (
        re.compile(_WORD.format(r"(?<!['\"])(?:alice|bob|chloé|chloe)(?!['\"])")),
        "« Alice », « Bob », « Chloé » (un prénom prend une majuscule ; l'identifiant : `alice`)",
        True,
    ),
]


def check_vocabulary(text: str, *, lesson: bool = True) -> list[tuple[int, str, None]]:
    """Words the glossary replaces, in a prose ``text`` (code already masked); ``lesson``: the
    text is a lesson's or the TP's, where learners are named (Alice, Bob)."""
    found = []
    for pattern, word, lessons_only in VOCABULARY:
        if lessons_only and not lesson:
            continue
        for m in pattern.finditer(text):
            found.append((m.start(), f"vocabulaire : « {m.group(0)} » → {word}", None))
    return found


_FRENCH_WORDS = re.compile(
    r"\b(le|la|les|des|du|une|est|pas|vous|pour|dans|avec|sur|qui|que|aux|cette|sont|mais|"
    r"donc|leur|nous|votre|vos|ton|tes|être|fichier|élève)\b",
    re.IGNORECASE,
)


def looks_french(text: str) -> bool:
    """French prose, rather than English or code: accented letters or two French words, not
    counting what is quoted in « » or written as code (an English sentence may quote French)."""
    text = re.sub(r"«[^»]*»|``[^`]*``|`[^`]*`|\"[^\"\n]*\"", " ", text)
    return bool(re.search(r"[éèêàùçôîâœÉÈÀÇ]", text)) or len(_FRENCH_WORDS.findall(text)) >= 2


# ---------------------------------------------------------------------------- Markdown

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_URL = re.compile(r"(?:https?|ftp|file)://[^\s)>\]»]+|\bwww\.[^\s)>\]»]+")


def _keep_lines(match: re.Match[str], replacement: str = "") -> str:
    """Replace a span, keeping its line breaks so that line numbers stay right."""
    return replacement + "\n" * match.group(0).count("\n")


def mask_markdown(text: str) -> str:
    """The prose of a Markdown text: code (fenced and inline), URLs, link targets, HTML tags
    and comments, math and table rules removed; entities decoded; one output line per input
    line."""
    lines, fence = [], ""
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                if not line.strip()[len(m.group(1)) :].strip():
                    fence = ""
            lines.append("")
        elif m:
            fence = m.group(1)
            lines.append("")
        else:
            lines.append("" if _TABLE_RULE.match(line) else line)
    text = "\n".join(lines)
    text = re.sub(r"(`+)(?!`).+?(?<!`)\1(?!`)", lambda m: _keep_lines(m, CODE), text, flags=re.S)
    text = re.sub(r"<!--.*?-->", _keep_lines, text, flags=re.S)
    text = re.sub(r"\$\$.+?\$\$", lambda m: _keep_lines(m, "x"), text, flags=re.S)
    text = re.sub(r"(?<![\\\w])\$[^$\n]+\$", "x", text)
    text = re.sub(r"\]\([^)\s]*(?:\s+[\"'][^\"']*[\"'])?\)", "]", text)  # link and image targets
    text = re.sub(r"^\s*\[[^\]]+\]:\s*\S+.*$", "", text, flags=re.M)  # link definitions
    text = re.sub(r"</?[A-Za-z][^<>]*>", _keep_lines, text)
    text = _URL.sub("x", text)
    return html.unescape(text)


def _line_breaks(lines: list[str], i: int) -> list[tuple[int, str, None]]:
    """A line break inside a paragraph renders as an ordinary space: a line that starts with
    ``: ; ? ! »``, or one that ends with ``«``, lets the mark wrap alone."""
    line, found = lines[i], []
    head = line.lstrip()
    if i and lines[i - 1].strip() and head[:1] in (":", ";", "?", "!", "»"):
        if not (head.startswith("![") or head.startswith("!=")):
            found.append((len(line) - len(head), f"retour à la ligne avant « {head[0]} »", None))
    if line.rstrip().endswith("«") and i + 1 < len(lines) and lines[i + 1].strip():
        found.append((len(line.rstrip()) - 1, "retour à la ligne après « « »", None))
    return found


def check_markdown(text: str, where: str, *, lesson: bool = True) -> list[Finding]:
    """Typography and vocabulary findings of a Markdown text, one ``where`` + line each.

    ``lesson``: a lesson's or the TP's text, French throughout; otherwise (a README), lines
    that do not look French are checked only for ordinary spaces before ``: ; ? !``."""
    findings = []
    lines = mask_markdown(text).split("\n")
    for number, line in enumerate(lines, start=1):
        french = lesson or looks_french(line)
        problems = check_text(line, strict=french)
        if french:
            problems += check_vocabulary(line, lesson=lesson)
        problems += _line_breaks(lines, number - 1)
        for index, message, mark in sorted(problems, key=lambda p: p[0]):
            excerpt = _excerpt(line, index, mark)
            findings.append(Finding(f"{where}, ligne {number}", message, excerpt))
    return findings


# ---------------------------------------------------------------------------- Python strings

_MERMAID = re.compile(
    r"^\s*(flowchart|graph|sequenceDiagram|erDiagram|classDiagram|stateDiagram(-v2)?|gantt|"
    r"pie|journey|mindmap|timeline)\b|\b(accTitle|accDescr)\s*:|-->|->>|\|\|--|--o\{|\}o--",
    re.MULTILINE,
)
_CSS = re.compile(r"\{[^{}]*[\w-]+\s*:\s*[^;{}]+;[^{}]*\}")
# a string that starts with an SQL statement (in capitals, as the course writes SQL) is SQL
_SQL = re.compile(
    r"^\s*(CREATE|SELECT|INSERT|UPDATE|DELETE|REPLACE|PRAGMA|DROP|ALTER|WITH|BEGIN|COMMIT)\b"
)
_CODE_IN_STRING = re.compile(
    r"^\s*(def|async def|class|import|from|for|while|if|with|return|await)\b", re.MULTILINE
)
_MAGIC = re.compile(r"^(\s*)([%!].*)$", re.MULTILINE)
# code inside a sentence: SQL placeholders ('= ?', 'IN (?, ?)', 'LIMIT ?'), ADK's state prefixes
# ('user:', 'app:', 'temp:'), Python block headers ('for x in liste:', 'lambda x:')
_SQL_PLACEHOLDER = re.compile(
    r"(?:[=(,<>]|\b(?:LIMIT|OFFSET|IN|LIKE|IS|AND|OR|VALUES))\s*\?(?=[\s,)]|$)"
)
_STATE_PREFIX = re.compile(r"(?<![\w.])(?:app|user|temp):(?=[\s\u00a0]|$)")
_PY_HEADER = re.compile(
    r"\b(?:for\s+[\w, ]+\s+in\s+[\w.()\[\]]+|with\s+[^:\n]+?\s+as\s+\w+|"
    r"lambda(?:\s+[\w, =*]+)?|def\s+\w+\([^)]*\)|class\s+\w+(?:\([^)]*\))?|"
    r"(?:el)?if\s+[^:\n]+|else|try|finally|except(?:\s+[\w.]+(?:\s+as\s+\w+)?)?|"
    r"while\s+[^:\n]+)\s*:"
)


def _is_code(text: str) -> bool:
    """Mermaid, CSS or SQL source, or Python source held in a string (a lesson writing a .py
    file)."""
    if _MERMAID.search(text) or _CSS.search(text) or _SQL.match(text):
        return True
    if _CODE_IN_STRING.search(text):
        try:
            ast.parse(text)
        except SyntaxError:
            return False
        return True
    return False


def mask_string(text: str) -> str:
    """A string literal's prose: inline code (backticks), HTML tags, URLs and the code that
    sentences quote (SQL placeholders, state prefixes, Python block headers) removed."""
    text = re.sub(r"<style\b.*?</style>", _keep_lines, text, flags=re.S | re.I)
    text = re.sub(r"(`+)(?!`).+?(?<!`)\1(?!`)", lambda m: _keep_lines(m, CODE), text, flags=re.S)
    text = re.sub(r"</?[A-Za-z][^<>]*>", _keep_lines, text)
    text = _URL.sub("x", text)
    text = _SQL_PLACEHOLDER.sub(" x", text)
    text = _STATE_PREFIX.sub("x", text)
    return _PY_HEADER.sub(CODE, text)


def _paragraphs(text: str) -> Iterator[tuple[int, str]]:
    """(offset, paragraph) for each blank-line separated paragraph of ``text``."""
    offset = 0
    for part in re.split(r"(\n[ \t]*\n)", text):
        if part.strip() and not re.fullmatch(r"\n[ \t]*\n", part):
            yield offset, part
        offset += len(part)


def _strings(tree: ast.AST) -> Iterator[tuple[ast.expr, str, bool]]:
    """Every string literal of ``tree`` as (node, text, is_docstring); an f-string is one text
    where each replacement field reads ``X``; format specs are code, not text."""
    docstrings: set[int] = set()
    inner: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            docstrings.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            inner.update(id(v) for v in node.values)
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            inner.add(id(node.format_spec))
            inner.update(id(v) for v in ast.walk(node.format_spec))
    for node in ast.walk(tree):
        if id(node) in inner:
            continue
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "X"
                for v in node.values
            )
            yield node, text, False
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node, node.value, id(node) in docstrings


def _line_of(node: ast.expr, text: str, index: int, source_lines: list[str]) -> int:
    """The source line of ``text[index]`` inside the literal ``node`` (first line if unsure)."""
    first, last = node.lineno, node.end_lineno or node.lineno
    if first == last:
        return first
    before = text[max(0, index - 12) : index + 1].split("\n")[-1]
    for number in range(first, last + 1):
        if before and before in source_lines[number - 1]:
            return number
    return min(last, first + text[:index].count("\n"))


def check_python_source(
    source: str, where: str, *, docstrings: str = "french", lesson: bool = False
) -> list[Finding]:
    """Findings in the string literals of Python ``source`` (its syntax is never read as text).

    Strings without any space are code tokens (``"app:"``, ``"user:progression"``) and are
    skipped, and so are Mermaid, CSS and code held in strings. Paragraphs that do not look
    French are checked only for ordinary spaces before ``: ; ? !`` (no English text has them),
    and docstrings only when French (``docstrings="french"``: the course's internals document
    themselves in English) or always (``"all"``: the code of a lesson, which learners read)."""
    masked = _MAGIC.sub(lambda m: m.group(1) + "pass", source)  # IPython magics and shell lines
    tree = ast.parse(masked)
    lines = source.split("\n")
    findings = []
    for node, text, is_docstring in _strings(tree):
        if not re.search(r"\s", text) or _is_code(text):
            continue
        prose = mask_string(text)
        for offset, paragraph in _paragraphs(prose):
            french = looks_french(paragraph)
            if is_docstring and docstrings == "french" and not french:
                continue
            problems = check_text(paragraph, strict=french or not is_docstring)
            if french:
                problems += check_vocabulary(paragraph, lesson=lesson)
            for index, message, mark in sorted(problems, key=lambda p: p[0]):
                line = _line_of(node, prose, offset + index, lines)
                findings.append(
                    Finding(f"{where}:{line}", message, _excerpt(paragraph, index, mark))
                )
    return findings


def check_python_file(path: Path, root: Path) -> list[Finding]:
    return check_python_source(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())


def check_notebook(path: Path, root: Path) -> list[Finding]:
    """Markdown cells as prose; code cells through their string literals (docstrings too: a
    learner reads a lesson's code)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    rel = path.relative_to(root).as_posix()
    findings = []
    for index, cell in enumerate(nb.get("cells", [])):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        where = f"{rel}, cellule {index} ({cell.get('cell_type')})"
        if cell.get("cell_type") == "markdown":
            findings += check_markdown(source, where)
        elif cell.get("cell_type") == "code":
            try:
                found = check_python_source(source, where, docstrings="all", lesson=True)
            except SyntaxError as exc:
                found = [Finding(where, "code illisible par le vérificateur", str(exc))]
            findings += [
                Finding(f.where.replace(f"{where}:", f"{where}, ligne "), f.message, f.excerpt)
                for f in found
            ]
    return findings


# ---------------------------------------------------------------------------- what is checked


def learner_files(root: Path) -> list[Path]:
    """Every file whose text a learner (or an instructor) reads: the lessons and the TP (both
    versions), the READMEs (the instructors' guide, grader/README.md, included), and the
    course's and the grading's Python modules (the session service's errors and docstrings
    included: a learner reads them)."""
    files = sorted(root.glob("notebooks/**/*.ipynb")) + sorted(root.glob("solutions/**/*.ipynb"))
    files += [root / "README.md", root / "grader" / "README.md"]
    files += [root / "grader" / "grading" / "student_package.md"]  # the learners' README
    for tree in ("course", "grader/grading"):
        files += sorted((root / tree).glob("**/*.py"))
    return [
        p
        for p in files
        if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts
    ]


def check_file(path: Path, root: Path) -> list[Finding]:
    if path.suffix == ".ipynb":
        return check_notebook(path, root)
    if path.suffix == ".py":
        return check_python_file(path, root)
    rel = path.relative_to(root).as_posix()
    return check_markdown(path.read_text(encoding="utf-8"), rel, lesson=False)
