"""What a file holds once expanded (grader/grading/privacy/packed.py): the erasure finds the
learner in every member of a concatenated gzip, in a zip in a gzip, in UTF-16 text; it names,
never passes over, what it cannot expand whole (a PDF among them: glyph runs, not words)."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zipfile
import zlib
from pathlib import Path

import pytest
from grading.privacy import packed
from grading.privacy.packed import Unsearched, binary_hits, expand

HER = b"ana,Ana Martin,ana.martin@exemple.fr\n"


class _Words:
    """The learner's e-mail as a whole word, counted as learner_places.Mentions counts it."""

    def binary_count(self, data: bytes) -> int:
        return len(re.findall(rb"ana\.martin@exemple\.fr", data))


def _zip(**members: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in members.items():
            zf.writestr(name, body)
    return buf.getvalue()


def _pdf(stream: bytes) -> bytes:
    head = b"%%PDF-1.4\n1 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream)
    return head + stream + b"\nendstream\nendobj\n%%EOF\n"


class _Short:
    """A learner « li » as a word, as learner_places.Mentions counts a short id."""

    def binary_count(self, data: bytes) -> int:
        return len(re.findall(rb"(?<![A-Za-z0-9])li(?![A-Za-z0-9])", data, re.I))


def test_compressed_bytes_that_spell_a_short_id_are_no_trace_but_what_is_kept_plain_is():
    """CI, stop 55 (git's index) led here: compressed bytes are random, and a short id spells
    itself there by chance (« li » 7 times in a 350 kB gzip of text that never names her),
    which named the class's every archive and refused her erasure. Only what a zip or a gzip
    keeps uncompressed is searched as it is: each gzip member's file name, a zip's comments
    and Info-ZIP's Unicode names."""
    import random

    rnd = random.Random(0)
    text = "".join(rnd.choice("abcdefghjkmn 0123\n") for _ in range(200_000)).encode()
    packed_text = next(  # a stream whose bytes spell « li », of a text that never does
        data
        for level in range(1, 10)
        if _Short().binary_count(data := gzip.compress(text, compresslevel=level, mtime=0))
    )
    assert _Short().binary_count(text) == 0
    assert binary_hits(packed_text, _Short()) == 0
    zipped = _zip(**{"notes.txt": text})
    assert _Short().binary_count(zipped) and binary_hits(zipped, _Short()) == 0
    named = io.BytesIO()  # control: what gzip -N keeps, the file's name, is hers
    with gzip.GzipFile("li.csv", "wb", fileobj=named, mtime=0) as stream:
        stream.write(text)
    assert binary_hits(named.getvalue(), _Short()) == 1
    assert binary_hits(packed_text + named.getvalue(), _Short()) == 1  # a second member's
    buf = io.BytesIO()  # control: a zip's comment names her
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("notes.txt", text)
        zf.comment = b"rendu de li"
    assert binary_hits(buf.getvalue(), _Short()) == 1
    buf = io.BytesIO()  # control: Info-ZIP's Unicode name of a member, which Python ignores
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("notes.txt")
        name = b"li.txt"
        info.extra = b"\x75\x70" + (5 + len(name)).to_bytes(2, "little") + b"\x01" + bytes(4) + name
        zf.writestr(info, text)
    assert binary_hits(buf.getvalue(), _Short()) == 1


def _zip_extra(extra: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("notes.txt")
        info.extra = extra
        zf.writestr(info, b"rien")
    return buf.getvalue()


def test_what_a_zip_says_only_in_a_field_python_does_not_read_is_searched():
    """Stop 56's left item: of a zip member's extra fields only Info-ZIP's Unicode name was
    read; any other kind may hold her text (only the binary kinds are passed over), and a
    member's local header may hold other fields than the central directory Python reads (or
    another name: Python refuses it, the archive is named as unread)."""
    field = b"\x41\x41" + (20).to_bytes(2, "little") + b"rendu de ana.martin@exemple.fr"[:20]
    her = b"\x41\x41" + (22).to_bytes(2, "little") + b"ana.martin@exemple.fr."
    assert binary_hits(_zip_extra(her), _Words()) == 1
    assert binary_hits(_zip_extra(field), _Words()) == 0  # control: her address cut
    times = b"\x55\x54" + (22).to_bytes(2, "little") + b"ana.martin@exemple.fr."
    assert binary_hits(_zip_extra(times), _Words()) == 0  # a time field: binary, not read
    plain = _zip(**{"notes_anamartin.txt": b"rien"})
    assert binary_hits(plain, _Words()) == 0
    local = plain.replace(b"notes_anamartin.txt", b"ana.martin@exemple.fr"[:19], 1)
    assert zipfile.ZipFile(io.BytesIO(local)).namelist() == ["notes_anamartin.txt"]
    with pytest.raises(Unsearched, match="abîmée"):  # named, never passed over
        binary_hits(local, _Words())
    spare = _zip_extra(b"\x41\x41" + (22).to_bytes(2, "little") + b"x" * 22)
    hidden = spare.replace(b"x" * 22, b"ana.martin@exemple.fr.", 1)  # the local header's only
    assert zipfile.ZipFile(io.BytesIO(hidden)).infolist()[0].extra.endswith(b"x" * 22)
    assert binary_hits(hidden, _Words()) == 1


def _tar(**members: bytes) -> bytes:
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, body in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    return buf.getvalue()


@pytest.mark.parametrize(
    "data",
    [
        gzip.compress(b"id\n") + gzip.compress(HER * 20),  # her lines in the second member
        bz2.compress(HER * 20),
        lzma.compress(HER * 20),  # (a few bytes would be stored as they are)
        gzip.compress(_zip(**{"classe.csv": HER * 20})),
        _zip(**{"export.csv.gz": gzip.compress(HER * 20)}),
        lzma.compress(HER * 20, format=lzma.FORMAT_ALONE),
        (HER * 20).decode().encode("utf-16"),  # « Texte Unicode » of a spreadsheet
        # attack, stop 56: a tar's members were searched as its bytes, never expanded
        _tar(**{"rendus.zip": _zip(**{"classe.csv": HER * 20})}),
        gzip.compress(_tar(**{"rendus.zip": _zip(**{"classe.csv": HER * 20})})),
        _tar(**{"journal.gz": gzip.compress(HER * 20)}),
    ],
    ids=[
        *("gzip-concatenated", "bzip2", "xz", "zip-in-gzip", "gzip-in-zip", "lzma", "utf-16"),
        *("zip-in-tar", "zip-in-tar-gz", "gzip-in-tar"),
    ],
)
def test_she_is_found_in_what_a_file_expands_to(data):
    assert _Words().binary_count(data) == 0  # the control: not in the raw bytes
    assert binary_hits(data, _Words()) == 20


@pytest.mark.parametrize(
    "data, reason",
    [
        (gzip.compress(HER)[:-8], "tronqué"),
        (b"\x28\xb5\x2f\xfd" + bytes(40), "ne lit pas"),
        (b"PK\x03\x04" + bytes(40), "abîmée"),
        (gzip.compress(gzip.compress(gzip.compress(gzip.compress(HER)))), "trois niveaux"),
        (_pdf(zlib.compress(b"BT [(A) -30 (na Martin)] TJ ET")), "PDF"),
    ],
    ids=["truncated-gzip", "zstd", "damaged-zip", "four-levels", "pdf"],
)
def test_what_it_cannot_expand_whole_is_named(data, reason):
    with pytest.raises(Unsearched, match=reason):
        binary_hits(data, _Words())


def test_the_cap_holds_for_a_whole_archive_not_each_member(monkeypatch):
    monkeypatch.setattr(packed, "EXPANDED_MAX", 2**20)
    member = gzip.compress(bytes(9 * 2**20 // 10))
    assert binary_hits(_zip(a=member), _Words()) == 0  # the control: one member, under it
    with pytest.raises(Unsearched, match="plus de 1 Mo"):
        binary_hits(_zip(a=member, b=member), _Words())


def test_expand_says_whether_the_stream_ended_whole():
    whole = gzip.compress(HER)
    assert expand(whole, lambda: zlib.decompressobj(31), 2**20) == (HER, True)
    body, ended = expand(whole[:-8], lambda: zlib.decompressobj(31), 2**20)
    assert body == HER and not ended  # what zcat shows, and not whole
    # attack, stop 56: zeros after a stream, which gzip -t and xz -t accept (xz's stream
    # padding), were « abîmé ou tronqué » and blocked every learner's erasure
    assert expand(whole + bytes(8), lambda: zlib.decompressobj(31), 2**20) == (HER, True)
    assert expand(lzma.compress(HER) + bytes(4), lzma.LZMADecompressor, 2**20) == (HER, True)


_MODULE = '''"""Groupe B de ana.martin@exemple.fr."""
COMPTES = (b"ana.martin@exemple.fr", "Zoé")


def relance():
    """Écrire à ana.martin@exemple.fr."""
    return f"{COMPTES[1]} et ana.martin@exemple.fr"
'''


def test_a_compiled_module_is_searched_constant_by_constant(tmp_path):
    """A .pyc of this Python: its docstrings, strings and bytes constants, a nested function's
    included, each searched alone (in its bytes marshal puts a type or a length beside each)."""
    import py_compile

    (tmp_path / "groupe.py").write_text(_MODULE, encoding="utf-8")
    data = Path(py_compile.compile(str(tmp_path / "groupe.py"), doraise=True)).read_bytes()
    assert binary_hits(data, _Words()) >= 4 + _Words().binary_count(data)
    damaged = data[:17] + bytes(range(256)) * 4  # a code object that breaks off
    with pytest.raises(Unsearched, match="code Python compilé illisible"):
        binary_hits(damaged, _Words())


def test_a_tar_is_read_member_by_member_its_names_and_plain_members_as_they_are():
    """What the raw search of a tar found is still found once it is read member by member: a
    plain member's text, a member's name; a damaged tar is named, never passed over."""
    assert binary_hits(_tar(**{"classe.csv": HER * 20}), _Words()) == 20
    assert binary_hits(_tar(**{"ana.martin@exemple.fr.txt": b"rien\n"}), _Words()) == 1
    with pytest.raises(Unsearched, match="abîmée"):
        binary_hits(_tar(**{"classe.csv": HER * 20})[:700], _Words())


def test_what_precedes_or_follows_a_zip_is_read_as_unzip_reads_it():
    """Attack, stop 56: a zip after a preface (``cat preface.txt rendus.zip``) was no zip,
    its compressed members never expanded; a line appended after a zip's end was never read
    (its raw bytes are no longer searched). unzip reads both; so does the erasure."""
    prefaced = b"Rendus du groupe B\n" + _zip(**{"classe.csv": HER * 20})
    assert _Words().binary_count(prefaced) == 0 and binary_hits(prefaced, _Words()) == 20
    assert binary_hits(_zip(**{"notes.txt": b"rien\n"}) + HER, _Words()) == 1
