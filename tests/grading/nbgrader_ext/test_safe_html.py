"""Student text rendered by the course's filters (grading/nbgrader_ext/safe_html.py) keeps only
inert markup:
the hostile written answer of grader/submissions/reponse_ecrite_piegee.md, hostile HTML outputs
and names; a French answer still reads as written; every page renders in linear time (issue 32
point 5: bounded size and nesting before sanitising). The same pages in Chromium, and the real
`make feedback` and formgrader with the pathological answer:
tests/grading/test_student_text_inert.py."""

from __future__ import annotations

import time
from html.parser import HTMLParser

import pytest
from grading.nbgrader_ext import safe_html
from grading.nbgrader_ext.safe_html import (
    MAX_DEPTH,
    OVERFLOW_NOTE,
    TAGS,
    DropOutputFilenames,
    EscapeStudentNames,
    bounded_cut,
    clean_html,
    markdown2html,
    strip_files_prefix,
)
from helpers import REPO
from jinja2 import Environment

WRITTEN = (REPO / "grader" / "submissions" / "reponse_ecrite_piegee.md").read_text("utf-8")
HOSTILE_OUTPUT = (
    "<img src=x onerror=\"window.__pwned='html'\"><script>window.__pwned='s'</script>"
    '<iframe src="http://127.0.0.1:9/f"></iframe><a href="JaVaScRiPt:alert(1)">a</a>'
    '<a href="jav&#x09;ascript:alert(1)">b</a><a href=" javascript:alert(1)">c</a>'
    '<svg><animate onbegin="alert(1)" attributeName="x"/></svg><table background="//x">'
    '<tr><td style="background:url(//127.0.0.1:9/c)">t</td></tr></table>'
    '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'
    "<!--<img src=x onerror=alert(1)>-->"
)


