"""Archives, compressed files and PDFs as the erasure meets them (learner_places
``_scan_class_zip``, ``_name_binary``; privacy/packed.py): searched member by member and
expanded up to a cap, named « à vérifier à la main » beyond it or when damaged; a PDF's text
read, a UTF-16 list read, and nothing expanded beyond the memory a small hub has."""

from __future__ import annotations

import os
import shutil
import zlib

import pytest
from erase_scenes import _assert_proved, _copy_class, _dry_run_in_two_gigabytes, _erase, _setup

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.slow
def test_an_archive_member_over_fifty_megabytes_naming_the_learner_is_searched(petite_classe):
    """Review3: the class scan reads a zip member by member and skips every member over
    50 MiB (``_zip_members(data, 50 * 2**20, …)``) without a word; the archive then counts as
    read, so its bytes are not searched either. A teacher's export of the class kept in
    grader/hub/ (a 60 MiB CSV zipped, ana on its last line) gets « Preuve faite » while it
    names her. Control: the same archive with a small member is named."""
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    grader = c["grader"]
    archive = grader / "hub" / "export-classe.zip"
    last = "ana,Ana Martin,ana.martin@exemple.fr\n"
    padding = "zoe,Zoé Blanc,zoe.blanc@exemple.fr\n"
    for rows in (10, 60 * 2**20 // len(padding)):
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("classe.csv", "id,nom,courriel\n" + padding * rows + last)
        with pytest.raises(ErasureError, match="export-classe.zip"):
            _erase(c, "ana")
    assert (grader / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_compressed_file_the_scan_cannot_expand_whole_is_named(petite_classe, monkeypatch):
    """Left at stop 43: a compressed file outside the data folders was searched through its
    first 256 MiB expanded and three levels deep, then counted as read. A gzip of the class's
    export whose learner comes after 256 MiB (a column of zeros, a few hundred kilobytes on
    disk), or a class list gzipped four times, got « Preuve faite ». Each is named now (the cap
    lowered to 1 MiB here: searching 256 MiB takes minutes). Control: the same files with her
    near the start, or gzipped once, are named as holding her."""
    import gzip

    from grading.erase_learner import ErasureError
    from grading.privacy import packed

    monkeypatch.setattr(packed, "EXPANDED_MAX", 2**20)
    c = petite_classe
    kept = c["grader"] / "hub" / "export.csv.gz"
    her = b"ana,Ana Martin,ana.martin@exemple.fr\n"
    for body in (her, b"\0" * (2**20 + 1) + her):
        kept.write_bytes(gzip.compress(body, compresslevel=1))
        with pytest.raises(ErasureError, match="export.csv.gz"):
            _erase(c, "ana")
    for times in (1, 4):
        body = her
        for _ in range(times):
            body = gzip.compress(body)
        kept.write_bytes(body)
        with pytest.raises(ErasureError, match="export.csv.gz"):
            _erase(c, "ana")
    assert (c["grader"] / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_a_pdf_naming_the_learner_in_its_compressed_text_is_named(petite_classe):
    """Review4: a PDF is searched as raw bytes; its text sits in deflate streams (FlateDecode,
    what every office suite and browser writes), which the scan never expands (only gzip,
    bzip2, xz and zip are). The class's grade sheet printed to PDF beside the hub's recipes
    (grader/hub/releve.pdf, « Ana Martin 12/20 ») gets « Preuve faite ». Control: the same
    PDF with its stream left uncompressed is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    text = b"BT /F1 12 Tf 72 712 Td (Ana Martin ana.martin@exemple.fr 12/20) Tj ET"
    pdf = c["grader"] / "hub" / "releve.pdf"
    for body, extra in ((text, b""), (zlib.compress(text), b" /Filter /FlateDecode")):
        pdf.write_bytes(
            b"%%PDF-1.4\n1 0 obj\n<< /Length %d%s >>\nstream\n" % (len(body), extra)
            + body
            + b"\nendstream\nendobj\ntrailer\n<< >>\n%EOF\n"
        )
        with pytest.raises(ErasureError, match="releve.pdf"):
            _erase(c, "ana")


@pytest.mark.slow
def test_an_archive_of_many_compressed_members_expanding_beyond_the_cap_is_named(
    petite_classe, monkeypatch
):
    """Review4: the 256 MiB cap is per stream, never per file: a zip of many members, each a
    gzip under the cap, is expanded and searched whole (measured: about 70 ms per MiB, so
    100 members of 250 MiB zeros, a 25 MB zip, take half an hour, twice per erasure; nested
    zips multiply it), then counted as read. A file that expands beyond the cap in total
    should be named « à vérifier à la main », as one stream over it is (the control). The cap
    is lowered to 1 MiB here, as in test_a_compressed_file_the_scan_cannot_expand_whole_is_named:
    40 members of 0.9 MiB, 36 times the cap."""
    import gzip
    import zipfile

    from grading.erase_learner import ErasureError
    from grading.privacy import packed

    monkeypatch.setattr(packed, "EXPANDED_MAX", 2**20)
    c = petite_classe
    kept = c["grader"] / "hub" / "exports.zip"
    member = gzip.compress(b"\0" * (9 * 2**20 // 10), compresslevel=1)
    with zipfile.ZipFile(kept, "w") as zf:  # control: one stream over the cap, named
        zf.writestr("tout.csv.gz", gzip.compress(b"\0" * (2**20 + 1), compresslevel=1))
    with pytest.raises(ErasureError, match="exports.zip"):
        _erase(c, "ana")
    with zipfile.ZipFile(kept, "w") as zf:
        for k in range(40):
            zf.writestr(f"export-{k:02}.csv.gz", member)
    with pytest.raises(ErasureError, match="exports.zip"):
        _erase(c, "ana")


# a class list naming ana (line 7 of 14), compressed by ``zstd -19`` (141 bytes)
_ZSTD_LIST = (
    "KLUv/WRXAP0DAEIGFRiAqw4AzB/q9BZT0zMkQ7tLtqbWdAwgFQL/v2fd7/m955xrrTHG1lotBe3YTFgEsAmFDZVS"
    "KSWE0P9lYCYCK4zkh4dd1pWLobsMKBzndJZD5dKKxCOoEVDX0vrWM7CTHAOwWp6FB0EgWE8UGoONVUEgKTYpR3S+"
    "5rj1uwrCvn+t"
)


@pytest.mark.slow
def test_a_class_list_compressed_by_zstd_is_named(petite_classe):
    """Review4: the scan expands gzip, bzip2, xz and zip; any other compressed file is searched
    as its raw bytes and counted as read. ``tar --zstd`` (zstd, the default of several Linux
    distributions' archives) keeps the teacher's old class list beside the hub's recipes
    (grader/hub/classe-2024.csv.zst, naming ana): « Preuve faite ». It should be expanded, or
    named « à vérifier à la main ». Control: the same list uncompressed is named."""
    import base64
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    data = base64.b64decode(_ZSTD_LIST)
    if shutil.which("zstd"):  # what it holds, when zstd is there to say it
        text = subprocess.run(["zstd", "-dc"], input=data, capture_output=True, check=True)
        assert b"ana,Ana Martin,ana.martin@exemple.fr" in text.stdout
    plain = c["grader"] / "hub" / "classe-2024.csv"
    plain.write_text("id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\n", encoding="utf-8")
    with pytest.raises(ErasureError, match="classe-2024.csv"):  # control: named
        _erase(c, "ana")
    plain.unlink()
    (c["grader"] / "hub" / "classe-2024.csv.zst").write_bytes(data)
    with pytest.raises(ErasureError, match="classe-2024.csv.zst"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_truncated_compressed_class_list_is_named(petite_classe):
    """Review4: a compressed file the scan cannot expand to its end (« a damaged archive or
    stream: its raw bytes were searched ») is counted as read, though its raw bytes are the
    compressed ones. A gzipped class list copied while it was written, or a download cut
    short (grader/hub/classe.csv.gz without its last 8 bytes, gzip's checksum: ``zcat`` still
    prints every line, ana's included), gets « Preuve faite »; a damaged backup is named « à
    supprimer à la main » by the same module. Control: the whole file is named."""
    import gzip
    import subprocess

    from grading.erase_learner import ErasureError

    c = petite_classe
    text = b"id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\nben,Ben Durand,\n"
    kept = c["grader"] / "hub" / "classe.csv.gz"
    whole = gzip.compress(text)
    kept.write_bytes(whole)
    with pytest.raises(ErasureError, match="classe.csv.gz"):  # control: named
        _erase(c, "ana")
    kept.write_bytes(whole[:-8])
    shown = subprocess.run(["gzip", "-dc", str(kept)], capture_output=True).stdout
    assert b"ana.martin@exemple.fr" in shown  # what zcat shows of it
    with pytest.raises(ErasureError, match="classe.csv.gz"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_compressed_by_lzma_is_named(petite_classe):
    """Review5: since review4, a compressed file is named when it cannot be expanded, but the
    formats are known by a list of first bytes (gzip, bzip2, xz, zstd, lz4, 7z, RAR); any other
    is still searched as raw bytes and counted as read. The class list kept as
    ``tar --lzma`` or ``lzma`` (xz-utils' .lzma format, which review4 named; the same holds for
    lzip, ``compress``'s .Z and lz4's legacy frames) gets « Preuve faite ». Control: the same
    list by ``xz`` is named."""
    import lzma

    from grading.erase_learner import ErasureError

    c = petite_classe
    hub = c["grader"] / "hub"
    text = b"id,nom,courriel\nana,Ana Martin,ana.martin@exemple.fr\nben,Ben Durand,\n"
    said: dict[str, bool] = {}
    # the bytes ``xz -c`` and ``lzma -c`` write (xz-utils' two formats)
    for form, name in ((lzma.FORMAT_XZ, "classe.csv.xz"), (lzma.FORMAT_ALONE, "classe.csv.lzma")):
        kept = hub / name
        kept.write_bytes(lzma.compress(text, format=form))
        try:
            _erase(c, "ana")
        except ErasureError as exc:
            said[name] = name in str(exc)
        else:
            said[name] = False  # « Preuve faite »
        kept.unlink()
    assert said == dict.fromkeys(said, True), said


@pytest.mark.slow
def test_a_gzip_whose_first_member_fills_the_cap_is_never_expanded_beyond_it(petite_classe):
    """Review5: ``_expand`` reads a concatenated gzip member by member, each asked for what is
    left of the cap plus one byte. When the first member expands to exactly the cap plus one
    byte (256 MiB + 1), the next is asked for 0 bytes, which zlib reads as « no limit »: the
    second member (here 2.5 GiB of zeros, 12 MB on disk) is expanded whole into memory. Ben
    hands in ``mesures.csv.gz`` (13 MB, far under nbgrader's 100 MB per file):
    ``make oublier-eleve`` of anyone stops on a MemoryError traceback (limited here to 2 GiB of
    address space; without a limit, a small hub's container is killed). Control: the first
    member alone, under the same limit, is named « plus de 256 Mo une fois décompressé »."""

    c = petite_classe
    grader = c["grader"]

    def dry_run() -> str:
        return _dry_run_in_two_gigabytes(c, "ana")

    def member(size: int) -> bytes:
        packer, zeros, out = zlib.compressobj(1, zlib.DEFLATED, 31), b"\0" * 2**24, []
        out += [packer.compress(zeros) for _ in range(size // 2**24)]
        return b"".join([*out, packer.compress(b"\0" * (size % 2**24)), packer.flush()])

    kept = grader / "submitted" / "ben" / "oublier" / "mesures.csv.gz"
    first = member(256 * 2**20 + 1)
    kept.write_bytes(first)
    said = dry_run()  # control: the first member alone is named, no traceback
    assert "Traceback" not in said and "mesures.csv.gz" in said, said[-1500:]
    kept.write_bytes(first + member(5 * 2**29))
    said = dry_run()
    assert "Traceback" not in said and "MemoryError" not in said, said[-1500:]
    assert "mesures.csv.gz" in said, said[-1500:]


@pytest.mark.slow
def test_a_pdf_of_many_pages_is_searched_in_a_time_that_grows_with_its_size(petite_classe):
    """Review5: a PDF's compressed streams are expanded one by one, each ``_expand`` handing
    zlib a view from that stream to the end of the file; zlib returns what follows the stream
    as ``unused_data``, a copy of the rest of the file, once per stream: the cost grows with
    the number of streams times the file's size. Measured on this scan (pages of a 1 KiB text
    stream and a 4 KiB image): 1,000 pages (5 MB) 0.6 s, 6,000 pages (23 MB) 22 s, so a
    printed course book or a scan of the class's papers in grader/hub takes minutes, three
    scans per erasure. Eight times the pages should take about eight times as long, not
    the square: the ratio is measured in one run (500 then 4,000 pages, eight times as many: the
    smaller PDF timed twice, the best kept; under 12 leaves room for a loaded machine)."""
    import time

    from grading.privacy.learner_places import scan

    c = petite_classe
    pdf = c["grader"] / "hub" / "manuel.pdf"

    def write(pages: int) -> None:
        parts = [b"%PDF-1.4\n"]
        for k in range(pages):
            text = zlib.compress(b"BT /F1 11 Tf 72 712 Td (page %d) Tj ET\n" % k * 40)
            image = os.urandom(4096)  # a DCTDecode photo: not deflate, never expanded
            for body, kind in ((text, b"/FlateDecode"), (image, b"/DCTDecode")):
                parts.append(
                    b"%d 0 obj\n<< /Length %d /Filter %s >>\nstream\n" % (k, len(body), kind)
                    + body
                    + b"\nendstream\nendobj\n"
                )
        pdf.write_bytes(b"".join([*parts, b"trailer\n<< >>\n%%EOF\n"]))

    def timed() -> float:
        start = time.perf_counter()
        scan("ana", _setup(c))
        return time.perf_counter() - start

    timed()  # the scan's own start, paid once
    write(500)
    small = min(timed(), timed())
    write(4000)
    big = timed()
    assert big / small < 12, f"{small:.2f} s pour 500 pages, {big:.2f} s pour 4 000"


_CHART = """
import sys
import matplotlib
matplotlib.use("pdf")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.bar(["Ana Martin", "Ben Durand", "Cyr Petit"], [12, 15, 9])
ax.set_title("TP oublier : notes sur 20")
fig.savefig(sys.argv[1], metadata={"Title": sys.argv[2]})
"""


@pytest.mark.slow
def test_a_chart_of_the_class_s_grades_saved_as_pdf_is_named(petite_classe):
    """Review5: since review4, a PDF's deflate streams are expanded and searched for her name
    as plain bytes; but the PDFs a teacher makes never write text plainly: matplotlib (the
    course's own plotting library) draws each glyph or run of glyphs apart (« (A) -30 (na) »),
    a browser's « Imprimer en PDF » writes glyph numbers (checked by hand: Chromium's print of
    the class's report page holds « <0035004400530053…> », and no « Ana »). The teacher's
    chart of the grades, one bar per learner (``plt.savefig("grader/hub/notes.pdf")``), names
    « Ana Martin » under her bar, and the erasure says « Preuve faite ». A PDF should be named
    « à vérifier à la main » unless its text is really read. Control: the same chart whose
    title (the PDF's metadata, plain text) names her is named."""
    import subprocess

    from grading.erase_learner import ErasureError
    from grading_course import BIN

    c = petite_classe
    chart = c["grader"] / "hub" / "notes.pdf"
    draw = [str(BIN / "python"), "-c", _CHART, str(chart)]
    subprocess.run([*draw, "Notes de Ana Martin"], check=True, capture_output=True)
    with pytest.raises(ErasureError, match="notes.pdf"):  # control: her name in its title
        _erase(c, "ana")
    subprocess.run([*draw, "Notes du TP"], check=True, capture_output=True)
    with pytest.raises(ErasureError, match="notes.pdf"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_class_list_saved_as_unicode_text_by_a_spreadsheet_is_named(petite_classe):
    """Review5: a file holding a NUL byte is « not text » and searched for her name's UTF-8 or
    Windows-1252 bytes only. Excel's and LibreOffice's « Texte Unicode (*.txt) », Notepad's
    « Unicode » and PowerShell's ``>`` write UTF-16 (« a\\0n\\0a\\0 »): the class list the
    teacher exported that way beside the hub's recipes (grader/hub/eleves-pronote.txt, ana's
    line in it) gets « Preuve faite ». Control: the same list saved as UTF-8 is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    text = (
        "identifiant\tprénom\tnom\tcourriel\r\n"
        "ana\tAna\tMartin\tana.martin@exemple.fr\r\n"
        "ben\tBen\tDurand\tben.durand@exemple.fr\r\n"
    )
    kept = c["grader"] / "hub" / "eleves-pronote.txt"
    kept.write_text(text, encoding="utf-8")
    with pytest.raises(ErasureError, match="eleves-pronote.txt"):  # control: named
        _erase(c, "ana")
    kept.write_bytes("\ufeff".encode("utf-16-le") + text.encode("utf-16-le"))
    with pytest.raises(ErasureError, match="eleves-pronote.txt"):
        _erase(c, "ana")


_HIS_FIGURE = """
import sys
import matplotlib
matplotlib.use("pdf")
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
ax.plot([1, 2, 3, 4], [0.2, 0.5, 0.7, 0.9])
ax.set_title(sys.argv[2])
fig.savefig(sys.argv[1], metadata={"Title": sys.argv[2]})
"""


@pytest.mark.slow
def test_a_pdf_a_classmate_handed_in_never_blocks_every_erasure(petite_classe):
    """Review6: since f62fe1b every PDF is « à vérifier à la main » whatever it holds, and a
    « by hand » item refuses the whole erasure (« Supprimez-les… puis relancez »). Ben saved
    his plot as a PDF in his TP folder (``fig.savefig("courbe.pdf")``; nbgrader collects it,
    as it would his notebook exported « as PDF »): from then on no learner of the class can be
    erased until the teacher deletes a file of Ben's submission, which the course forbids
    (instructor data is sacred). A PDF that cannot name her (its text read, or its words
    absent) never blocks her erasure; one that names her stays named (review5's chart test).
    Control: the class without his PDF erases ana; his PDF names nobody of the class."""
    import subprocess

    from grading_course import BIN

    c = petite_classe
    assert not _erase(_copy_class(c), "ana").failures  # control: « Preuve faite »
    his = c["grader"] / "submitted" / "ben" / "oublier" / "courbe.pdf"
    draw = [str(BIN / "python"), "-c", _HIS_FIGURE, str(his), "Taux de rappel"]
    subprocess.run(draw, check=True, capture_output=True)
    assert his.read_bytes().startswith(b"%PDF") and b"Ana" not in his.read_bytes()
    _assert_proved(c, "ana", "le PDF de ben")


@pytest.mark.slow
def test_a_zip_whose_comment_names_the_learner_is_named(petite_classe):
    """Stop 56: a zip is read member by member (names and contents), its comment never: the
    teacher's « rendus d'Ana Martin » as an archive's comment, or as Info-ZIP's Unicode name of
    a member, held her name after « Preuve faite ». Control: the same archive, no comment."""
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    archive = c["grader"] / "hub" / "rendus.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("rendu.txt", "rien\n")
    _assert_proved(_copy_class(c), "ana", "une archive sans commentaire")
    with zipfile.ZipFile(archive, "a") as zf:
        zf.comment = b"rendus d'Ana Martin"
    with pytest.raises(ErasureError, match="rendus.zip"):
        _erase(c, "ana")


@pytest.mark.slow
@pytest.mark.parametrize("member", ["Ana Martin.png", "Ana Martin.csv.gz", "Ana Martin/"])
def test_an_archive_member_named_after_the_learner_is_named_whatever_it_holds(
    petite_classe, member
):
    """Attack, stop 56: a zip read member by member searched the names of its text members
    only: a picture, a compressed file or a folder entry named after her (« Ana Martin.png »,
    as ``zipinfo`` lists it) left « Preuve faite ». Control: the same archive, members named
    otherwise."""
    import gzip
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    archive = c["grader"] / "hub" / "lot.zip"
    body = gzip.compress(b"rien\n") if member.endswith(".gz") else b"\x89PNG\r\n\x1a\n\0\0"

    def write(name: str) -> None:
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
            if name.endswith("/"):
                zf.mkdir(name.rstrip("/"))
            else:
                zf.writestr(name, body)

    write(member.replace("Ana Martin", "photo"))
    _assert_proved(_copy_class(c), "ana", "un membre qui ne la nomme pas")
    write(member)
    with pytest.raises(ErasureError, match="lot.zip"):
        _erase(c, "ana")
