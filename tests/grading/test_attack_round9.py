"""Round 9 of the attacks on the collect tools (``zip_collect``, the exchange's
``ownership_problem``/``depositors``, ``student_package.scan``): inputs a student (or a notebook's
JSON) controls that crash a tool with a traceback, stop the whole class's collect, or hide a
secret from the package's scan. Each test states the behaviour expected; all failed when written.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading import student_package, zip_collect
from grading.nbgrader_ext.exchange import depositors, ownership_problem
from grading.samples import build_submission
from grading_course import register

Q = "\u00a0"


# --- the exchange: a folder nested deeper than Python's recursion limit --------------------------


@pytest.fixture
def deep_tmp(tmp_path):
    """`tmp_path`, emptied with ``rm -rf`` after the test: pytest's own clean-up (``shutil.rmtree``,
    recursive on Python 3.11) would stop on ``RecursionError`` in a 1,500-folder-deep tree."""
    yield tmp_path
    subprocess.run(["rm", "-rf", "--", str(tmp_path)], check=False)


def _deep(base: Path, depth: int) -> None:
    """`depth` folders ``a/a/a/…`` under `base`, made relative to each other (no PATH_MAX)."""
    base.mkdir(parents=True)
    fd = os.open(base, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("a", dir_fd=fd)
            child = os.open("a", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def test_a_copy_nested_1500_folders_deep_is_named_not_a_traceback(deep_tmp):
    """A student's copy in the exchange holding ``a/a/a/…`` 1,500 folders deep (``mkdir -p`` in a
    loop, any user may) must be refused with a French reason by ``ownership_problem``: it raised
    ``RecursionError`` (``os.fwalk`` recurses once per level on Python 3.11), which stops
    ``OwnerCheckedCollect.init_src`` and so the collect of every student."""
    copy = deep_tmp / "inbound" / "ana+oublier+2025-03-14 17:00:00.000000 UTC+abc"
    _deep(copy, 1500)
    problem = ownership_problem(copy, "ana", check_owner=False)
    assert isinstance(problem, str) and problem, problem


def test_depositors_of_a_copy_nested_1500_folders_deep_are_listed(deep_tmp):
    """``depositors`` (the set-aside copy's owners, written beside it in the quarantine) must
    list the owner of a copy 1,500 folders deep: ``Path.rglob`` raised ``RecursionError``."""
    copy = deep_tmp / "inbound" / "eve+oublier+2025-03-14 17:00:00.000000 UTC+abc"
    _deep(copy, 1500)
    assert depositors(copy)


# --- make zip-collect: archives a student sends ---------------------------------------------------


def _notebook(course: Path, sample: str = "complete_vacuum") -> str:
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
    return nbformat.writes(build_submission(release, text))


def _archive_dir(course: Path) -> Path:
    folder = course / "downloaded" / "oublier" / "archive"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _good_archive(course: Path) -> None:
    """ben's honest archive, collected whatever happens to the others'."""
    with zipfile.ZipFile(_archive_dir(course) / "ben.zip", "w") as zf:
        zf.writestr(
            zipfile.ZipInfo("ben/oublier.ipynb", (2025, 3, 14, 17, 0, 0)), _notebook(course)
        )


def _collected(course: Path, student: str) -> bool:
    return (course / "submitted" / student / "oublier" / "oublier.ipynb").is_file()


def _central_offset(data: bytes, name: bytes) -> int:
    """The offset of `name`'s central directory record in the zip `data`."""
    pos = data.find(b"PK\x01\x02")
    while pos >= 0:
        size = struct.unpack_from("<H", data, pos + 28)[0]
        if data[pos + 46 : pos + 46 + size] == name:
            return pos
        pos = data.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(name)


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "method",
    [zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA],
    ids=["deflate", "bzip2", "lzma"],
)
def test_a_member_with_corrupt_compressed_data_is_named_and_the_rest_collected(course, method):
    """ana's archive holds ``ana/oublier.ipynb`` compressed, its compressed bytes damaged (a bad
    download, or on purpose): the member must be named « illisible » and ben collected. The read
    raised ``zlib.error``, and for LZMA ``lzma.LZMAError`` (neither caught with ``BadZipFile``):
    a traceback, nobody collected."""
    _good_archive(course)
    path = _archive_dir(course) / "ana.zip"
    with zipfile.ZipFile(path, "w", method) as zf:
        zf.writestr("ana/oublier.ipynb", _notebook(course) * 4)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("ana/oublier.ipynb")
    fn_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + fn_len + extra_len
    # deflate: its first block's BTYPE 11, invalid; bzip2 and LZMA: the stream past their headers
    at = start if method == zipfile.ZIP_DEFLATED else start + 16
    data[at : at + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    report = zip_collect.zip_collect("oublier", course)
    assert _collected(course, "ben"), report.lines("oublier")
    assert any("ana.zip" in p and "illisible" in p for p in report.problems), report.problems


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_member_in_an_unsupported_compression_is_named_and_the_rest_collected(course):
    """ana's archive says its member is compressed with Deflate64 (method 9, what Windows'
    Explorer writes for large archives; Python cannot read it): the member must be named and ben
    collected. ``zf.open`` raised ``NotImplementedError``: a traceback, nobody collected."""
    _good_archive(course)
    path = _archive_dir(course) / "ana.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("ana/oublier.ipynb", _notebook(course))
    data = bytearray(path.read_bytes())
    struct.pack_into("<H", data, _central_offset(bytes(data), b"ana/oublier.ipynb") + 10, 9)
    path.write_bytes(bytes(data))
    report = zip_collect.zip_collect("oublier", course)
    assert _collected(course, "ben"), report.lines("oublier")
    assert any("ana.zip" in p for p in report.problems), report.problems


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_an_archive_with_a_name_not_in_utf8_is_named_and_the_rest_collected(course):
    """ana's archive flags its names as UTF-8 (bit 11) but one holds the byte ``\\xff``:
    ``zipfile.ZipFile`` raises ``UnicodeDecodeError`` when it opens it. The archive must be named
    « illisible » and ben collected; the whole ``make zip-collect`` stopped on « ✘ 'utf-8' codec
    can't decode… », nobody collected, the archive not named."""
    _good_archive(course)
    path = _archive_dir(course) / "ana.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("ana/oublier-X.ipynb", _notebook(course))
        zf.writestr("ana/oublier.ipynb", _notebook(course))
    data = bytearray(path.read_bytes())
    for pos in (i for i in range(len(data)) if data[i : i + 4] == b"PK\x03\x04"):
        flags = struct.unpack_from("<H", data, pos + 6)[0]
        struct.pack_into("<H", data, pos + 6, flags | 0x800)
    central = _central_offset(bytes(data), b"ana/oublier-X.ipynb")
    struct.pack_into(
        "<H", data, central + 8, struct.unpack_from("<H", data, central + 8)[0] | 0x800
    )
    name_at = central + 46 + len("ana/oublier-")
    data[name_at] = 0xFF
    path.write_bytes(bytes(data))
    try:
        report = zip_collect.zip_collect("oublier", course)
    except ValueError as exc:
        pytest.fail(f"the whole collect stopped: {exc}")
    assert _collected(course, "ben"), report.lines("oublier")
    assert any("ana.zip" in p for p in report.problems), report.problems


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_file_name_with_a_huge_timestamp_is_collected_not_a_traceback(course):
    """With a ``timestamp`` group in ``named_regexp`` (grader/README.md documents it), a member
    named ``ana/99999999999999999999-oublier.ipynb`` must be collected (its time not proven) and
    ben too: ``parse_utc`` raised ``OverflowError``, only ``ValueError`` was suppressed."""
    config = course / "nbgrader_config.py"
    config.write_text(
        config.read_text(encoding="utf-8")
        + "\nc.FileNameCollectorPlugin.named_regexp = "
        + repr(r".*/(?P<student_id>[^/]+)/(?:(?P<timestamp>[0-9]+)-)?(?P<file_id>[^/]+\.ipynb)$")
        + "\n",
        encoding="utf-8",
    )
    _good_archive(course)
    with zipfile.ZipFile(_archive_dir(course) / "rendus-ent.zip", "w") as zf:
        info = zipfile.ZipInfo(
            "rendus/ana/99999999999999999999-oublier.ipynb", (2025, 3, 14, 17, 0, 0)
        )
        zf.writestr(info, _notebook(course))
    report = zip_collect.zip_collect("oublier", course)
    assert _collected(course, "ben"), report.lines("oublier")
    assert _collected(course, "ana"), report.lines("oublier")


# --- make paquet-eleve: the scan of a notebook's text ---------------------------------------------

SECRET = student_package.Secret(
    'conn.execute("DELETE FROM memoire WHERE user_id = ?", (uid,))', "x"
)


def _nb(**cell) -> bytes:
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(**cell))
    return nbformat.writes(nb).encode()


