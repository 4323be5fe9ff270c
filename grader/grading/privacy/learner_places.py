"""Where one learner lives in the class system: the scan behind ``make oublier-eleve``, which
only reads (``grading.erase_learner`` erases); what cannot be erased at once (backups, logs,
Helm history) is listed apart with its expiry and the command that purges it."""

from __future__ import annotations

import csv
import dbm
import html
import importlib.util
import io
import itertools
import json
import marshal
import os
import re
import stat
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import urllib.error
import urllib.parse
import urllib.request
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field, replace
from datetime import timedelta
from functools import cached_property
from html.entities import codepoint2name
from pathlib import Path, PurePosixPath

from nbgrader.utils import notebook_hash

from course.dbfile import PAGE_SIDES, SIDES

from ..classroom.class_lock import ERASING
from ..classroom.class_places import (
    FAILURES_FILE,
    FAILURES_TMP,
    PER_LEARNER,
    PLACES,
    id_variant,
    id_within,
    learner_ids,
    own_folders,
    quarantined_for,
)
from ..classroom.gradebook import (
    STUDENTS,
    GradebookError,
    gradebook_rows,
    server_name,
    sqlite_path,
    sqlite_rows,
)
from ..classroom.ids import (
    RosterError,
    close_ids,
    normalize_id,
    quoted,
    read_roster,
    stored_id_problem,
)
from ..classroom.kept_columns import ID_COLUMNS
from ..classroom.paths import (
    DEMO_FOLDER,
    MAX_DEPTH,
    TOO_DEEP,
    TooDeep,
    course_dirs,
    files_under,
    is_demo,
    tree,
)
from ..classroom.schema_stamp import stamp_in_process
from ..french.french_format import french_datetime
from ..french.system_reason import GradingError, french_reason
from . import packed
from .backup_files import GRADEBOOK, RETENTION_DAYS, ROSTER, backups_in, dated_ahead
from .course_files import (
    LIST,
    course_digests,
    course_folders,
    course_history,
    course_names,
    digest,
    git_templates,
)
from .erasure_register import KEY_NAME, REGISTER_NAME, class_registers, private_temporary
from .packed import (
    DAMAGED,
    MEMBER_MAX,
    UNOPENABLE,
    ZIP_MAGIC,
    Unsearched,
    binary_hits,
    is_binary,
    unopenable_reason,
)

__all__ = [
    "Context",
    "ErasureError",
    "Found",
    "Scan",
    "Setup",
    "checked_id",
    "hub_request",
    "BY_HAND",
    "EXPORT_CARD",
    "REDACTED",
    "mention_pattern",
    "roster_students",
    "scan",
    "scan_in",
    "unknown_id",
]

HUB_TOKEN_ENV = "JUPYTERHUB_API_TOKEN"
EXPORT_CARD = "eleve.json"  # in a data export (make donnees-eleve): whose it is, their names
TITLE = re.compile("<title>" + "Rapport de notes — " + "([^<]*)</title>")  # the report's title


@dataclass
class Found:
    """One place where the learner is, and how to erase it."""

    kind: str  # French label of the place, shown to the instructor
    where: str  # a path, an archive member, a URL
    detail: str = ""
    action: str = ""  # internal: which eraser handles it
    target: object = None

    def key(self) -> tuple[str, str, str]:
        """What the control compares before and after (not a roster line's number: it moves)."""
        return (self.kind, self.where, "" if self.action == "roster" else self.detail)


@dataclass
class Pending:
    """A place that cannot be erased at once: when it expires and the command that purges it."""

    kind: str
    where: str
    expires: str
    command: str


@dataclass
class Scan:
    who: _Who  # the learner searched: the proof searches again with the same names
    found: list[Found] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    # the repositories in grader/ that hold the course's own history, not searched there
    course_copies: list[str] = field(default_factory=list)

    def kinds(self) -> set[str]:
        return {f.kind for f in self.found}

    def add(
        self, kind: str, where: object, detail: str, action: str, target: object = None
    ) -> None:
        self.found.append(Found(kind, str(where), detail, action, target))

    def pend(self, kind: str, where: object, expires: str, command: str) -> None:
        self.pending.append(Pending(kind, str(where), expires, command))


@dataclass
class Setup:
    """Where the class system keeps its data (every option of the command)."""

    grader_dir: Path | None = None
    roster: Path | None = None
    exchange: Path | None = None  # nbgrader's Exchange.root (the course folder is under it)
    hub_url: str | None = None  # e.g. http://127.0.0.1:8081/hub/api
    hub_token: str | None = None
    hub_db: Path | None = None
    homes: Path | None = None  # the folder that holds the learners' homes (/home)
    unix_prefix: str = ""  # TLJH names the Unix user jupyter-<name>
    backups: Path | None = None
    keep_days: float = RETENTION_DAYS
    helm_release: str | None = None
    firstuse_db: Path | None = None  # TLJH's FirstUseAuthenticator: /opt/tljh/state/passwords.dbm
    redact: bool = False  # mentions in another learner's work replaced too (CAVIARDER=1)


class Context:
    """The course's folders and configuration, read once."""

    def __init__(self, setup: Setup) -> None:
        stamp_in_process()
        self.setup = setup
        self._mentions: dict[tuple, Mentions] = {}
        self.dirs = course_dirs(setup.grader_dir)
        self.config = self.dirs.config
        self.gradebook = sqlite_path(self.dirs.db_url)
        self.archive_name = self.config.ZipCollectApp.get("archive_directory", "archive")
        self.regexp = self.config.FileNameCollectorPlugin.get("named_regexp", "")
        self.course_id = self.config.CourseDirectory.get("course_id", "") or ""
        self.backups = setup.backups or self.dirs.backups
        # nbgrader's default exchange, when no other is named (the hub's: COURSE_HUB_EXCHANGE)
        root = setup.exchange or self.config.Exchange.get("root", None) or "/srv/nbgrader/exchange"
        self.exchange = Path(root) / self.course_id if self.course_id else None

    @cached_property
    def course_history(self) -> tuple[frozenset[bytes], frozenset[bytes]]:
        """Read once for an erasure's three or four scans, and only when a repository is met."""
        return course_history()

    @cached_property
    def classmates(self) -> list[_Who]:
        """Every registered learner (roster, then gradebook): their own names are never hers."""
        people: dict[str, _Who] = {}
        for line in roster_students(self.setup.roster):
            sid = normalize_id(line.id)
            people[sid] = _Who(sid, line.first_name, line.last_name, line.email)
        rows = []
        with suppress(GradebookError):  # a damaged gradebook is named by its own scan
            sql = "SELECT id, first_name, last_name, email FROM student"
            rows = gradebook_rows(self.dirs.db_url, sql) or []
        for sid, first, last, email in (r for r in rows if isinstance(r[0], str)):
            who = _Who(normalize_id(sid), first or "", last or "", email or "")
            people.setdefault(who.sid, who)
        return list(people.values())

    def mentions(self, who: _Who) -> Mentions:
        """Built once per spelling of her (her names are read from the gradebook first)."""
        key = (who.sid, who.first, who.last, who.email, tuple(who.gradebook_ids))
        if key not in self._mentions:
            self._mentions[key] = mention_pattern(
                who, others=self.classmates, released=self.released_lines
            )
        return self._mentions[key]

    @cached_property
    def released_lines(self) -> list[str]:
        """The course's own text (the TP's sample « alice »), in every copy: never a learner's."""
        lines: set[str] = set()
        release = self.dirs.release
        for nb in sorted(release.rglob("*.ipynb")) if release.is_dir() else []:
            try:
                cells = json.loads(nb.read_bytes()).get("cells", [])
            except (OSError, ValueError, AttributeError):
                continue
            for cell in (c for c in cells if isinstance(c, dict)):
                source = cell.get("source", "")
                text = "".join(source) if isinstance(source, list) else str(source)
                lines |= {line for line in text.splitlines() if line.strip()}
        return sorted(lines)

    @cached_property
    def known(self) -> set[str]:
        return learner_ids(self.dirs, (s.id for s in roster_students(self.setup.roster)))


@dataclass
class _Who:
    sid: str
    first: str = ""
    last: str = ""
    email: str = ""
    roster_line: int = 0
    # their ids as the gradebook stores them (NFD when a macOS folder or a hand made the row)
    gradebook_ids: list[str] = field(default_factory=list)
    # the classmates' e-mails: hers inside one (« l.martin@ » in « paul.martin@ ») is theirs
    other_emails: tuple[str, ...] = ()

    def identity(self) -> str:
        name = " ".join(x for x in (self.first, self.last) if x)
        extra = ", ".join(x for x in (name, self.email) if x)
        return quoted(self.sid) + (f" ({extra})" if extra else "")

    def names(self) -> list[str]:  # how a file names them: the full name both ways, as a login
        full = [
            f"{self.first} {self.last}",
            f"{self.last} {self.first}",
            f"{self.last}, {self.first}",
            f"{self.first}.{self.last}",  # « lina.ibrahimova-semaine2.txt »
        ]
        return [self.sid, self.email, *(full if self.first and self.last else [])]

    def spellings(self) -> list[str]:  # their id as it can be stored
        forms = [self.sid, unicodedata.normalize("NFD", self.sid), *self.gradebook_ids]
        return list(dict.fromkeys(forms))

    def patterns(self) -> list[re.Pattern[bytes]]:
        """What betrays them in a SQLite file's free pages: their student row (id and names side
        by side), their e-mail, a submission row (assignment uuid, id, timestamp)."""
        email = self.email
        longer = (o for o in self.other_emails if len(o) > len(email) and o.endswith(email))
        guards = b"".join(b"(?<!" + re.escape(o[: -len(email)].encode()) + b")" for o in longer)
        found = [re.compile(guards + re.escape(email.encode()))] if email else []
        tokens = []
        if self.first or self.last:
            for sid in self.spellings():
                for nf in ("NFC", "NFD"):
                    first, last = (unicodedata.normalize(nf, x) for x in (self.first, self.last))
                    tokens.append(f"{sid}{first}{last}".encode())
        ids = b"|".join(re.escape(s.encode()) for s in self.spellings())
        sub = re.compile(rb"(?<![0-9a-f])[0-9a-f]{32}(?:" + ids + rb")\d{4}-\d\d-\d\d")
        return found + [re.compile(re.escape(t)) for t in dict.fromkeys(tokens)] + [sub]


