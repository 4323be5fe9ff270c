"""Student text rendered by the course's filters (grading/safe_html.py) keeps only inert markup:
the hostile written answer of grader/submissions/reponse_ecrite_piegee.md, hostile HTML outputs
and names; a French answer still reads as written. The same pages in Chromium:
tests/grading/test_student_text_inert.py."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from grading.safe_html import (
    TAGS,
    DropOutputFilenames,
    EscapeStudentNames,
    clean_html,
    markdown2html,
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