class _Tags(HTMLParser):
    """Every element and attribute a browser would build from the text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))


def _elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser.found


def _assert_inert(html: str) -> None:
    for tag, attrs in _elements(html):
        assert tag in TAGS, tag
        for name, value in attrs.items():
            assert not name.startswith("on") and name not in ("style", "id", "srcdoc"), (tag, name)
            if name == "href":
                assert value and value.startswith(("http://", "https://", "mailto:", "#")), value
            if name == "src":
                assert value and value.startswith("data:image/"), value


def _render(source: str, cell: dict | None = None) -> str:
    env = Environment()
    env.filters["markdown2html"] = markdown2html
    template = env.from_string("{{ source | markdown2html }}")
    return template.render(source=source, cell=cell or {})


def test_hostile_written_answer_keeps_no_live_markup():
    html = _render(WRITTEN)
    _assert_inert(html)
    tags = [tag for tag, _ in _elements(html)]
    assert "script" not in tags and "iframe" not in tags and "img" in tags
    # what was refused is shown as text, for the instructor to see
    assert "&lt;script&gt;window.__pwned" in html and "&lt;iframe" in html


def test_written_answer_still_reads_as_written():
    html = _render(WRITTEN)
    assert "<h2>Ma procédure</h2>" in html
    assert "<strong>d'abord</strong>" in html
    assert "<code>delete_session</code>" in html and "<code>user_states</code>" in html
    assert "il n'en reste « rien » de lisible" in html  # U+00A0 kept inside « »
    items = [tag for tag, _ in _elements(html.split("</ol>")[0]) if tag == "li"]
    assert len(items) == 3 and "<li>lister les sessions de l'élève\u00a0;</li>" in html
    fenced = _render("Du code\u00a0:\n\n```python\nawait oublier(service, 'alice')\n```\n")
    _assert_inert(fenced)
    assert 'class="highlight"' in fenced and "oublier" in fenced


@pytest.mark.parametrize(
    "source",
    [
        "[lien](javascript:window.__pwned=1)",
        "[lien](JAVASCRIPT:alert(1))",
        "<javascript:alert(1)>",
        "[lien](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "![x](http://127.0.0.1:9/pixel.png)",
        '<a href="https://example.org" onclick="alert(1)" target="_top">ok</a>',
        '<div class="navbar-fixed-top modal" id="statusmessage">x</div>',
        # a file of the submission, served by formgrader on the instructor's own origin
        "[voir](piege.html) ![x](piege.svg) [api](/api/terminals)",
    ],
)
def test_links_and_images_cannot_run_or_fetch(source):
    html = _render(source)
    _assert_inert(html)  # a refused link is left as text, without its href
    assert all("javascript" not in str(attrs).lower() for _, attrs in _elements(html))


def test_safe_links_are_kept_without_a_handle_on_the_page():
    html = _render("[la doc](https://adk.dev/sessions/)")
    assert '<a href="https://adk.dev/sessions/" rel="noopener noreferrer nofollow">' in html


def test_attachments_are_shown_and_a_missing_one_is_no_crash():
    png = (
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAfbLI3wAAAABJRU5"
        "ErkJggg=="
    )
    cell = {"attachments": {"schema.png": {"image/png": png}}}
    html = _render("![schéma](attachment:schema.png) ![absent](attachment:nope.png)", cell)
    _assert_inert(html)
    assert f'src="data:image/png;base64,{png}"' in html


def test_hostile_outputs_keep_no_live_markup():
    html = str(clean_html(HOSTILE_OUTPUT))
    _assert_inert(html)
    assert "<table>" in html and "<td>t</td>" in html  # the harmless part is kept


def test_formgrader_names_are_escaped():
    resources = {
        "student": '<img src=x onerror="alert(1)">',
        "first_name": "<script>alert(1)</script>",
        "last_name": "Lefèvre & fils",
        "notebook_path": 'cours/grader/autograded/"><svg onload=alert(1)>/oublier.ipynb',
        "submission_id": "abc",
    }
    _, out = EscapeStudentNames(enabled=True).preprocess(None, dict(resources))
    assert out["student"] == "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;"
    assert out["last_name"] == "Lefèvre &amp; fils"
    for key in ("student", "first_name", "notebook_path"):
        assert "<" not in out[key] and '"' not in out[key]
    assert out["submission_id"] == "abc"


def test_output_image_paths_are_dropped():
    import nbformat

    output = nbformat.v4.new_output(
        "display_data",
        data={"image/png": "iVBORw0KGgo="},
        metadata={"filenames": {"image/png": "http://127.0.0.1:9/pixel.png"}, "width": 9},
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=[output])])
    nb, _ = DropOutputFilenames(enabled=True).preprocess(nb, {})
    assert nb.cells[0].outputs[0].metadata == {"width": 9}


# Written answers that cost bleach's parser size times nesting (78 s for the first one before the
# bound, 156 s for the second), and raw HTML that tries to nest deeper than the scan counts.
PATHOLOGICAL = {
    "ul-li-160k": "<ul><li>" * 20000,
    "ul-li-480k": "<ul><li>" * 60000,
    "div": "<div>" * 40000,
    "ul-table": "<ul><table></ul>" * 20000,  # </ul> behind a table boundary closes nothing
    "b-reopened": ("<p>" + "".join(f"<b title={k}>" for k in range(30)) + "</p>x") * 500,
    "quoted-gt": '<ul title="a>b"><li>' * 20000,
    "brackets": "[" * 100000,  # nbconvert's strip_files_prefix alone took 8.6 s on 40,000
    "comment-close": ("<!-- --><ol><li><em>" + "</x>" * 3) * 20000,
    "empty-comment": "<!-->" + "<ul><li>" * 20000,  # a whole comment, not the start of one
    "short-comment": "<!--->" + "<ol><li>" * 20000,
    "bang-comment": "<!-- x --!>" + "<ul><li>" * 20000,
}
# Markdown and HTML a student writes: never cut, never noted
ORDINARY = {
    "nested-list": "\n".join("  " * i + f"- niveau {i}" for i in range(10)),
    "unclosed-li": "<ul>" + "<li>élément" * 2000 + "</ul>",
    "unclosed-p": "<p>paragraphe" * 2000,
    "table": "<table>" + "<tr><td>a</td><td><b>b</b></td></tr>" * 500 + "</table>",
    "long": "Un paragraphe **gras**, `du code` et [un lien](https://adk.dev).\n\n" * 600,
}


def _render_page(source: str) -> str:
    """The written answer as a page renders it: nbconvert's filter chain of the templates."""
    env = Environment()
    env.filters["markdown2html"] = markdown2html
    env.filters["strip_files_prefix"] = strip_files_prefix
    template = env.from_string("{{ source | markdown2html | strip_files_prefix }}")
    return template.render(source=source, cell={})


