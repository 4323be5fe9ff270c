"""How the erasure searches a file that is not text: what it expands to (zip, gzip, bzip2, xz,
UTF-16, a .pyc's strings); never « no mention » for what it cannot expand whole (`Unsearched`)."""

from __future__ import annotations

import bz2
import importlib.util
import io
import lzma
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import suppress
from typing import Protocol

from ..french.system_reason import french_reason

__all__ = [
    "BINARY_MAGIC",
    "DAMAGED",
    "EXPANDED_MAX",
    "MEMBER_MAX",
    "SQLITE_MAGIC",
    "ZIP_MAGIC",
    "UNOPENABLE",
    "Unsearched",
    "binary_hits",
    "binary_kind",
    "expand",
    "is_binary",
    "is_zip",
    "zip_plain",
    "zip_members",
]


class _Counts(Protocol):  # learner_places.Mentions, as far as bytes go
    def binary_count(self, data: bytes) -> int: ...


SQLITE_MAGIC, ZIP_MAGIC = b"SQLite format 3\x00", (b"PK\x03\x04", b"PK\x05\x06")
# a compressed stream (gzip, bzip2, xz) by its first bytes, and its decompressor
_STREAMS = {
    b"\x1f\x8b": lambda: zlib.decompressobj(31),
    b"BZh": bz2.BZ2Decompressor,
    b"\xfd7zXZ\x00": lzma.LZMADecompressor,
    b"\x5d\x00\x00": lambda: lzma.LZMADecompressor(lzma.FORMAT_ALONE),  # .lzma, tar --lzma
}
# formats this command cannot expand, so never « no mention »: zstd, lz4, 7-Zip, RAR, lzip, .Z
_UNKNOWN_PACKED = (
    *(b"\x28\xb5\x2f\xfd", b"\x04\x22\x4d\x18", b"\x02\x21\x4c\x18", b"7z\xbc\xaf\x27\x1c"),
    *(b"Rar!\x1a\x07", b"LZIP", b"\x1f\x9d"),
)
_UTF16 = (b"\xff\xfe", b"\xfe\xff")  # text saved as « Unicode » (a spreadsheet, Notepad)
# what a file that is not text starts with: a rewrite byte by byte would corrupt it
BINARY_MAGIC = (SQLITE_MAGIC, *ZIP_MAGIC, *_STREAMS, *_UNKNOWN_PACKED, *_UTF16, b"%PDF")
EXPANDED_MAX = 256 * 2**20  # what a compressed file is searched through, at most
MEMBER_MAX = 50 * 2**20  # an archive member of the class folder read whole, at most
DAMAGED = (
    *(zipfile.BadZipFile, tarfile.TarError, OSError, RuntimeError, EOFError),
    *(zlib.error, lzma.LZMAError),
)
# what opening a zip raises: a damaged file, or a member's name flagged UTF-8 that is not
UNOPENABLE = (zipfile.BadZipFile, OSError, UnicodeDecodeError)


def unopenable_reason(exc: BaseException) -> str:
    """Why a received zip could not be opened (one of `UNOPENABLE`), in French."""
    if isinstance(exc, UnicodeDecodeError):
        return "nom de fichier pas en UTF-8"
    return french_reason(exc)


def is_binary(data: bytes) -> bool:
    return data.startswith(BINARY_MAGIC) or b"\x00" in data


