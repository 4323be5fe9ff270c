"""Student text rendered inert in every page an instructor or a classmate opens.

nbconvert keeps raw HTML and ``javascript:`` links in Markdown, and nbgrader 0.9.6's templates
(feedback, formgrader's submission view) do not sanitise Markdown cells even with ``sanitize_html``:
a ``<script>`` in an answer ran in formgrader's page, next to its ``_xsrf`` (enough to open a
terminal). ``grader/nbgrader_config.py`` registers these filters under nbconvert's own names, with
the two preprocessors. Markup outside the allow-list is shown as text.

Pages render in time linear in the student's text: bleach walks the open elements at each block
tag (``"<ul><li>" * 20000``, 160 KB, took 78 s in ``make feedback``), nbconvert's
``strip_files_prefix`` regex is quadratic on a line of ``[``. The text is cut past
``MAX_SOURCE_CHARS`` (Markdown), ``MAX_HTML_CHARS`` (HTML) or ``MAX_DEPTH`` open elements (a linear
scan never counting fewer than bleach keeps open); the rest is shown escaped after
``OVERFLOW_NOTE``, up to ``MAX_SHOWN_CHARS``.
"""

from __future__ import annotations

import html
import re
from typing import Any

import bleach
from bleach.html5lib_shim import Filter
from jinja2 import pass_context
from markupsafe import Markup
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbconvert.preprocessors import Preprocessor

__all__ = [
    "MAX_DEPTH",
    "OVERFLOW_NOTE",
    "DropOutputFilenames",
    "EscapeStudentNames",
    "bounded_cut",
    "clean_html",
    "markdown2html",
    "strip_files_prefix",
]

# A written answer of the TP is a few kB; these bounds keep a page under about a second each.
MAX_SOURCE_CHARS = 50_000  # Markdown source rendered (mistune is about linear up to there)
MAX_HTML_CHARS = 200_000  # HTML handed to bleach
MAX_DEPTH = 40  # open elements at once (a Markdown list ten levels deep opens about 20)
MAX_SHOWN_CHARS = 100_000  # of the text past the cut, shown as plain text
OVERFLOW_NOTE = (
    "Texte de l'élève trop long ou trop imbriqué pour être mis en forme\u00a0: la suite est "
    "affichée telle qu'écrite, en texte brut."
)

TAGS = frozenset(
    "a abbr b blockquote br caption code dd del div dl dt em h1 h2 h3 h4 h5 h6 hr i img ins kbd li"
    " ol p pre s samp span strong sub sup table tbody td tfoot th thead tr u ul".split()
)
# Pygments' token classes (``k``, ``nf``, ``s2``), its ``highlight`` wrapper, a fence's language.
_CLASS = re.compile(r"[a-z][a-z0-9]{0,2}|highlight|hl-[\w-]{1,30}|language-[\w-]{1,30}")
_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*")
_LINK = re.compile(r"(https?://|mailto:|#)", re.IGNORECASE)


def _allowed(tag: str, name: str, value: str) -> bool:
    """Attribute allow-list: no event handler, style, id, form or frame attribute."""
    if name == "class":
        return tag in ("code", "div", "pre", "span") and all(map(_CLASS.fullmatch, value.split()))
    if tag == "a":
        return name == "title" or (name == "href" and bool(_LINK.match(value)))
    if tag == "img":
        if name == "src":
            return bool(_IMAGE.fullmatch(value))
        return name in ("alt", "title", "width", "height")
    if tag in ("td", "th"):
        return name in ("colspan", "rowspan", "align")
    if tag == "ol":
        return name == "start"
    return tag == "abbr" and name == "title"


class _SafeLinks(Filter):
    """Every kept link opens without a referrer or a handle on this page."""

    def __iter__(self):
        for token in super().__iter__():
            if token["type"] == "StartTag" and token["name"] == "a":
                rel = {(None, "rel"): "noopener noreferrer nofollow"}
                token["data"] = {**(token.get("data") or {}), **rel}
            yield token


