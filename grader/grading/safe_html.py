"""Student text rendered inert in every page an instructor or a classmate opens.

nbconvert renders Markdown with raw HTML and ``javascript:`` links left as written, and nbgrader
0.9.6's templates (the feedback page, formgrader's submission view) do not sanitise Markdown
cells even with ``HTMLExporter.sanitize_html``: a ``<script>`` in the written answer ran in the
instructor's formgrader page, next to its ``_xsrf`` (enough to open a terminal through the
server's API). ``grader/nbgrader_config.py`` therefore registers these filters under nbconvert's
own names, for every ``HTMLExporter`` (``nbgrader generate_feedback``, formgrader's view, its
feedback button), whatever the template:

- ``markdown2html``: the Markdown rendered by nbconvert's renderer, then reduced to an allow-list
  (text structure, code, tables, ``http(s)``/``mailto`` links, images only as ``data:`` URIs): no
  script, event handler, frame, form, style, SVG/MathML markup or ``id`` survives;
- ``clean_html``: the same allow-list, for HTML outputs and raw cells (``sanitize_html`` sends
  them through it);

and ``EscapeStudentNames`` escapes the student's id and names formgrader writes raw in its page
(an id comes from a zip folder's name); ``DropOutputFilenames`` removes the image paths an
output's metadata may name (nbconvert puts them in ``<img src>`` as they are: any URL).
Forbidden markup is shown as text, so the instructor sees what the student wrote.
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

__all__ = ["DropOutputFilenames", "EscapeStudentNames", "clean_html", "markdown2html", "sanitize"]

TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "caption",
        "code",
        "dd",
        "del",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "samp",
        "span",
        "strong",
        "sub",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
    }
)
# Pygments' token classes (``k``, ``nf``, ``s2``), its ``highlight`` wrapper, a fence's language.
_CLASS = re.compile(r"[a-z][a-z0-9]{0,2}|highlight|hl-[\w-]{1,30}|language-[\w-]{1,30}")
_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*")
_LINK = re.compile(r"(https?://|mailto:|#)", re.IGNORECASE)
PROTOCOLS = frozenset({"http", "https", "mailto"})


def _allowed(tag: str, name: str, value: str) -> bool:
    """Attribute allow-list: no event handler, style, id, form or frame attribute."""
    if name == "class":
        return tag in ("code", "div", "pre", "span") and all(
            _CLASS.fullmatch(token) for token in value.split()
        )
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
                attrs = dict(token.get("data") or {})
                attrs[(None, "rel")] = "noopener noreferrer nofollow"
                token["data"] = attrs
            yield token


_CLEANER = bleach.Cleaner(
    tags=TAGS,
    attributes=_allowed,
    protocols=PROTOCOLS | {"data"},  # data: passes _allowed for images only
    strip=False,
    strip_comments=True,
    filters=[_SafeLinks],
)


def sanitize(fragment: str) -> str:
    """`fragment` reduced to the allow-list; anything else is kept as visible text."""
    return _CLEANER.clean(str(fragment))


def clean_html(element: Any) -> Markup:
    """nbconvert's ``clean_html`` filter with the course's stricter allow-list."""
    text = element.decode() if isinstance(element, bytes) else str(element)
    return Markup(sanitize(text))  # noqa: S704 - sanitised just above


class _Renderer(IPythonRenderer):
    """nbconvert's renderer, but a missing attachment is an empty image, not a crash of the
    whole page (nbconvert raises ``InvalidNotebook``: the student's page would not render)."""

    def _embed_image_or_attachment(self, src: str) -> str:
        name = src.removeprefix("attachment:")
        if src.startswith("attachment:") and name not in self.attachments:
            return ""
        return super()._embed_image_or_attachment(src)


@pass_context
def markdown2html(context: Any, source: str) -> Markup:
    """Markdown to sanitised HTML, with the cell's attachments as ``data:`` images."""
    cell = context.get("cell", {}) or {}
    attachments = cell.get("attachments", {})
    renderer = _Renderer(escape=False, exclude_anchor_links=True, attachments=attachments)
    return Markup(sanitize(MarkdownWithMath(renderer=renderer).render(str(source))))  # noqa: S704


class EscapeStudentNames(Preprocessor):
    """formgrader's submission view writes the student's id and names into its page unescaped
    (``formgrade_macros.html.j2``); escape them in the resources it renders from."""

    def preprocess(self, nb, resources):
        for key in ("student", "first_name", "last_name", "notebook_path"):
            if isinstance(resources.get(key), str):
                resources[key] = html.escape(resources[key], quote=True)
        return nb, resources


class DropOutputFilenames(Preprocessor):
    """An output's ``metadata.filenames`` becomes an ``<img src>`` as written (a URL fetched by
    the instructor's browser); only nbconvert's ExtractOutputPreprocessor sets it, which these
    pages never run, so any found in a notebook is dropped."""

    def preprocess_cell(self, cell, resources, index):
        for output in cell.get("outputs", []):
            metadata = output.get("metadata")
            if isinstance(metadata, dict):
                metadata.pop("filenames", None)
        return cell, resources