def zip_members(data: bytes, most: int, skip: set[str] = frozenset()) -> Iterator:
    """(name, bytes) of zip `data`'s files but `skip`, up to `most` bytes; raises `DAMAGED`."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            if not info.is_dir() and info.filename not in skip and info.file_size <= most:
                yield info.filename, zf.read(info)


class Unsearched(Exception):
    """A file that expands beyond what this command reads: never « no mention »."""


def _gzip_header(data: bytes) -> bytes:
    """What a gzip member keeps plain (RFC 1952, after 10 bytes): an extra field, its file's
    name and a comment, each ended by a zero byte; all that follows if one never ends."""
    flags = data[3]
    end = 12 + int.from_bytes(data[10:12], "little") if flags & 4 else 10
    for flag in (8, 16):
        if flags & flag and (end := data.find(b"\0", end) + 1) == 0:
            return data[10:]
    return data[10:end]


def _tar_members(data: bytes) -> Iterator[tuple[bytes, bytes]]:
    """Each member of tar `data`: what its header says in words (its name, a link's target,
    pax's records) and its bytes; raises `DAMAGED`."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            said = "\n".join([member.name, member.linkname, *member.pax_headers.values()])
            body = tar.extractfile(member) if member.isfile() else None
            yield said.encode(errors="surrogateescape"), body.read() if body else b""


def is_zip(data: bytes) -> bool:
    """A zip, from its first bytes or, when something precedes it (a preface, a self-extracting
    program), from its end record, as unzip finds it; a SQLite file is never one."""
    if data.startswith(ZIP_MAGIC):
        return True
    tail = data[-(2**16 + 22) :]
    return (
        b"PK\x05\x06" in tail
        and not data.startswith(SQLITE_MAGIC)
        and zipfile.is_zipfile(io.BytesIO(data))
    )


# extra fields of known binary content (zip64 sizes, NTFS, Unix times and owners, AES, the
# alignment padding): any other kind may hold her text, and is searched
_BINARY_EXTRA = {0x0001, 0x000A, 0x000D, 0x5455, 0x5855, 0x7855, 0x7875, 0x9901, 0xD935}
_UNICODE_EXTRA = (0x7075, 0x6375)  # Info-ZIP: a version byte and a CRC, then UTF-8


def _extra_plain(extra: bytes) -> list[bytes]:
    """The parts of an extra field that may hold text (Python reads none of them)."""
    parts = []
    while len(extra) >= 4:
        kind, size = int.from_bytes(extra[:2], "little"), int.from_bytes(extra[2:4], "little")
        if kind in _UNICODE_EXTRA:
            parts.append(extra[9 : 4 + size])
        elif kind not in _BINARY_EXTRA:
            parts.append(extra[4 : 4 + size])
        extra = extra[4 + size :]
    return parts + [extra]  # a truncated field's bytes: hers for all we know


def zip_plain(zf: zipfile.ZipFile, data: bytes) -> bytes:
    """What zip `data` keeps plain beside its names: what precedes its first member and follows
    its end, its comments, the extra fields that are not binary (Info-ZIP's Unicode names and
    comments, any kind unknown), the local header's own when they differ from the central
    directory's, which Python reads (another name there: Python refuses the member)."""
    first = min((info.header_offset for info in zf.infolist()), default=zf.start_dir)
    end = data.rfind(b"PK\x05\x06")
    parts = [data[:first], data[end + 22 + len(zf.comment) :] if end >= 0 else b"", zf.comment]
    for info in zf.infolist():
        parts += [info.comment, *_extra_plain(info.extra)]
        local = data[info.header_offset : info.header_offset + 30]
        if len(local) == 30 and local.startswith(b"PK\x03\x04"):
            name_end = info.header_offset + 30 + int.from_bytes(local[26:28], "little")
            extra_end = name_end + int.from_bytes(local[28:30], "little")
            if (extra := data[name_end:extra_end]) != info.extra:
                parts += _extra_plain(extra)
    return b"\n".join(parts)


def expand(
    data: bytes, decompressor, most: int, headers: list[bytes] | None = None
) -> tuple[bytes, bool]:
    """`data` expanded, up to `most` + 1 bytes; whole: each member of a concatenated one read;
    each gzip member's plain header in `headers`."""
    out: list[bytes] = []
    while data:  # `most` below 0: an archive whose other members spent it all
        if headers is not None and data.startswith(b"\x1f\x8b") and len(data) >= 10:
            headers.append(_gzip_header(data))
        stream, room = decompressor(), max(most, 0) + 1 - sum(map(len, out))
        try:  # zlib would read a max_length of 0 as « no limit »: not asked, so not at its end
            out.append(stream.decompress(data, room) if room > 0 else b"")
        except (zlib.error, OSError, EOFError, lzma.LZMAError):
            break
        if not stream.eof:  # truncated, or beyond `most`
            break
        data = stream.unused_data.lstrip(b"\0")  # xz's stream padding, a gzip's zeros
    return b"".join(out), not data


# a .pyc is read by walking marshal's format, never marshal.loads (it trusts its input); its
# strings are searched one per line: in its bytes a type or length byte is glued to each, no word
_PYC = importlib.util.MAGIC_NUMBER
_PYC_MAX = 64 * 2**20


class _Marshal:
    """A reader of marshal's format that keeps the strings (every length checked)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos, self.strings = data, 16, []

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("truncated")
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def count(self, size: int = 4) -> int:
        return int.from_bytes(self.take(size), "little", signed=size == 4)

    def read(self, depth: int = 0) -> str:
        if depth > 200:
            raise ValueError("too deep")
        kind = chr(self.take(1)[0] & 0x7F)  # 0x80: kept for a later reference
        if kind in "stuaAzZ":
            self.strings.append(self.take(self.count(1 if kind in "zZ" else 4)))
        elif kind in "([<>)":
            for _ in range(self.count(1 if kind == ")" else 4)):
                self.read(depth + 1)
        elif kind == "{":
            while self.read(depth + 1) != "0":  # its type: « 0 » ends a dict
                self.read(depth + 1)
        elif kind == "c":  # 3.11 to 3.13: five numbers, eight objects, a number, two objects
            for size in (20, *(0,) * 8, 4, 0, 0):
                self.take(size) if size else self.read(depth + 1)
        elif kind in "irgy":  # a number, a reference
            self.take({"i": 4, "r": 4, "g": 8, "y": 16}[kind])
        elif kind == "l":
            self.take(2 * abs(self.count()))
        elif kind in "fx":  # an old float as text, a complex as two
            for _ in range(2 if kind == "x" else 1):
                self.take(self.count(1))
        elif kind not in "NFTS.0":
            raise ValueError(f"type {kind!r}")
        return kind


def _compiled_text(data: bytes) -> bytes | None:
    """A .pyc's strings, one per line; None when not one of CPython 3.11 to 3.13 (searched as
    bytes); `Unsearched` for one of this Python's it cannot read whole."""
    if data[2:4] != b"\r\n" or data[16:17] not in (b"c", b"\xe3"):
        return None
    reader = _Marshal(data)
    with suppress(ValueError):  # too big, damaged, trailing bytes
        if len(data) <= _PYC_MAX:
            reader.read()
            if reader.pos == len(data):
                return b"\n".join(reader.strings)
    if data.startswith(_PYC):
        raise Unsearched("code Python compilé illisible (abîmé, ou fait pour tromper)")
    return None