def test_a_solution_line_with_quotes_in_a_cell_output_is_found():
    """A lesson's notebook whose output (a traceback, a printed source) shows a solution line
    holding double quotes: the scan reads outputs as ``json.dumps`` text, where ``"`` is ``\\"``,
    so the line was missed and shipped to the students."""
    output = nbformat.v4.new_output("stream", name="stdout", text=SECRET.text + "\n")
    files = {"notebooks/lecon.ipynb": _nb(source="print(1)", outputs=[output])}
    assert student_package.scan(files, [SECRET]), "secret missed in an output"


def test_a_solution_line_in_a_cell_metadata_is_found():
    """A notebook of a notebook's shape whose cell metadata (a tag, an extension's field, a
    leftover nbgrader field) holds a solution line: the scan read only sources and outputs, the
    zip ships the file as it is, the line reached the students."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell("x = 1", metadata={"note": SECRET.text}))
    files = {"notebooks/lecon.ipynb": nbformat.writes(nb).encode()}
    assert student_package.scan(files, [SECRET]), "secret missed in a cell's metadata"


def test_a_hidden_input_with_an_accent_in_a_json_file_is_found():
    """A ``course/**.json`` file (shipped as it is) written by ``json.dump`` holds a hidden
    input with an accent, escaped ``\\u00e9`` by default: the raw text scan missed it."""
    secret = student_package.Secret("Hélène Dupré", "entrée cachée")
    files = {"course/labo/donnees.json": json.dumps({"name": secret.text}).encode()}
    assert student_package.scan(files, [secret]), "secret missed in a JSON file"


# --- make zip-collect: one student's archive rendering for a classmate ----------------------------


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    ("archive", "member", "victim"),
    [
        # eve e-mails eve.zip (« une archive d'élève ne rend que pour cet élève »,
        # grader/README.md) holding ana/ana/: only the last « ana » was taken for ana's own
        # folder, the first then made ana an owner beside eve
        ("eve.zip", "ana/ana/oublier.ipynb", "ana"),
        # the teacher files each e-mail in a folder named after its sender (README): eve/;
        # eve named her attachment ana.zip: both eve and ana owned it
        ("eve/ana.zip", "ana/oublier.ipynb", "ana"),
        # ben_2 (the LMS's id for a second Ben) sends ben_2.zip holding ben/: its words
        # (ben, 2) made ben an owner
        ("ben_2.zip", "ben/oublier.ipynb", "ben"),
    ],
    ids=["dossier-double", "dossier-de-l-expediteur", "mot-du-nom"],
)
def test_a_students_archive_renders_for_no_classmate(course, archive, member, victim):
    """A notebook of one student inside another student's archive or folder was collected as
    the first one's (a later arrival replaces their own copy): it must be set aside, named, and
    their folder left alone."""
    register(course, "ana", "ben", "ben_2", "eve")
    path = _archive_dir(course) / archive
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(member, (2025, 3, 14, 17, 0, 0))
        zf.writestr(info, _notebook(course, "ebauche"))
    report = zip_collect.zip_collect("oublier", course, "retard")
    assert not (course / "submitted" / victim).exists(), report.lines("oublier")
    assert any(path.name in p for p in report.problems), report.problems


def test_a_solution_line_with_quotes_in_a_notebook_with_one_odd_cell_is_found():
    """The fix « a notebook not of a notebook's shape is scanned as raw text » reads its JSON
    text, where a ``"`` is ``\\"``: one cell whose outputs are a text (not a list) hides, in
    every other cell's source, each solution line holding a double quote (or a backslash, or a
    tab). The scan must find the line as the student reads it."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(SECRET.text))
    data = json.loads(nbformat.writes(nb))
    data["cells"].append({"cell_type": "code", "source": "", "metadata": {}, "outputs": "x"})
    files = {"notebooks/lecon.ipynb": json.dumps(data).encode()}
    assert student_package.scan(files, [SECRET]), "secret missed beside an odd cell"


def test_a_notebook_nested_too_deep_for_json_is_scanned_as_text_not_a_traceback():
    """A notebook of ``notebooks/`` whose JSON nests 100,000 lists (a broken save, a merge tool
    gone wrong): ``json.loads`` raises ``RecursionError``, which ``_texts`` does not catch (only
    ``ValueError``), so ``make paquet-eleve`` stopped on a traceback. It must be scanned as text
    (and the marker it holds found)."""
    deep = b"[" * 100_000 + b"]" * 100_000
    data = b'{"cells": [], "x": "### BEGIN SOLUTION", "y": ' + deep + b"}"
    secret = student_package.Secret("### BEGIN SOLUTION", "marqueur")
    assert student_package.scan({"notebooks/lecon.ipynb": data}, [secret])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_control_a_student_whose_id_holds_a_classmate_s_is_collected_from_her_own_archive(course):
    """The control of the two above: ``ben_2.zip`` holding ``ben_2/oublier.ipynb`` is ben_2's
    own (her whole name designates her, not its word ``ben``), and ``ben_rendu.zip`` holding
    ``ben/oublier.ipynb`` is ben's: both collected, nothing set aside."""
    register(course, "ana", "ben", "ben_2")
    for archive, member in (
        ("ben_2.zip", "ben_2/oublier.ipynb"),
        ("ben_rendu.zip", "ben/oublier.ipynb"),
    ):
        with zipfile.ZipFile(_archive_dir(course) / archive, "w") as zf:
            zf.writestr(zipfile.ZipInfo(member, (2025, 3, 14, 17, 0, 0)), _notebook(course))
    report = zip_collect.zip_collect("oublier", course, "retard")
    assert report.problems == [], report.problems
    assert _collected(course, "ben_2") and _collected(course, "ben"), report.lines("oublier")