_CLEANER = bleach.Cleaner(
    tags=TAGS,
    attributes=_allowed,
    protocols={"http", "https", "mailto", "data"},  # data: passes _allowed for images only
    strip=False,
    strip_comments=True,
    filters=[_SafeLinks],
)


# html5lib's nesting of the allowed tags (bleach makes any other tag text first): void elements
# never stay open; an end tag closes up to its element unless a scope boundary lies in between;
# ``<li>``/``<dd>``/``<dt>`` close the previous item, a block tag an open ``<p>`` (any other case
# counts as open: it only cuts earlier); a formatting element closed by another's end tag is
# reopened at the next text, so it keeps counting.
_VOID = frozenset({"br", "hr", "img"})
_FORMATTING = frozenset({"a", "b", "code", "em", "i", "s", "strong", "u"})
_SCOPE = frozenset({"table", "td", "th", "caption"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_CLOSES_P = _HEADINGS | {"blockquote", "div", "dl", "hr", "ol", "p", "pre", "ul"}
_ITEM_STOP = _SCOPE | _HEADINGS | set("blockquote dl ol pre tbody tfoot thead tr ul".split())
_ITEMS = {"li": {"li"}, "dd": {"dd", "dt"}, "dt": {"dd", "dt"}}
_TAG_START = re.compile(r"<(/?)([A-Za-z][^\s/>\x00]*)")
# A tag ends at its first ``>`` outside a quoted value (a quote after ``=``, which may never
# close); possessive quantifiers keep the match linear.
_TAG_END = re.compile(
    r"""(?:[^>"'=]++|=[ \t\n\r\f]*+(?:"[^"]*+(?:"|\Z)|'[^']*+(?:'|\Z))|[="'])*+>"""
)
# A comment ends as the tokenizer ends it: ``<!-->``, ``<!--->``, then the first ``-->``/``--!>``.
_COMMENT_END = re.compile(r"-?>|.*?--!?>", re.S)


def _close(stack: list[str], names: set[str], stops: frozenset[str]) -> int:
    """Pop up to the innermost of `names`, unless one of `stops` lies in between; the number of
    formatting elements closed on the way (the parser reopens them)."""
    for index in range(len(stack) - 1, -1, -1):
        if stack[index] in names:
            dangling = sum(1 for other in stack[index + 1 :] if other in _FORMATTING)
            del stack[index:]
            return dangling
        if stack[index] in stops:
            return 0
    return 0


def bounded_cut(fragment: str, max_chars: int = MAX_HTML_CHARS, max_depth: int = MAX_DEPTH) -> int:
    """Where `fragment` must be cut for bleach to parse it in linear time: the tag that passes
    `max_depth`, the last tag boundary before `max_chars`, else len(fragment)."""
    stack: list[str] = []  # the parser's open elements
    dangling = 0  # formatting elements closed implicitly, reopened by the parser
    pos, length = 0, len(fragment)
    while pos < length:
        lt = fragment.find("<", pos)
        if lt < 0 or lt >= max_chars:
            return min(length, max_chars)
        end = lt + 1
        if fragment.startswith("<!--", lt):
            comment = _COMMENT_END.match(fragment, lt + 4)
            end = comment.end() if comment else length
        elif match := _TAG_START.match(fragment, lt):
            tag = _TAG_END.match(fragment, match.end())
            end = tag.end() if tag else length
            name = match.group(2).lower()
            if name in TAGS and match.group(1):
                dangling += _close(stack, {name}, _SCOPE | {"ol", "ul"} if name == "li" else _SCOPE)
            elif name in TAGS:
                if name in _CLOSES_P:
                    dangling += _close(stack, {"p"}, _SCOPE)
                if name in _ITEMS:
                    dangling += _close(stack, _ITEMS[name], _ITEM_STOP)
                if name not in _VOID:
                    stack.append(name)
                if len(stack) + dangling > max_depth:
                    return lt
        elif fragment.startswith(("<!", "<?", "</"), lt):
            end = fragment.find(">", lt + 2) + 1 or length
        if end > max_chars:
            return lt
        pos = end
    return length


def _overflow(rest: str) -> str:
    """The text past the cut: a French note, then the text escaped (never parsed)."""
    shown, more = rest[:MAX_SHOWN_CHARS], len(rest) - MAX_SHOWN_CHARS
    note = f"<p><strong>{html.escape(OVERFLOW_NOTE)}</strong></p>"
    tail = f"\n… ({more} caractères de plus, non affichés\u00a0; le notebook rendu les contient)"
    return f"{note}<pre>{html.escape(shown)}{html.escape(tail) if more > 0 else ''}</pre>"


def _sanitize(fragment: str, rest: str = "") -> str:
    """`fragment` reduced to the allow-list; past the bounds, the rest and `rest` as plain text."""
    cut = bounded_cut(fragment)
    overflow = fragment[cut:] + rest
    return _CLEANER.clean(fragment[:cut]) + (_overflow(overflow) if overflow else "")


def clean_html(element: Any) -> Markup:
    """nbconvert's ``clean_html`` filter with the course's stricter allow-list."""
    text = element.decode() if isinstance(element, bytes) else str(element)
    return Markup(_sanitize(text))  # noqa: S704 - sanitised just above


class _Renderer(IPythonRenderer):
    """nbconvert's renderer; a missing attachment is an empty image, not ``InvalidNotebook``."""

    def _embed_image_or_attachment(self, src: str) -> str:
        name = src.removeprefix("attachment:")
        if src.startswith("attachment:") and name not in self.attachments:
            return ""
        return super()._embed_image_or_attachment(src)


@pass_context
def markdown2html(context: Any, source: str) -> Markup:
    """Markdown to sanitised HTML, with the cell's attachments as ``data:`` images."""
    attachments = (context.get("cell", {}) or {}).get("attachments", {})
    renderer = _Renderer(escape=False, exclude_anchor_links=True, attachments=attachments)
    text, cut = str(source), MAX_SOURCE_CHARS  # a shorter text is all before the cut
    if len(text) > cut and (line := text.rfind("\n", 0, cut)) > 0:
        cut = line + 1
    rendered = MarkdownWithMath(renderer=renderer).render(text[:cut])
    return Markup(_sanitize(rendered, rest=text[cut:]))  # noqa: S704 - sanitised


# nbconvert's patterns, no span running over a bracket (its ``.*?`` took 8.6 s on 40,000 ``[``)
_FILES_URL = re.compile(r"(src|href)\=(['\"]?)/?files/")
_MARKDOWN_FILES_URL = re.compile(
    r"(!?)\[(?P<caption>[^\[\]\n]*)\]\(/?files/(?P<location>[^()\[\]\n]*)\)"
)


def strip_files_prefix(text: str) -> str:
    """nbconvert's ``strip_files_prefix`` (``files/…`` links made relative), in linear time."""
    return _MARKDOWN_FILES_URL.sub(r"\1[\2](\3)", _FILES_URL.sub(r"\1=\2", text))


class EscapeStudentNames(Preprocessor):
    """Escape the id and names formgrader writes raw (``formgrade_macros.html.j2``); an id comes
    from a zip folder's name."""

    def preprocess(self, nb, resources):
        for key in ("student", "first_name", "last_name", "notebook_path"):
            if isinstance(resources.get(key), str):
                resources[key] = html.escape(resources[key], quote=True)
        return nb, resources


class DropOutputFilenames(Preprocessor):
    """An output's ``metadata.filenames`` becomes an ``<img src>`` as written (any URL); only
    ExtractOutputPreprocessor, never run here, sets it."""

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            metadata = output.get("metadata")
            if isinstance(metadata, dict):
                metadata.pop("filenames", None)
        return cell, resources