def binary_hits(
    data: bytes,
    pattern: _Counts,
    depth: int = 0,
    left: list[int] | None = None,
    pdf_text: bool = False,
) -> int:
    """Her traces in `data` and what it expands to (`left`: what remains of ``EXPANDED_MAX``). A
    PDF's text is glyphs: a teacher's is `Unsearched`, a learner's (`pdf_text`) searched as well
    as it can be, since naming it would block every erasure of the class."""
    pdf = data.startswith(b"%PDF")
    if pdf and not pdf_text:  # named before its bytes are searched: they say nothing
        raise Unsearched("PDF\u00a0: son texte ne se lit pas à coup sûr, ouvrez-le pour vérifier")
    if data.startswith(_UNKNOWN_PACKED):
        raise Unsearched("format compressé que cette commande ne lit pas (zstd, lz4, 7z, rar…)")
    left = [EXPANDED_MAX] if left is None else left
    opener = next((o for m, o in _STREAMS.items() if data.startswith(m)), None)
    # compressed bytes spell a short id by chance (« li » 7 times in 350 kB of a gzip that
    # never names her): of a zip or a compressed stream, only what it keeps plain is searched
    tar = data[257:262] == b"ustar"  # read member by member: its members may be compressed
    zipped = not tar and is_zip(data)  # a zip at the end of a tar is its member
    plain = b"" if opener or tar or zipped else data
    texts = [plain, _compiled_text(data)]  # a .pyc's constants one by one
    if data.startswith(_UTF16):  # its words as UTF-8, where a mention is searched
        texts.append(data.decode("utf-16", errors="replace").encode())
    hits = sum(pattern.binary_count(t) for t in texts if t is not None)
    if (zipped or opener) and depth > 2:
        raise Unsearched("archive dans une archive au-delà de trois niveaux")
    too_big = Unsearched(f"plus de {EXPANDED_MAX // 2**20} Mo une fois décompressé")

    def expanded(body: bytes, nested: bool = True) -> int:
        left[0] -= len(body)
        if left[0] < 0:
            raise too_big
        if not nested:  # a PDF's stream: text or a font, never an archive to open
            return pattern.binary_count(body)
        return binary_hits(body, pattern, depth + 1, left, pdf_text)

    try:
        if zipped:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                if sum(info.file_size for info in zf.infolist()) > left[0]:
                    raise too_big
                folders = [info.filename.encode() for info in zf.infolist() if info.is_dir()]
                hits += pattern.binary_count(b"\n".join([zip_plain(zf, data), *folders]))
            for name, body in zip_members(data, left[0]):
                hits += pattern.binary_count(name.encode()) + expanded(body)
        for said, body in _tar_members(data) if tar else ():  # a plain member, as it is
            compressed = body.startswith(BINARY_MAGIC)
            hits += pattern.binary_count(said)
            hits += expanded(body) if compressed else pattern.binary_count(body)
    except DAMAGED:  # its raw bytes are compressed: they say nothing of what it holds
        raise Unsearched("archive abîmée ou chiffrée") from None
    if opener is not None:
        headers: list[bytes] = []
        body, whole = expand(data, opener, left[0], headers)
        hits += expanded(body) + sum(map(pattern.binary_count, headers))
        if not whole:
            raise Unsearched("fichier compressé abîmé ou tronqué")
    for start in re.finditer(rb"stream\r?\n", data) if pdf else ():  # each alone: linear
        end = data.find(b"endstream", start.end())
        stream = memoryview(data)[start.end() : end if end >= 0 else len(data)]
        hits += expanded(expand(stream, zlib.decompressobj, left[0])[0], nested=False)
    return hits


def binary_kind(data: bytes) -> str:
    sqlite = data.startswith(SQLITE_MAGIC)
    return "base SQLite" if sqlite else "fichier binaire (archive, fichier compressé…)"