REDACTED = "[retiré]"  # what replaces a mention of an erased learner (CAVIARDER=1)
# a mention is a whole word (« ben », not « benoît »): a byte that starts a letter in UTF-8 (from
# « À » on, but U+2000–U+2FFF's punctuation: « ana’s ») or is one in Windows-1252 is a letter; a
# continuation byte and U+0080–U+00BF (no-break space, « ») are not
_WORD = rb"A-Za-z0-9_\xc0\xc1\xc3-\xe1\xe3-\xff"


def _entity_forms(text: str) -> set[str]:  # named, decimal and hexadecimal entities
    named = "".join(f"&{codepoint2name[ord(c)]};" if ord(c) in codepoint2name else c for c in text)
    dec = "".join(f"&#{ord(c)};" if ord(c) > 127 else c for c in text)
    hexa = "".join(f"&#x{ord(c):x};" if ord(c) > 127 else c for c in text)
    return {html.escape(text), named, dec, hexa}


def _variants(forms: list[str], typed: bool = True) -> set[str]:
    """Each form as a file holds it: NFC, NFD, any case, JSON escapes, HTML entities; `typed`, a
    full name also as people type it (’ for ', no hyphen, a no-break space), in any case and
    as JSON escapes it: its HTML entities too would make each erasure twice as slow."""
    variants: set[str] = set()
    for given in (f for f in dict.fromkeys(forms) if f and len(f) >= 2):
        spelt = set()
        if typed and " " in given:
            spelt = {given.replace("'", "\u2019"), given.replace("\u2019", "'")}
            spelt |= {form.replace("-", " ") for form in spelt}
            spelt |= {form.replace(" ", "\u00a0") for form in spelt}
        for nf in ("NFC", "NFD"):
            base = unicodedata.normalize(nf, given)
            for cased in {base, base.lower(), base.upper(), base.title()}:
                variants |= {cased, json.dumps(cased)[1:-1], *_entity_forms(cased)}
            for form in (unicodedata.normalize(nf, f) for f in spelt - {given}):
                cased = {form, form.lower(), form.upper(), form.title()}
                variants |= cased | {json.dumps(c)[1:-1] for c in cased}
    return variants


def _alternation(variants: set[str]) -> bytes:
    """The variants as one alternation, longest first, in UTF-8 and in Windows-1252 (Excel's
    « CSV », a gzip's Latin-1 file name); every pattern built of it ignores ASCII case, so one
    spelling per ASCII case is kept (a quarter of them: each costs every search)."""
    spelt = {v.encode() for v in variants}
    for variant in variants:
        with suppress(UnicodeEncodeError):
            spelt.add(variant.encode("cp1252"))
    kept = {v.lower(): v for v in sorted(spelt)}
    return b"|".join(re.escape(v) for v in sorted(kept.values(), key=lambda v: (-len(v), v)))


@dataclass(frozen=True)
class Mentions:
    """`anchors`: a file whose lower-cased bytes hold none is not searched (the pattern is what
    costs). A hit inside `others` (« Chloé Roux » when erasing « chloé ») is never hers. `loose`:
    for files that are not text (a SQLite row, ``noeNoéBlancnoe@exemple.fr``: no word boundary)."""

    pattern: re.Pattern[bytes]
    anchors: tuple[bytes, ...]
    others: re.Pattern[bytes] | None = None
    loose: re.Pattern[bytes] | None = None

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        low = data.lower()
        if not any(a in low for a in self.anchors):
            return []
        hits = [m.span() for m in self.pattern.finditer(data)]
        if hits:
            theirs = self._theirs(data)
            for block in _STYLE.finditer(data) if b"<style" in low else ():
                theirs += [m.span() for m in _CSS_WORD.finditer(data, *block.span())]
                theirs += [  # an element selector (« .menu>li>a »), its character before with it
                    (m.start() - 1, m.end())
                    for m in _CSS_TOKEN.finditer(data, *block.span())
                    if m[0].lower() in _HTML_ELEMENTS
                ]
            if b"<" in data:  # a tag's own name (« <li> », « </td> »), never a word of hers
                theirs += [m.span() for m in _TAG_NAME.finditer(data)]
            theirs += [m.span() for m in _BASE64.finditer(data)]  # an output image: no words
            hits = _outside(hits, theirs)
        return hits

    def _theirs(self, data: bytes) -> list[tuple[int, int]]:
        return [m.span() for m in self.others.finditer(data)] if self.others else []

    def search(self, data: bytes) -> bool:
        return bool(self.spans(data))

    def in_name(self, name: bytes) -> bool:
        """A file or member name, where « _ » separates words (« Ana Martin_48213_…/ »,
        « amartin_oublier.ipynb »); a classmate's id that holds one (« ana_b ») stays theirs."""
        return bool(_outside(self.spans(name.replace(b"_", b" ")), self._theirs(name)))

    def count(self, data: bytes) -> int:
        return len(self.spans(data))

    def sub(self, data: bytes, replacement: bytes) -> bytes:
        out, last = [], 0
        for a, b in self.spans(data):
            out += [data[last:a], replacement]
            last = b
        return b"".join([*out, data[last:]])

    def binary_count(self, data: bytes) -> int:
        """In a SQLite row, `loose` too; but inside a classmate's longer id (« lucasb »)."""
        if self.loose is None:
            return self.count(data)
        loose = [m.span() for m in self.loose.finditer(data)]
        return self.count(data) + len(_outside(loose, self._theirs(data)) if loose else ())