class _TrackedStack(list):
    """The parser's stack of open elements, remembering its greatest height."""

    highest = 0

    def append(self, item) -> None:
        super().append(item)
        self.highest = max(self.highest, len(self))


def _stack_height(fragment: str) -> int:
    """How many elements bleach's own parser (html5lib, as the cleaner builds it) holds open at
    once while parsing `fragment`: its cost per block tag (``elementInScope`` walks them)."""
    from bleach import html5lib_shim

    parser = html5lib_shim.BleachHTMLParser(
        tags=TAGS, strip=False, consume_entities=False, namespaceHTMLElements=False
    )
    tree, stacks = parser.tree, []
    plain_reset = tree.reset

    def reset() -> None:
        plain_reset()
        tree.openElements = _TrackedStack()
        stacks.append(tree.openElements)

    tree.reset = reset
    parser.parseFragment(fragment)
    return max(stack.highest for stack in stacks)


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_answer_renders_fast_with_the_rest_as_text(name):
    source = PATHOLOGICAL[name]
    started = time.perf_counter()
    html = _render_page(source)
    elapsed = time.perf_counter() - started
    assert elapsed < 10, f"{name}: {elapsed:.1f} s"  # measured 0.2 s at most here
    _assert_inert(html)
    if name != "brackets":  # plain text, no tag: within the bounds once cut at 50,000
        assert OVERFLOW_NOTE.replace("'", "&#x27;") in html, name


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_the_cut_never_lets_bleach_nest_deeper_than_the_bound(name):
    source = PATHOLOGICAL[name]
    cut = bounded_cut(source)
    # the parser adds at most tbody and tr around a cell; the rest of the budget is the bound
    assert _stack_height(source[:cut]) <= 3 * MAX_DEPTH, name


def test_positive_control_the_parser_holds_the_uncut_text_open():
    assert _stack_height("<ul><li>" * 200) >= 400
    assert _stack_height(PATHOLOGICAL["b-reopened"][:20000]) >= 3 * MAX_DEPTH


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_text_renders_as_before_the_bound(name):
    source = ORDINARY[name]
    assert bounded_cut(source) == len(source), name
    html = _render_page(source)
    assert "trop long" not in html
    assert html == _unbounded(source), name


def _unbounded(source: str) -> str:
    """What the page showed before the bound: the whole text rendered and sanitised."""
    from nbconvert.filters.markdown_mistune import MarkdownWithMath
    from nbconvert.filters.strings import strip_files_prefix as nbconvert_strip

    renderer = safe_html._Renderer(escape=False, exclude_anchor_links=True, attachments={})
    rendered = MarkdownWithMath(renderer=renderer).render(source)
    return nbconvert_strip(safe_html._CLEANER.clean(rendered))


def test_long_answer_is_cut_at_a_line_and_the_rest_shown_escaped():
    head = "Avant la limite.\n\n" * 4000  # 72,000 characters
    html = _render_page(head + "<script>alert(1)</script> après")
    assert "<p>Avant la limite.</p>" in html
    note = html.index("trop long")
    assert "&lt;script&gt;alert(1)&lt;/script&gt; après" in html[note:]
    _assert_inert(html)


def test_linear_strip_files_prefix_does_what_nbconvert_does():
    from nbconvert.filters.strings import strip_files_prefix as nbconvert_strip

    for text in (
        '<img src="files/a.png"> <a href=/files/b.html>b</a>',
        "![x](files/a.png) [doc](/files/d.pdf) [autre](https://x.org/files/y)",
        "texte [sans lien] et (parenthèses)",
    ):
        assert strip_files_prefix(text) == nbconvert_strip(text), text