def _outside(hits: list[tuple[int, int]], theirs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The `hits` not inside a longer span of `theirs` (a classmate's name, a style sheet word)."""
    return [
        (a, b) for a, b in hits if not any(s <= a and b <= e and e - s > b - a for s, e in theirs)
    ]


_STYLE = re.compile(rb"<style\b.*?</style\s*>", re.I | re.S)
# base64 where a notebook or a page keeps it (an output image, a data: URL): « /ana+ » there is no
# word of anyone's; a long path elsewhere is text (its « /ana/ » is her folder)
_MEDIA = rb"(?:image/[a-z0-9.+-]+|application/pdf)"
_BASE64 = re.compile(
    rb'(?:base64,|"' + _MEDIA + rb'": ?"|"' + _MEDIA + rb'": ?\[\s*")[A-Za-z0-9+/=\\]{40,}'
)
# a style sheet's hyphenated words (``max-width``, ``.jp-alice``) never mention « max »; only
# those: a name written plainly inside a <style> is still found
_CSS_WORD = re.compile(rb"[A-Za-z0-9_-]*-[A-Za-z0-9_-]*")
# a style sheet's element selectors (a learner « li », « em » or « td » erased rewrote every
# feedback page's « .dropdown-menu>li>a »), and tags' names: what HTML names, never hers
_CSS_TOKEN = re.compile(rb"(?<=[\s>+~,{}(.#:*])[A-Za-z][A-Za-z0-9]*")
_TAG_NAME = re.compile(rb"</?[A-Za-z][A-Za-z0-9]*")
_HTML_ELEMENTS = frozenset(
    b"a abbr address area article aside audio b base bdi bdo blockquote body br button canvas "
    b"caption cite code col colgroup data datalist dd del details dfn dialog div dl dt em "
    b"embed fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hr html i "
    b"iframe img input ins kbd label legend li link main map mark menu meta meter nav "
    b"noscript object ol optgroup option output p param picture pre progress q rp rt ruby s "
    b"samp script section select small source span strong style sub summary sup svg table "
    b"tbody td template textarea tfoot th thead time title tr track u ul var video wbr".split()
)


# an id this long is searched inside a binary file even with letters glued to it (a SQLite
# row); a shorter one (« ben », « noe ») would be found inside other words (« benoît »)
LOOSE_ID_MIN = 5


def _rendered(line: str) -> str:
    """A line of Markdown as a feedback page shows it: inline code and bold as HTML, no mark."""
    out = html.escape(re.sub(r"^\s*(?:#+|[-*]|\d+\.)\s+", "", line), quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def mention_pattern(
    who: _Who, parts: bool = False, others: Iterable[_Who] = (), released: Iterable[str] = ()
) -> Mentions:
    """Every spelling of the learner as a whole word (`parts`: first and last names alone, as a
    log writes them); `others`' own ids, names and e-mails are never a mention of her."""
    variants = _variants(who.names() + ([who.first, who.last] if parts else []))
    alts = _alternation(variants)
    before = rb"(?<![" + _WORD + rb"])(?<![\xc3-\xe1][\x80-\xbf])(?<![\xe3-\xef][\x80-\xbf]{2})"
    pattern = re.compile(before + rb"(?:" + alts + rb")(?![" + _WORD + rb"])", re.I)
    # each spelling's longest ASCII run, lower-cased: every file that holds the spelling holds it
    # (« nom13 nom13 » for « Prénom13 Nom13 », not « pr », which every file has)
    runs = (re.findall(rb"[\x00-\x7f]+", v.encode()) for v in variants)
    anchors = {max(r, key=len, default=b"").lower() for r in runs}
    if any(len(a) < 2 for a in anchors):  # a spelling with no ASCII to look for: no first look
        anchors = {b""}
    # an anchor that holds a shorter one is implied by it
    kept = sorted(anchors, key=len)
    kept = [a for k, a in enumerate(kept) if not any(b in a for b in kept[:k])]
    theirs = [name for other in others if other.sid != who.sid for name in other.names()]
    mine = {v.casefold() for v in variants}
    theirs_v = {v for v in _variants(theirs) if v.casefold() not in mine}
    # the course's own text that names her (a released line, as the notebook's JSON writes
    # it, as a feedback page renders it)
    named = [line for line in released if pattern.search(line.encode())]
    shared = {*named, *(json.dumps(x)[1:-1] for x in named), *map(_rendered, named)}
    shared |= {json.dumps(x, ensure_ascii=False)[1:-1] for x in named}
    protected = [_alternation(forms) for forms in (theirs_v, shared) if forms]
    others_re = re.compile(b"|".join(protected), re.I) if protected else None
    # in a binary file: her registered name and e-mail, glued or not, and a long id as stored
    glued = [who.first + who.last] if who.first and who.last else []
    glued_v = _variants(who.names()[1:3] + glued, typed=False)
    loose_alts = [b"(?i:" + _alternation(glued_v) + b")"] if glued_v else []
    loose_alts += [re.escape(s.encode()) for s in who.spellings() if len(s) >= LOOSE_ID_MIN]
    loose = re.compile(b"|".join(loose_alts)) if loose_alts else None
    return Mentions(pattern, tuple(kept), others_re, loose)


def roster_students(path: Path | None) -> list:
    """The roster's lines (none without a roster); a damaged roster stops the command."""
    if path is None or not path.is_file():
        return []
    try:
        return read_roster(path)
    except RosterError as exc:
        raise ErasureError(f"Liste des élèves illisible ({path})\u00a0: {exc}") from None


class ErasureError(GradingError):
    """An erasure that cannot go on, in one French sentence."""


def _raw_hits(path: Path, patterns: list[re.Pattern[bytes]]) -> int:
    files = (Path(f"{path}{end}") for end in ("", *PAGE_SIDES))
    datas = (file.read_bytes() for file in files if file.is_file())
    return sum(len(p.findall(data)) for data in datas for p in patterns)


def _scan_gradebook(ctx: Context, who: _Who, out: Scan) -> None:
    db = ctx.gradebook
    if db is None:  # PostgreSQL, MySQL: not scanned to the byte here, so not claimed erased
        server = server_name(ctx.dirs.db_url)
        try:
            if gradebook_rows(ctx.dirs.db_url, STUDENTS) is None:
                raise GradebookError("", "pas une base nbgrader (aucune table student)")
        except GradebookError as exc:
            raise ErasureError(
                f"Carnet de notes illisible ({server})\u00a0: {exc.reason}. Sans lui, cette "
                "commande ne peut pas vérifier que l'élève est inscrit(e). Rien n'a été effacé."
            ) from None
        # an id of nobody (ctx.known holds the server's students): refused, never « remove it »
        if who.sid not in ctx.known:
            raise unknown_id(who.sid, ctx.known)
        raise ErasureError(
            f"Le carnet de notes n'est pas un fichier SQLite ({server})\u00a0: effacez l'élève "
            f"avec «\u00a0nbgrader db student remove {who.sid} --force\u00a0», puis "
            "«\u00a0VACUUM FULL\u00a0» de la base (cette commande ne sait prouver l'effacement "
            "que dans un fichier SQLite)."
        )
    if not db.is_file():
        return
    # their ids as stored (students and submissions): a row made from a macOS folder holds
    # ``chlo`` + U+0301, and ``WHERE id = 'chloé'`` misses it
    sql = "SELECT id FROM student UNION SELECT student_id FROM submitted_assignment"
    stored = {r[0] for r in _rows(db, sql) if isinstance(r[0], str)}
    mine = {i for i in stored if normalize_id(i) == who.sid}
    who.gradebook_ids = sorted(mine | set(who.gradebook_ids))
    ids = who.gradebook_ids or [who.sid]
    marks = ", ".join("?" * len(ids))
    sql = (
        f"SELECT first_name, last_name, email FROM student WHERE id IN ({marks}) "
        "ORDER BY email IS NULL, first_name IS NULL"
    )
    row = next(iter(_rows(db, sql, ids)), None)
    sql = (
        "SELECT (SELECT count(*) FROM submitted_assignment WHERE student_id IN "
        f"({marks})), (SELECT count(*) FROM grade g JOIN submitted_notebook sn ON "
        "sn.id = g.notebook_id JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
        f"WHERE sa.student_id IN ({marks}))"
    )
    subs, grades = _rows(db, sql, ids * 2)[0]
    if row is not None:  # the roster's names and e-mail first
        who.first = who.first or row[0] or ""
        who.last = who.last or row[1] or ""
        who.email = who.email or row[2] or ""
    if row or subs:
        spelt = len([i for i in ids if i != who.sid])
        detail = f"fiche de l'élève, {subs} rendu(s), {grades} note(s) et commentaire(s)"
        if spelt:
            detail += f" (identifiant aussi sous {spelt} autre(s) forme(s) Unicode)"
        out.add("carnet de notes", db, detail, "gradebook", (db, ids))
    elif hits := _raw_hits(db, who.patterns()):
        detail = f"{hits} trace(s) dans les octets du fichier (pages libres)"
        out.add("carnet de notes", db, detail, "vacuum", (db, []))
    # a teacher's comment on a classmate's answer that names her (« même code qu'Ana »)
    for student in _comments_naming(db, ctx.mentions(who), ids):
        detail = f"un commentaire sur le travail de {quoted(student)} la nomme"
        out.add("commentaire à corriger dans formgrader", db, detail, BY_HAND, db)


def _rows(db: Path, sql: str, params: list | tuple = (), what: str = "Carnet de notes") -> list:
    """`sql`'s rows in SQLite file `db`, read-only; a file it cannot read stops the command."""
    return sqlite_rows(
        db, sql, lambda why: ErasureError(f"{what} illisible ({db})\u00a0: {why}."), params
    )


def _comments_naming(db: Path, pattern: Mentions, skip: list[str]) -> list[str]:
    """The learners (but `skip`) on whose work a formgrader comment in gradebook `db` names her."""
    marks = ", ".join("?" * len(skip)) or "''"
    comments = _rows(
        db,
        "SELECT sa.student_id, c.manual_comment FROM comment c JOIN submitted_notebook sn "
        "ON sn.id = c.notebook_id JOIN submitted_assignment sa ON sa.id = sn.assignment_id "
        f"WHERE c.manual_comment IS NOT NULL AND sa.student_id NOT IN ({marks})",
        skip,
    )
    return sorted({student for student, text in comments if pattern.search(text.encode())})


def unknown_id(sid: str, known: set[str]) -> ErasureError:
    """Refused, never « rien à effacer » (a typo, « Chloé » for « chloé »); close ids as a hint."""
    near = close_ids(sid, known - {sid})
    hint = f"\u00a0; identifiant(s) proche(s)\u00a0: {', '.join(map(quoted, near))}"
    return ErasureError(
        f"Identifiant {quoted(sid)} inconnu dans le système de la classe (un identifiant "
        f"s'écrit exactement, majuscules et accents compris){hint if near else ''}. Rien "
        "n'a été effacé."
    )


def _scan_folders(ctx: Context, who: _Who, out: Scan) -> None:
    for place in PER_LEARNER:
        parent = place.folder(ctx.dirs)
        for child in sorted(parent.iterdir()) if parent.is_dir() else []:
            if child.is_symlink() and normalize_id(child.name) == who.sid:
                raise ErasureError(
                    f"{child} est un lien vers {child.resolve()}\u00a0: il n'est pas suivi (il "
                    "pourrait mener hors du cours). Remplacez-le par le dossier lui-même, puis "
                    "relancez. Rien n'a été effacé."
                )
        for folder in own_folders(parent, who.sid):
            try:
                n = sum(1 for _rel, _path, mode in tree(folder, 2) if mode != stat.S_IFDIR)
            except TooDeep as deep:  # a trap of her own: nothing to count in it, nor erase
                out.add(_UNREAD, deep.folder, str(deep), BY_HAND, deep.folder)
                continue
            out.add(place.label, folder, f"{n} fichier(s)", "tree", folder)
    for replaced in sorted(ctx.dirs.downloaded.glob("*/remplaces")):
        for folder in own_folders(replaced, who.sid):
            out.add("copies remplacées", folder, "anciennes copies", "tree", folder)
    for entry in quarantined_for(ctx.dirs.quarantine, who.sid):
        out.add("quarantaine", entry, "", "tree", entry)
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in who.sid)
    name = re.compile(rf"donnees-{re.escape(safe)}-\d{{8}}-\d{{6}}\.zip")
    for file in sorted(ctx.dirs.exports.glob(f"donnees-{safe}-*.zip")):
        # two ids can share a file name (« a b », « a_b »): the archive says whose it is; one
        # that cannot say (damaged, edited) may be hers: named, never passed over
        owner = _export_of(file) if name.fullmatch(file.name) else ""
        if owner == who.sid:
            out.add("export de ses données", file, "", "tree", file)
        elif owner is None:
            detail = "sa fiche eleve.json ne dit pas de qui il est (archive abîmée ou modifiée)"
            out.add("export à son nom, illisible", file, detail, BY_HAND, file)


def _export_of(file: Path) -> str | None:
    """Whose a data export (``make donnees-eleve``) is, read from its card."""
    try:
        with zipfile.ZipFile(file) as zf:
            card = json.loads(zf.read(EXPORT_CARD))
    except (*DAMAGED, KeyError, ValueError):  # a damaged card: named as an export that may be hers
        return None
    for part in ("carnet_de_notes", "liste_des_eleves") if isinstance(card, dict) else ():
        if isinstance(card.get(part), dict) and card[part].get("identifiant"):
            return normalize_id(str(card[part]["identifiant"]))
    return None


def _owned(ctx: Context, path: str, who: _Who, *, zipped: bool = True) -> bool:
    """Whether download member ``/<archive stem>/<member>`` is hers: the first folder naming a
    learner decides (an ENT's ``ana/oublier/oublier.ipynb`` is Ana's though the regexp reads
    « oublier »); else, as zip_collect reads it, the regexp's student or the file's folder; else
    a name of hers in its path (Moodle's ``Ana Martin_48213_assignsubmission_file_/``)."""
    sid = who.sid
    parts = PurePosixPath(path).parts
    holders = parts if path.endswith("/") else parts[:-1]  # "/", then the folders that hold it
    match = re.match(ctx.regexp, path) if ctx.regexp else None
    if match and "student_id" in match.groupdict():  # whom zip_collect gives it to
        collected = normalize_id(match["student_id"])
    else:
        collected = normalize_id(holders[-1]) if len(holders) > 1 else None
    known = ctx.known | {sid}
    folders = holders[2 if zipped else 1 :]  # holders[1] of a member: its archive's stem
    folder_owner = next((normalize_id(f) for f in folders if normalize_id(f) in known), None)
    if folder_owner is None:
        if _variant_in(holders[1:], sid):  # « Ben/ » for ben: another id, named by _scan_class
            return False
        named = any(ctx.mentions(who).in_name(p.encode()) for p in parts[2 if zipped else 1 :])
        return collected == sid or (named and collected not in known)
    if collected in known and collected != folder_owner and sid in (collected, folder_owner):
        # « ben/ana/oublier.ipynb »: in Ben's folder, collected as Ana's; neither guess is safe
        raise ErasureError(
            f"Membre ambigu {quoted(path.lstrip('/'))} dans les archives reçues : dans le "
            f"dossier de {quoted(folder_owner)}, mais zip_collect le donne à {quoted(collected)}. "
            "Retirez-le de l'archive à la main (ou renommez le dossier), puis relancez. Rien n'a "
            "été effacé."
        )
    return folder_owner == sid


def _scan_downloads(ctx: Context, who: _Who, out: Scan) -> None:
    # a folder that is a link (to the teacher's Downloads, another class) is never followed
    downloaded = ctx.dirs.downloaded
    if not downloaded.is_dir() or downloaded.is_symlink():
        return
    for base in sorted(p for p in downloaded.iterdir() if p.is_dir() and not p.is_symlink()):
        for sub in (base / ctx.archive_name, base / "extracted"):
            if not sub.is_dir() or sub.is_symlink():
                continue
            for rel, file in files_under(sub, levels=3):  # downloaded/<A>/archive
                if file.suffix.lower() != ".zip":
                    if _owned(ctx, f"/{rel}", who, zipped=False):
                        out.add("archives reçues", file, "fichier", "tree", file)
                    continue
                try:
                    with zipfile.ZipFile(file) as zf:
                        names = zf.namelist()
                except UNOPENABLE as exc:
                    reason = unopenable_reason(exc)
                    raise ErasureError(f"Archive illisible\u00a0: {file} ({reason}).") from None
                norm = [(n, normalize_id(n.replace("\\", "/"))) for n in names]
                mine = [n for n, member in norm if _owned(ctx, f"/{file.stem}/{member}", who)]
                if mine:  # only the learner's members: the same text before and after (control)
                    out.add("archives reçues", file, ", ".join(mine), "zip", (file, mine))


def _scan_lists(ctx: Context, who: _Who, out: Scan) -> None:
    """Their roster line and their rows in the reports."""
    if line := who.roster_line:
        out.add("liste des élèves", ctx.setup.roster, f"ligne {line}", "roster", line)
    report = ctx.dirs.report
    names = ("notes.csv", "notes-tableur.csv", "grades.csv", "export-tableur.csv")
    for path in [*(report / name for name in names), ctx.dirs.grader_dir / "grades.csv"]:
        if path.is_file() and who.sid in _csv_ids(path):
            out.add("rapport", path, "ligne de notes", "report", path)
    page = report / "rapport.html"
    text = normalize_id(page.read_text(errors="replace")) if page.is_file() else ""
    if f"<td>{html.escape(who.sid)}</td>" in text:
        out.add("rapport", page, "ligne du tableau", "report", page)


def _csv_ids(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    head = text.split("\n", 1)[0]
    sep = ";" if head.count(";") > head.count(",") else ","
    rows = csv.DictReader(io.StringIO(text), delimiter=sep)
    return {normalize_id(row[k].lstrip("'")) for row in rows for k in ID_COLUMNS if row.get(k)}


def _scan_exchange(ctx: Context, who: _Who, out: Scan) -> None:
    """Their submissions and released feedback (``feedback/<md5(secret + notebook)>.html``), the
    secret read from their grader folders and inbound copies (each may be gone)."""
    # a mistyped ECHANGE=: her submissions and released feedback would be left unseen
    given, ends = ctx.setup.exchange, "Rien n'a été effacé."
    if given is not None and not given.is_dir():
        raise ErasureError(
            f"Dossier d'échange introuvable\u00a0: {given} (ECHANGE=, l'Exchange.root de "
            f"nbgrader). {ends}"
        )
    if given is not None and ctx.exchange is not None and not ctx.exchange.is_dir():
        raise ErasureError(
            f"Le dossier d'échange {given} ne contient pas le dossier du cours "
            f"{quoted(ctx.course_id)} (ECHANGE=, l'Exchange.root de nbgrader, pas le dossier "
            f"du cours lui-même). {ends}"
        )
    if ctx.exchange is None or not ctx.exchange.is_dir():
        return
    inbound = ctx.exchange / "inbound"
    entries = [] if not inbound.is_dir() or inbound.is_symlink() else sorted(inbound.iterdir())
    secret_files = []
    for entry in (e for e in entries if normalize_id(e.name).split("+")[0] == who.sid):
        out.add("échange nbgrader", entry, "rendu", "tree", entry)
        secret_files.append(entry / "submission_secret.txt")
    for parent in (ctx.dirs.submitted, ctx.dirs.autograded, ctx.dirs.feedback):
        for folder in own_folders(parent, who.sid):
            secret_files += folder.glob("*/submission_secret.txt")
    found = set()
    for secret_file in (f for f in secret_files if f.is_file() and not f.is_symlink()):
        secret = secret_file.read_text(errors="replace").strip()
        notebooks = secret_file.parent.glob("*.*")
        found |= {(secret, nb.stem) for nb in notebooks if nb.suffix in (".ipynb", ".html")}
    for secret, nb in sorted(found):
        page = ctx.exchange / "feedback" / f"{notebook_hash(secret=secret, notebook_id=nb)}.html"
        if page.is_file():
            out.add("échange nbgrader", page, "retour publié", "tree", page)
    # an entry named by a variant of her id: the teacher's to check whole, never read here
    registered = {o.sid for o in ctx.classmates}
    for place in ("inbound", "outbound", "feedback"):
        folder = ctx.exchange / place
        for entry in (
            sorted(folder.iterdir()) if folder.is_dir() and not folder.is_symlink() else []
        ):
            if variant := _variant_in([entry.name], who.sid):
                _name_variant(out, entry, variant, registered, entry)
    # a classmate's submission or released feedback that names her: his own, never rewritten
    pattern = ctx.mentions(who)
    hers = {Path(f.where) for f in out.found if f.action == "tree" or f.kind == _VARIANT}
    for place in (inbound, ctx.exchange / "feedback"):
        for file in _exchange_files(place, hers, out) if place.is_dir() else ():
            if (data := _read_whole(file, out)) is None:
                continue
            if is_binary(data):  # a learner's work
                _name_binary(out, file, data, pattern, file, None)
            elif pattern.search(data):
                detail = _mention_detail(file.name, data, pattern) + (
                    "\u00a0: le rendu d'un autre élève, ramassé par make collect\u00a0; "
                    "retirez-en la mention, ou supprimez-le de l'échange"
                )
                out.add("mention dans l'échange, à retirer à la main", file, detail, BY_HAND, file)


def _exchange_files(folder: Path, hers: set[Path], out: Scan) -> Iterator[Path]:
    """Every file under `folder` but `hers`, links never followed; an unreadable folder is named."""
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        out.add(_UNREAD, folder, french_reason(exc), BY_HAND, folder)
        return
    for child in children:
        if child in hers or child.is_symlink():
            continue
        if child.is_dir():
            yield from _exchange_files(child, hers, out)
        elif child.is_file():
            yield child


def _read_whole(file: Path, out: Scan) -> bytes | None:
    """`file`'s bytes; None, the file named, when it cannot be read whole (never « no mention »)."""
    try:
        if (size := file.stat().st_size) > packed.EXPANDED_MAX:
            detail = f"{size // 2**20} Mo, au-delà de ce que cette commande lit"
            out.add(_UNREAD, file, detail, BY_HAND, file)
            return None
        return file.read_bytes()
    except OSError as exc:
        out.add(_UNREAD, file, french_reason(exc), BY_HAND, file)
        return None


def hub_request(setup: Setup, method: str, name: str) -> tuple[int, dict]:
    url = f"{setup.hub_url.rstrip('/')}/users/{urllib.parse.quote(name, safe='')}"
    req = urllib.request.Request(url, method=method)
    req.add_header("Authorization", f"token {setup.hub_token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            body = resp.read()
            return resp.status, json.loads(body) if body else {}
    except urllib.error.HTTPError as exc:
        return exc.code, {}
    except (urllib.error.URLError, OSError) as exc:
        raise ErasureError(
            f"Hub injoignable ({setup.hub_url})\u00a0: {french_reason(exc)}."
        ) from None


def _scan_hub(ctx: Context, who: _Who, out: Scan) -> None:
    setup = ctx.setup
    if setup.hub_url:
        status, user = hub_request(setup, "GET", who.sid)
        if status == 200:
            names = user.get("servers") or {}
            servers = ", ".join(quoted(n) if n else "défaut" for n in names) or "aucun"
            staff = bool(user.get("admin")) or bool(set(user.get("roles") or ["user"]) - {"user"})
            detail = f"compte du hub (serveurs\u00a0: {servers})"
            out.add("hub", f"{setup.hub_url}/users/{who.sid}", detail, "hub_user", staff)
        elif status in (401, 403):
            raise ErasureError(
                f"Le hub refuse le jeton ({status})\u00a0: il faut le jeton d'un administrateur "
                f"(variable {HUB_TOKEN_ENV})."
            )
        elif status != 404:
            raise ErasureError(f"Le hub répond {status} pour «\u00a0{who.sid}\u00a0».")
    if setup.hub_db is not None and setup.hub_db.is_file():
        sql = (
            "SELECT (SELECT count(*) FROM spawners s WHERE s.user_id = u.id), "
            "(SELECT count(*) FROM api_tokens t WHERE t.user_id = u.id) "
            "FROM users u WHERE u.name = ?"
        )
        for servers, tokens in _rows(setup.hub_db, sql, (who.sid,), "Base du hub")[:1]:
            detail = f"utilisateur, {servers} serveur(s), {tokens} jeton(s)"
            action = "hub_db" if not setup.hub_url else "via_hub_user"
            out.add("base du hub", setup.hub_db, detail, action)
    if (db := setup.firstuse_db) is not None:
        try:  # FirstUseAuthenticator's password file: a dbm keyed by user name
            with dbm.open(str(db), "r") as passwords:
                held = who.sid.encode() in passwords
        except dbm.error as exc:  # a tuple of exception classes
            raise ErasureError(
                f"Fichier de mots de passe illisible ({db})\u00a0: {french_reason(exc)}."
            ) from None
        if held:
            detail = "mot de passe haché de la première connexion"
            out.add("mots de passe du hub (TLJH)", db, detail, "firstuse", db)
    home = setup.homes / f"{setup.unix_prefix}{who.sid}" if setup.homes is not None else None
    if home is not None and home.exists():
        out.add("dossier personnel", home, "", "home", home)


_UNREAD = "non lu par cette commande, à vérifier à la main"
_VARIANT = "nom presque identique à son identifiant, à vérifier à la main"
BY_HAND = "by_hand"  # the action of a place this command never rewrites: the teacher's
_OWN_ACTIONS = ("tree", "roster", "report", "gradebook", "vacuum")  # a learner's own places


def _variant_in(names: Iterable[str], sid: str) -> str | None:
    """The id of the first of `names` (a path's parts) that names a variant of `sid`, all of it
    or before « + » (an exchange or quarantine entry): class_places.id_variant."""
    ids = (name.split("+")[0] for name in names)
    return next((i for i in ids if id_variant(i, sid)), None)


def _name_variant(
    out: Scan, where: object, variant: str, registered: set[str], target, how: str = "variant"
) -> None:
    """A folder, an entry or a member named by a variant of her id (``Alice_En_Dur`` or
    ``alice_en_dur.`` for ``alice_en_dur``), by a name that holds it (`how` « within »:
    ``alice_en_dur.old``) or by her id in another folder (« nested »): never erased as hers
    (nbgrader tells the ids apart: maybe another learner's), never passed over (maybe a copy of
    her data): the teacher's, so no proof while it is there."""
    sid = out.who.sid
    ends = (
        "\u00a0: peut-être une copie de ses données, jamais effacée d'office (ce n'est pas son "
        "dossier)\u00a0; supprimez-le s'il est à l'élève, puis relancez"
    )
    if how == "within":
        detail = f"{quoted(variant)} contient {quoted(sid)}, comme le nom d'une copie{ends}"
    elif how == "nested":
        detail = f"un dossier {quoted(sid)} rangé dans un autre dossier{ends}"
    elif normalize_id(variant) in registered:
        detail = (
            f"{quoted(variant)} est aussi un élève inscrit (liste des élèves ou carnet de "
            "notes)\u00a0: c'est peut-être un autre élève\u00a0; s'il est bien à lui, mettez-le "
            "de côté hors du cours le temps de l'effacement, puis remettez-le"
        )
    else:
        detail = (
            f"{quoted(variant)} n'est pas {quoted(sid)} mais n'en diffère que par la casse, la "
            "forme Unicode, des caractères invisibles ou des points et espaces en fin de "
            "nom\u00a0: peut-être une copie de ses données, jamais effacée d'office (nbgrader "
            "distingue ces identifiants)\u00a0; supprimez-le s'il est à l'élève, puis relancez"
        )
    out.add(_VARIANT, where, detail, BY_HAND, target)


def _learner_depth(ctx: Context, folder: Path) -> int | None:
    """How far below the level of the learners' own folders (``submitted/<id>``,
    ``<assignment>/remplaces/<id>``) the children of `folder` sit: 0 for those of
    ``submitted/``; None outside the places of one folder per learner."""
    here = folder.resolve()
    for place in PER_LEARNER:
        if here.is_relative_to(root := place.folder(ctx.dirs).resolve()):
            return len(here.relative_to(root).parts)
    downloaded = ctx.dirs.downloaded.resolve()
    parts = here.relative_to(downloaded).parts if here.is_relative_to(downloaded) else ()
    return len(parts) - 2 if len(parts) >= 2 and parts[1] == "remplaces" else None


def _mention_detail(name: str, data: bytes, pattern: Mentions) -> str:
    """« 2 mention(s), cellules 3, 7 » for a notebook whose cells 3 and 7 name her."""
    count = f"{pattern.count(data)} mention(s)"
    try:
        cells = json.loads(data).get("cells", []) if name.endswith(".ipynb") else []
    except (ValueError, AttributeError):
        cells = []
    hits = [
        str(k)
        for k, cell in enumerate(cells, 1)
        if pattern.search(json.dumps(cell, ensure_ascii=False).encode() + json.dumps(cell).encode())
    ]
    return count + (f", cellule{'s' if len(hits) > 1 else ''} {', '.join(hits)}" if hits else "")


def _whose(ctx: Context, file: Path) -> str | None:
    """Whose work a file of the class folder is (its folder's name), if anyone's."""
    parts = file.relative_to(ctx.dirs.grader_dir).parts
    if len(parts) > 1 and parts[0] in {p.folder(ctx.dirs).name for p in PER_LEARNER}:
        return normalize_id(parts[1])
    if "remplaces" in parts[:-2]:  # <assignment>/remplaces/<id>/…
        return normalize_id(parts[parts.index("remplaces") + 1])
    return None


def _scan_class(ctx: Context, who: _Who, out: Scan) -> None:
    """Every other file of the class folder, archives member by member, for a mention. Logs are
    cleaned; other mentions only with ``--caviarder``, as text, in the data folders: a file that
    is not text (a rewrite would corrupt it) or outside them (not class data) is the teacher's
    to fix by hand. The course's own files as it ships them are never a mention."""
    pattern = ctx.mentions(who)
    # a log line: « 'first_name': 'Ben' »
    in_logs = mention_pattern(who, parts=True, others=ctx.classmates, released=ctx.released_lines)
    # their own places (a tree's `where` is its target), and their own members of each archive
    own = {Path(f.where) for f in out.found if f.action in _OWN_ACTIONS}
    own_members = {Path(f.target[0]): set(f.target[1]) for f in out.found if f.action == "zip"}
    skip = {p.resolve() for p in (*own, ctx.setup.roster) if p is not None}
    # the backups make sauvegarde names: _scan_pending (a copy or a renamed one is searched)
    skip |= {path.resolve() for _, path in backups_in(ctx.backups)}
    # a SQLite gradebook: _scan_gradebook, always first, refuses any other
    skip |= {Path(f"{ctx.gradebook}{end}").resolve() for end in ("", *SIDES)}
    # the erasure register's own files, by their place: a student's file or folder of that name
    # elsewhere (in an archive they sent) is searched like any other
    registers = class_registers(ctx.dirs.db_url, ctx.dirs.grader_dir)
    skip |= {(r.folder / name).resolve() for r in registers for name in (REGISTER_NAME, KEY_NAME)}
    # where an erasure names the next versions it writes (erase_learner._claim), their paths
    marker = ctx.dirs.grader_dir / ERASING
    skip |= {marker.resolve(), private_temporary(marker).resolve()}
    top = ctx.dirs.grader_dir
    data_places = {p.folder(ctx.dirs).resolve() for p in PLACES if p.key != "backups"}
    # the list of the course's files, this code's and the class folder's copy (--grader-dir)
    skip |= {LIST.resolve(), (top / LIST.relative_to(LIST.parents[2])).resolve()}
    try:
        shipped = course_digests()  # the course's files as it ships them: never a mention
        shipped |= git_templates()  # nor what git init writes
    except (OSError, UnicodeDecodeError) as exc:
        reason = "pas en UTF-8" if isinstance(exc, UnicodeDecodeError) else french_reason(exc)
        raise ErasureError(
            f"La liste des fichiers du cours est illisible ({LIST}\u00a0: {reason})\u00a0: sans "
            "elle, cette commande ne distingue pas vos fichiers de ceux du cours. Reprenez-la du "
            "cours (git checkout, ou l'archive téléchargée). Rien n'a été effacé."
        ) from None
    names = course_names()  # the course's own file and folder names: never a mention
    # the course's folders, where a module compiled before an update moved it stays behind
    code_folders = {(top / folder).resolve() for folder in course_folders()}

    def walk(folder: Path, in_place: bool, repository: Path | None = None):
        if len(folder.relative_to(top).parts) > MAX_DEPTH:  # a trap, never a learner's work
            detail = f"{TOO_DEEP}, non parcouru"  # as every walk of the class says it
            out.add(_UNREAD, folder, detail, BY_HAND, folder)
            return
        try:
            children = sorted(folder.iterdir())
        except OSError as exc:  # a folder of another account's: it may hold the learner
            out.add(_UNREAD, folder, french_reason(exc), BY_HAND, folder)
            return
        depth = _learner_depth(ctx, folder) if in_place else None
        for child in children:
            try:  # a path too long for the system (ENAMETOOLONG): named, never a crash
                child.lstat()
            except FileNotFoundError:  # gone since the folder was listed: nothing of hers
                continue
            except OSError as exc:
                out.add(_UNREAD, child, french_reason(exc), BY_HAND, child)
                continue
            # in a data place, a variant of her id (a received archive by its stem): the
            # teacher's to check whole, never searched into (nothing in it rewritten)
            called = [child.name, child.stem] if child.suffix.lower() == ".zip" else [child.name]
            if in_place and (variant := _variant_in(called, who.sid)):
                _name_variant(out, child, variant, registered, child)
                continue
            # where learners' own folders sit, a name that holds her id (« ben.old », but not
            # « benoit » nor a registered « ben.x »); below it, a folder of her very id (not an
            # assignment's: « ana/oublier » for a learner « oublier »)
            if depth == 0 and any(id_within(name, who.sid, registered) for name in called):
                _name_variant(out, child, child.name, registered, child, "within")
                continue
            if (
                depth
                and normalize_id(child.name) == who.sid
                and child.is_dir()
                and not child.is_symlink()
                and not (depth == 1 and who.sid in assignments)
            ):
                _name_variant(out, child, child.name, registered, child, "nested")
                continue
            if child.is_symlink():
                yield from linked(child)
                continue
            if child.resolve() in skip or (repository and _git_object(child, repository)):
                continue  # a repository's objects: read through git (_scan_git)
            here = in_place or child.resolve() in data_places
            if folder == top and child.name == DEMO_FOLDER and is_demo(child):
                demos.append(child)  # make demo-grading's course: the samples, none a learner's
                continue
            if not here and child.suffix == ".pyc" and _compiled_course_file(child, shipped):
                continue  # the course's compiled code, its source as shipped; so is its name
            git_store = repository is not None and child.is_relative_to(repository / "objects")
            renamable = not (here or git_store or child.name in names)
            if renamable and pattern.in_name(child.name.encode()):
                detail = "son nom est dans le nom de ce fichier ou dossier\u00a0: renommez-le"
                out.add("nom à changer à la main", child, detail, BY_HAND, child)
            if not here and child.name == ".git" and (store := _store_of(child)):
                repositories.append(store)  # a worktree's, a submodule's; unreadable: named
            if child.is_dir() and _is_repository(child):
                repositories.append(child)  # its history, other branches, what git rm left
                yield from walk(child, False, child)  # refs, logs: her name in a branch's
            elif child.is_dir():
                if _is_environment(child):  # what pip installed there is never the class's data
                    skip.update((child / name).resolve() for name in _INSTALLED)
                yield from walk(child, here, repository)
            elif child.is_file():
                if git_store:
                    strays.add(child)  # not git's own (an interrupted fetch's pack…)
                yield child, here and repository is None

    def linked(link: Path):
        """A link is never followed to be changed: what it leads to outside the class folder
        is read (a file) or named (a folder); inside, its target is searched where it is."""
        try:
            target = link.resolve(strict=True)
        except (OSError, RuntimeError):  # a dangling link, or a loop: it leads to nothing
            return
        if target in skip or target.is_relative_to(top.resolve()):
            return
        if target.is_file():
            yield link, False  # a file elsewhere: searched, never rewritten
        elif target.is_dir():
            detail = f"lien vers le dossier {target}, que cette commande ne parcourt pas"
            out.add(_UNREAD, link, detail, BY_HAND, link)

    registered = {other.sid for other in ctx.classmates}
    # the course's assignments: the level below a learner's own folder is named after them
    sources = (ctx.dirs.source, ctx.dirs.release)
    assignments = {normalize_id(p.name) for d in sources if d.is_dir() for p in d.iterdir()}
    repositories: list[Path] = []
    demos: list[Path] = []
    strays: set[Path] = set()
    # where make grade writes its failure record (runs.known_failures): beside the gradebook
    failure_folders = {ctx.dirs.grader_dir.resolve()}
    if ctx.gradebook is not None:
        failure_folders.add(ctx.gradebook.parent.resolve())
    for file, in_place in walk(top, False):
        if (data := _read_whole(file, out)) is None or (not in_place and digest(data) in shipped):
            continue
        if file.suffix.lower() == ".zip" and data.startswith(ZIP_MAGIC):
            skipped = own_members.get(file, set())
            exported = file.parent.resolve() == ctx.dirs.exports.resolve()
            if exported and _export_of(file) not in (None, who.sid):  # a classmate's export:
                skipped = skipped | {EXPORT_CARD}  # « Ana » in his card is Ana Bo's own name
            if _scan_class_zip(file, data, skipped, pattern, out, in_place, registered):
                continue  # read member by member; a damaged archive: searched as bytes below
        if _orphan_compiled(file, code_folders):  # the course's dead code: deleted if it names her
            with suppress(Unsearched):  # not a .pyc inside: named as any other below
                if binary_hits(data, pattern):
                    detail = (
                        "code compilé du cours dont la source n'existe plus (une mise à jour "
                        "l'a déplacée)\u00a0: Python ne s'en sert plus, supprimé à l'effacement"
                    )
                    out.add("code compilé sans sa source", file, detail, "tree", file)
                continue
        if file in strays and is_binary(data):
            with suppress(Unsearched):
                if binary_hits(data, pattern):  # named as any binary file below
                    strays.discard(file)
            if file in strays:  # its bytes say nothing: compressed as git compresses
                detail = "fichier binaire dans le magasin d'un dépôt git, que git ne lit pas"
                out.add(_UNREAD, file, detail, BY_HAND, file)
                continue
        if is_binary(data):
            _name_binary(out, file, data, pattern, file, None, in_place)
            continue
        # the failure record, and its next version a make grade stopped before renaming it left
        record = file.name == FAILURES_FILE or (
            file.name.startswith(FAILURES_TMP) and file.parent.resolve() in failure_folders
        )
        log = file.suffix == ".log" or record
        found_by = in_logs if log else pattern
        if not found_by.search(data):
            continue
        detail = _mention_detail(file.name, data, found_by)
        if log:
            kind, action = "journal de notation", "log"
        elif not in_place:
            kind, action = "fichier hors des dossiers de la classe, à corriger à la main", BY_HAND
            detail += " (hors des dossiers de données de la classe\u00a0: jamais caviardé)"
        elif (owner := _whose(ctx, file)) is not None:
            kind, action = f"mention dans le travail de {quoted(owner)}", "mention"
        else:
            kind, action = "mention dans un fichier de la classe", "mention"
        out.add(kind, file, detail, action, (file, None, found_by))
    for repository in dict.fromkeys(r.resolve() for r in repositories):  # a submodule's twice
        _scan_git(ctx, repository, pattern, shipped, out)
    # make demo-grading's course: the samples' code names the TP's example learners, so only
    # her rows (a learner added in its formgrader), a name, and the work of a learner of the
    # class the teacher copied there (submitted/ben/) count
    class_ids = {who.sid, *(other.sid for other in ctx.classmates)}
    for demo in demos:
        for file in sorted(demo.rglob("*")):
            parts = file.relative_to(demo).parts
            copied = len(parts) > 2 and normalize_id(parts[1]) in class_ids
            if pattern.search(file.name.encode()):  # its samples: « alice_en_dur » is none
                held = True
            elif not file.is_file() or file.is_symlink():
                continue
            elif copied:  # a learner of the class's work, copied there
                held = (data := _read_whole(file, out)) is not None and pattern.search(data)
            else:  # the demo's own: her rows, a comment naming her in its gradebook
                gradebook = file.name == "gradebook.db"
                held = _raw_hits(file, who.patterns()) or (
                    gradebook and _comments_naming(file, pattern, [])
                )
            if held:
                detail = "la démonstration (make demo-grading) l'inscrit ou la nomme"
                out.add("démonstration à supprimer à la main", file, detail, BY_HAND, file)


def _store_of(dot_git: Path) -> Path | None:
    """Where a ``.git`` file (« gitdir: … »: ``git worktree add``, a submodule) keeps its history,
    searched as any repository of grader/; another ``.git`` file is a file."""
    with suppress(OSError, UnicodeDecodeError, IndexError):
        if dot_git.is_file() and (line := dot_git.read_text(encoding="utf-8").splitlines()[0]):
            if line.startswith("gitdir:"):
                return (dot_git.parent / line[len("gitdir:") :].strip()).resolve()
    return None


def _is_repository(folder: Path) -> bool:
    """A git repository by its content: a bare one (``notes.git``), a classmate's handed in."""
    with suppress(OSError):  # a folder this account cannot open: named by the walk
        if not any((folder / "objects").iterdir()):  # an empty one holds nothing: walked
            return False
        return folder.name == ".git" or all((folder / name).exists() for name in ("HEAD", "refs"))
    return False


# what a Python environment's installer writes (venv, uv; Windows' names too)
_INSTALLED = ("bin", "lib", "lib64", "include", "share", "Lib", "Scripts", "Include")
# a repository's own store, as git writes it: a loose object, a pack and what indexes it, the
# multi-pack index, the commit graph, the list of packs and alternates
_GIT_OBJECT = re.compile(
    r"[0-9a-f]{2}/[0-9a-f]{38,62}"
    r"|pack/pack-[0-9a-f]{40,64}\.(?:idx|rev|keep|bitmap|promisor|mtimes)"
    r"|pack/multi-pack-index(?:-[0-9a-f]{40,64}\.(?:bitmap|rev))?"
    r"|info/(?:packs|alternates|http-alternates|commit-graph)"
    r"|info/commit-graphs/(?:commit-graph-chain|graph-[0-9a-f]{40,64}\.graph)"
)

# the staging area, a worktree's, and the shared part of a split index
_GIT_INDEX = re.compile(r"(?:worktrees/[^/]+/)?(?:index|sharedindex\.[0-9a-f]{40,64})")


def _git_object(path: Path, repository: Path) -> bool:
    """Whether `path` is one of git's own files, which git reads: its index, or a file of objects/
    (a pack only with its index); anything else there (an interrupted fetch's pack) is searched
    as a file."""
    rel = path.relative_to(repository).as_posix()
    if _GIT_INDEX.fullmatch(rel):
        return path.is_file()  # its names read through git: its times and ids are raw bytes
    if not rel.startswith("objects/") or path.is_dir():
        return False  # a folder: walked, its files sorted out one by one
    name = rel[len("objects/") :]
    if re.fullmatch(r"pack/pack-[0-9a-f]{40,64}\.pack", name):
        return path.with_suffix(".idx").is_file()
    return bool(_GIT_OBJECT.fullmatch(name))


def _is_environment(folder: Path) -> bool:
    with suppress(OSError):
        return (folder / "pyvenv.cfg").is_file()
    return False


def _orphan_compiled(pyc: Path, code_folders: set[Path]) -> bool:
    """Whether `pyc` is in the ``__pycache__`` of a course folder, its source gone (an update moved
    it): Python imports it only beside its source. Anywhere else it is named, never deleted."""
    if pyc.suffix != ".pyc" or pyc.parent.name != "__pycache__" or pyc.is_symlink():
        return False  # a link leads elsewhere: what it leads to is named, never deleted
    return pyc.parent.parent.resolve() in code_folders and not _source_of(pyc).exists()


def _source_of(pyc: Path) -> Path:
    return pyc.parent.parent / f"{pyc.name.split('.')[0]}.py"


def _compiled_course_file(pyc: Path, shipped: set[str]) -> bool:
    """Whether `pyc` compiles a course file as shipped: its code is what compiling it gives (a copy
    changes the source's time, never its code); another Python's, by its header (time and size,
    or hash). A teacher's script's, or a stale one's, is searched."""
    source = _source_of(pyc)
    with suppress(OSError, ValueError, EOFError, TypeError, SyntaxError):
        if pyc.parent.name != "__pycache__" or digest(code := source.read_bytes()) not in shipped:
            return False
        data = pyc.read_bytes()
        if pyc.name.split(".")[1] == sys.implementation.cache_tag:
            compiled = marshal.loads(data[16:])  # the teacher's own folder, never a learner's
            return compiled == compile(code, compiled.co_filename, "exec", dont_inherit=True)
        if int.from_bytes(data[4:8], "little") & 1:  # a hash-based .pyc (PEP 552)
            return data[8:16] == importlib.util.source_hash(code)
        stat = source.stat()
        fields = (int(stat.st_mtime), stat.st_size)  # as the header holds them, modulo 2**32
        return data[8:16] == b"".join((n & 0xFFFFFFFF).to_bytes(4, "little") for n in fields)
    return False


def _scan_git(
    ctx: Context, repository: Path, pattern: Mentions, shipped: set[str], out: Scan
) -> None:
    """Every object of a repository in the class folder (history, other branches, what ``git rm``
    left) read through git, one at a time, but a course file as shipped and, in a clone of the
    course (whose tests name « ana »), the objects of its history. A repository git will not
    read, or an object too big to read whole, is named, never « no mention »."""
    command = ["git", "-c", "safe.directory=*", "--git-dir", str(repository), "cat-file"]
    hits, reason = 0, ""
    commits, objects = ctx.course_history  # outside the try: its error is not this repository's
    try:
        listed = subprocess.run(
            [*command, "--batch-all-objects", "--batch-check=%(objectname)"], capture_output=True
        )
        ids = listed.stdout.split()
        course_copy = not commits.isdisjoint(ids)
        if course_copy:  # a clone of the course
            ids = [i for i in ids if i not in objects]
            out.course_copies.append(str(repository))
        if listed.returncode:
            reason = listed.stderr.decode(errors="replace").strip()[:200]
        with tempfile.TemporaryFile() as asked:
            asked.write(b"".join(i + b"\n" for i in ids))
            asked.seek(0)
            pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
            with subprocess.Popen([*command, "--batch"], stdin=asked, **pipes) as git:
                while not reason and (header := git.stdout.readline()):
                    _, kind, size = (header.split() + [b"", b""])[:3]
                    size = int(size) if size.isdigit() else -1  # « <sha> missing »: no body
                    if size > packed.EXPANDED_MAX:
                        reason = f"un objet de {size // 2**20} Mo"
                        break
                    body = git.stdout.read(size + 1)[:-1] if size >= 0 else b""
                    if kind != b"blob":  # a commit's message, a tree's names, a tag
                        hits += pattern.binary_count(body)
                    elif digest(body) not in shipped:  # a file: what a zip, a gzip holds too
                        try:
                            hits += binary_hits(body, pattern)
                        except Unsearched as exc:
                            reason = f"un fichier de son historique\u00a0: {exc}"
                git.kill()
                if git.wait() > 0 and not reason:
                    reason = git.stderr.read().decode(errors="replace").strip()[:200]
        names, error = _index_names(repository, objects if course_copy else frozenset())
        hits += sum(map(pattern.binary_count, names))
        reason = reason or error
    except (OSError, ValueError) as exc:
        reason = french_reason(exc) if isinstance(exc, OSError) else "sortie de git illisible"
    if reason:
        out.add(_UNREAD, repository, f"dépôt git illisible ({reason})", BY_HAND, repository)
    elif hits:
        detail = (
            f"{hits} trace(s) dans l'historique ou l'index de ce dépôt git\u00a0: retirez-l'en "
            "(git rm --cached, git update-index --no-untracked-cache, git filter-repo), puis git "
            "reflog expire --expire=now --all && git gc --prune=now, ou supprimez ce dépôt, puis "
            "relancez"
        )
        out.add("historique git à réécrire à la main", repository, detail, BY_HAND, repository)


def _index_names(repository: Path, shipped: frozenset[bytes]) -> tuple[list[bytes], str]:
    """The names git's indexes hold, read through git, never by their bytes (times, ids), but
    those of a file as the course ships it (`shipped`: in a clone of the course, its history's
    objects: « alice_en_dur.py » is a sample), and why git could not read one: the index staged
    and its resolve-undo, each worktree's (its folder may be gone or outside grader/), a split
    index's shared part (what ``git rm --cached`` took out of the index stays there). Run in the
    store as its work tree, so that a ``core.worktree`` above it hides no entry. Git lists no
    name of its untracked cache (a file deleted since is still there): its bytes, from its
    signature on, are searched."""
    worktrees = [w for w in repository.glob("worktrees/*") if (w / "index").is_file()]
    indexes = [(store, None) for store in (repository, *worktrees)]
    indexes += [(repository, shared) for shared in repository.glob("sharedindex.*")]
    names, error = [], ""
    for store, index in indexes:
        with suppress(OSError):
            data = Path(index or store / "index").read_bytes()
            untracked = data.rfind(b"UNTR")  # its signature, a size, « Location <folder>… »
            if untracked > 0 and b"Location " in data[untracked + 8 : untracked + 20]:
                names.append(data[data.find(b"\0", untracked + 8) : -20])  # the folder's not
    for (store, index), staged in itertools.product(indexes, ("--stage", "--resolve-undo")):
        command = ["git", "-c", "safe.directory=*", "--git-dir", str(store)]
        command += ["--work-tree", str(store), "ls-files", "-z", staged]
        env = {**os.environ, "GIT_INDEX_FILE": str(index)} if index else None
        listed = subprocess.run(command, cwd=store, env=env, capture_output=True)
        if listed.returncode and not error:
            error = listed.stderr.decode(errors="replace").strip()[:200]
        for info, _, name in (entry.partition(b"\t") for entry in listed.stdout.split(b"\0")):
            if not shipped.intersection(info.split()[1:2]):  # « mode blob stage »
                names.append(name)
    return names, error


def _name_binary(
    out: Scan,
    where: object,
    data: bytes,
    pattern: Mentions,
    file: Path,
    left: list[int] | None,
    learners: bool = True,
) -> None:
    """A file (`where` is `file`) or an archive's member that is not text, never rewritten (that
    would corrupt it): named when it holds her or cannot be searched whole (`left`: what its
    archive may still expand to; `learners`: in the data folders, where a PDF is searched)."""
    try:
        hits = binary_hits(data, pattern, left=left, pdf_text=learners)
    except Unsearched as exc:
        out.add(_UNREAD, where, str(exc), BY_HAND, file)
        return
    if hits and where != file:
        kind = f"{packed.binary_kind(data)} dans une archive, à retirer à la main"
        out.add(kind, where, f"{hits} trace(s)\u00a0; ce membre ne se caviarde pas", BY_HAND, file)
    elif hits:
        detail = (
            f"{hits} trace(s)\u00a0; ce fichier ne se caviarde pas (le réécrire l'abîmerait)"
            "\u00a0: supprimez-le, ou retirez-en l'élève avec l'outil qui l'a créé, puis relancez"
        )
        out.add(f"{packed.binary_kind(data)} à supprimer à la main", file, detail, BY_HAND, file)


def _scan_class_zip(
    file: Path,
    data: bytes,
    mine: set[str],
    pattern: Mentions,
    out: Scan,
    in_place: bool,
    registered: set[str],
) -> bool:
    """The members of an archive but hers that name her: a text one redacted (CAVIARDER), another
    named; in the data folders, one in a folder named by a variant of her id, named and never
    read (the teacher's to check); False for an archive that cannot be read member by member."""
    found = Scan(out.who)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:  # never « no mention » for a member unread
            members = [info for info in zf.infolist() if info.filename not in mine]
            if pattern.binary_count(packed.zip_plain(zf, data)):  # its comments, Unicode names
                detail = (
                    "un commentaire de l'archive la nomme, ou ce qui précède ou suit ses membres"
                    "\u00a0: réécrivez-le (zip -z, zipnote -w), ou supprimez l'archive"
                )
                found.add("archive à corriger à la main", file, detail, BY_HAND, file)
        for info in list(members):
            parts = PurePosixPath(info.filename.replace("\\", "/")).parts
            if in_place and (variant := _variant_in(parts, out.who.sid)):
                where = f"{file}\u00a0: {info.filename}"
                _name_variant(found, where, variant, registered, file)
                members.remove(info)
                mine = mine | {info.filename}
        for info in members:
            if info.is_dir() and pattern.in_name(info.filename.encode()):
                detail = "son nom est dans le nom de ce dossier de l'archive"
                where = f"{file}\u00a0: {info.filename}"
                found.add("membre d'une archive à retirer à la main", where, detail, BY_HAND, file)
            if info.file_size > MEMBER_MAX:
                detail = f"{info.file_size // 2**20} Mo, au-delà de ce que cette commande lit"
                found.add(_UNREAD, f"{file}\u00a0: {info.filename}", detail, BY_HAND, file)
        # the whole archive expands to at most packed.EXPANDED_MAX: a zip of many members would not
        left = [
            packed.EXPANDED_MAX - sum(i.file_size for i in members if i.file_size <= MEMBER_MAX)
        ]
        if left[0] < 0:
            detail = f"plus de {packed.EXPANDED_MAX // 2**20} Mo une fois décompressé"
            out.add(_UNREAD, file, detail, BY_HAND, file)
            return True
        for name, body in packed.zip_members(data, MEMBER_MAX, mine):
            where = f"{file}\u00a0: {name}"
            if is_binary(body) and pattern.in_name(name.encode()):  # never rewritten, so named
                detail = "son nom est dans le nom de ce membre, qui ne se caviarde pas"
                found.add("membre d'une archive à retirer à la main", where, detail, BY_HAND, file)
            elif is_binary(body):
                _name_binary(found, where, body, pattern, file, left, in_place)
                if left[0] < 0:
                    break  # that member named: the rest would go beyond it too
            elif pattern.search(body) or pattern.in_name(name.encode()):
                detail = _mention_detail(name, body, pattern)
                action = "mention" if in_place else BY_HAND
                found.add("mention dans une archive", where, detail, action, (file, name, pattern))
    except DAMAGED:
        return False
    out.found += found.found
    return True


def _scan_pending(ctx: Context, who: _Who, out: Scan) -> None:
    setup, keep = ctx.setup, ctx.setup.keep_days
    mentions = ctx.mentions(who)
    for when, path in backups_in(ctx.backups):
        holds = _backup_holds(path, who, mentions)
        if holds is None:
            detail = (
                "archive abîmée ou tronquée : elle peut contenir ses données et la purge ne "
                "l'efface jamais ; supprimez-la (rm), puis relancez"
            )
            out.add("sauvegarde abîmée à supprimer à la main", path, detail, BY_HAND, path)
        elif holds and dated_ahead(when):  # never purged: its expiry would be a promise broken
            detail = (
                "son nom est daté dans le futur (l'horloge d'une autre machine\u00a0?)\u00a0: la "
                "purge ne l'efface jamais\u00a0; supprimez-la (rm), puis relancez"
            )
            out.add(
                "sauvegarde datée dans le futur, à supprimer à la main", path, detail, BY_HAND, path
            )
        elif holds:
            expires = french_datetime(when + timedelta(days=keep), with_zone=True)
            out.pend(
                "sauvegarde",
                path,
                f"le {expires} (rétention de {keep:g} jours, appliquée à chaque make "
                "sauvegarde\u00a0; la plus récente qui contient un carnet de notes est "
                "toujours gardée)",
                "make sauvegarde CONFIRMER=1 GARDER=1   (une sauvegarde neuve sans l'élève "
                "— CONFIRMER\u00a0: elle a un élève de moins —, puis purge des autres)",
            )
    hub_db = setup.hub_db
    erased_by_hub = any(f.action in ("hub_db", "via_hub_user") for f in out.found)
    if hub_db is not None and hub_db.is_file() and not erased_by_hub:
        quoted_sid = re.compile(re.escape(b'"' + who.sid.encode() + b'"'))
        if _raw_hits(hub_db, [quoted_sid]) or who.sid.encode() in hub_db.read_bytes():
            vacuum = f"sqlite3 {hub_db} 'VACUUM;'"
            command = f"systemctl stop jupyterhub && {vacuum} && systemctl start jupyterhub"
            out.pend("base du hub (pages libres)", hub_db, "au prochain VACUUM", command)
    if setup.hub_url or setup.hub_db:
        out.pend(
            "journaux du hub",
            "journald (jupyterhub, proxy)",
            "selon la rétention de journald (SystemMaxUse, MaxRetentionSec)",
            "journalctl --rotate && journalctl --vacuum-time=1s   (efface tout le journal de la "
            "machine, pas seulement celui du hub)",
        )
    if rel := setup.helm_release:
        out.pend(
            "historique Helm",
            f"secrets sh.helm.release.v1.{rel}.v*",
            "après 10 révisions (helm upgrade --history-max 10)",
            f"kubectl delete secret -l owner=helm,name={rel},status=superseded",
        )
        out.pend(
            "journaux des pods (Kubernetes)",
            "kubectl logs deploy/hub, deploy/proxy",
            "au redémarrage des pods (et selon la rétention des nœuds)",
            "kubectl rollout restart deploy/hub deploy/proxy",
        )


def _backup_holds(path: Path, who: _Who, mentions: Mentions | None = None) -> bool | None:
    """Whether a backup holds her (a member in her folder, her row or line, any file naming her);
    None when damaged (the purge never deletes it), so it is read to its checksum, always."""
    loose = mentions or mention_pattern(who)  # the TP's own text and classmates' names left out
    found = False
    try:
        with tarfile.open(path, "r:gz") as tar:
            for info in tar:
                if found:
                    continue
                parts = PurePosixPath(info.name).parts
                if len(parts) > 2 and normalize_id(parts[1]) == who.sid:
                    found = True
                elif info.isfile() and info.name == ROSTER:
                    found = who.sid.encode() in tar.extractfile(info).read()
                elif info.isfile() and info.name == GRADEBOOK:
                    data = tar.extractfile(info).read()
                    found = any(p.search(data) for p in who.patterns())
                elif info.isfile() and info.size <= packed.EXPANDED_MAX:
                    data = tar.extractfile(info).read()  # a classmate's work naming her too
                    try:
                        found = bool(
                            binary_hits(data, loose, pdf_text=True)
                            if is_binary(data)
                            else loose.count(data)
                        )
                    except Unsearched:  # never « not held » for what cannot be read
                        found = True
            while tar.fileobj.read(1 << 20):  # the rest of the stream, to gzip's checksum
                pass
    except (OSError, tarfile.TarError, EOFError, zlib.error):
        return None
    return found


def scan(sid: str, setup: Setup) -> Scan:
    """Every place where `sid` is, and what cannot be erased at once."""
    return scan_in(Context(setup), checked_id(sid))


def checked_id(value: str) -> str:
    """The id in NFC; one that would name a folder not theirs (``..``, ``/``) is refused first."""
    sid = normalize_id(value.strip())
    if problem := stored_id_problem(sid):
        raise ErasureError(f"Identifiant {quoted(value)} refusé\u00a0: {problem}.")
    return sid


def scan_in(ctx: Context, sid: str, known: object = None) -> Scan:
    """`known`: the learner as an earlier scan found them (``Scan.who``): after the erasure her
    names are still searched, though her roster line and gradebook row are gone."""
    who = _Who(sid)
    if isinstance(known, _Who) and known.sid == sid:
        who = replace(known, roster_line=0, gradebook_ids=list(known.gradebook_ids))
    out = Scan(who)
    who.other_emails = tuple(o.email for o in ctx.classmates if o.sid != sid and o.email)
    for line in roster_students(ctx.setup.roster):  # its names first, then the gradebook's
        if line.id == sid:
            who.first = line.first_name or who.first
            who.last = line.last_name or who.last
            who.email = line.email or who.email
            who.roster_line = line.line
    steps = (_scan_gradebook, _scan_folders, _scan_downloads, _scan_lists, _scan_exchange)
    for step in (*steps, _scan_hub, _scan_class, _scan_pending):
        step(ctx, who, out)
    return out
