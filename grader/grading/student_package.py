"""``make paquet-eleve``: what students get, without the answers (a clone of the repository holds
``solutions/`` and the hidden inputs): only what ``make lab`` needs, its ``Makefile`` the course
Makefile's set-up and lab recipes line for line (a test compares them). ``scan`` reads every file
of the zip for a solution line, a hidden test line or input: one finding, no zip, status 1."""

from __future__ import annotations

import json
import re
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat

from course.labo.fixture import LearnerSpec, Turn
from course.labo.partage import EXAMPLE, Learner, PartageScenario
from course.labo.scenario import VISIBLE, Scenario

from .french.french_args import FrenchParser
from .nbgrader_ext.hidden import HIDDEN
from .nbgrader_ext.hidden_partage import HIDDEN_PARTAGE

__all__ = [
    "ARCHIVE_NAME",
    "STUDENT_MAKEFILE",
    "TOP",
    "build",
    "main",
    "read_archive",
    "scan",
    "secrets",
]

REPO = Path(__file__).resolve().parents[2]
TOP = "memoire-tuteur"
ARCHIVE_NAME = "memoire-tuteur-eleve.zip"
MIN_LINE = 24  # a solution line shorter than this (``conn.close()``) is not specific to it
MIN_INPUT = 5  # a hidden input shorter than this (``%``, ``3``) is no secret by itself
_MARKERS = ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
STUDENT_MAKEFILE = Path(__file__).with_name("student_package.mk")


@dataclass(frozen=True)
class Secret:
    """A text that must stay with the instructor, and where it comes from (for the message)."""

    text: str
    origin: str


def assignments(repo: Path = REPO) -> list[str]:
    """The folders of ``solutions/`` with points to earn (``oublier``, ``oublier_partage``)."""
    return sorted(
        folder.name
        for folder in (repo / "solutions").iterdir()
        if folder.is_dir()
        and any(_graded(nbformat.read(p, as_version=4)) for p in folder.glob("*.ipynb"))
    )


def package_files(repo: Path, chosen: set[str]) -> dict[str, bytes]:
    """Path inside the package -> bytes: what ``make lab`` needs, the `chosen` assignments."""
    left_out = set(assignments(repo)) - chosen
    files: dict[str, bytes] = {}
    for path in sorted((repo / "notebooks").rglob("*.ipynb")):
        rel = path.relative_to(repo)
        if ".ipynb_checkpoints" in rel.parts or rel.parts[1] in left_out:
            continue
        files[rel.as_posix()] = path.read_bytes()
    for path in sorted((repo / "course").rglob("*")):
        rel = path.relative_to(repo)
        if path.is_file() and path.suffix in (".py", ".json") and "__pycache__" not in rel.parts:
            files[rel.as_posix()] = path.read_bytes()
    for name in ("pyproject.toml", "requirements/lab.txt", "requirements/uv.txt"):
        files[name] = (repo / name).read_bytes()
    files["Makefile"] = STUDENT_MAKEFILE.read_bytes()
    files["README.md"] = STUDENT_MAKEFILE.with_suffix(".md").read_bytes()
    return files


def _regions(source: str, begin: str, end: str) -> list[str]:
    """The texts between nbgrader's `begin` and `end` markers (to the cell's end without `end`)."""
    found, pos = [], 0
    while (start := source.find(begin, pos)) >= 0:
        pos = stop if (stop := source.find(end, start)) >= 0 else len(source)
        found.append(source[start + len(begin) : pos])
    return found


def _lines(texts: Iterable[str], minimum: int) -> Iterator[str]:
    stripped = (line.strip() for text in texts for line in text.splitlines())
    return (line for line in stripped if len(line) >= minimum)


# the fields of a hidden scenario's parts that hold inputs: ids, names, personal data, then
# sentences (a scenario's name is a label, its flags are no input)
_FIELDS = {
    Scenario: (("learner", "personal_data", "unknown", "quoted", "hostile", "extra_learners"), ()),
    LearnerSpec: (("user_id",), ("sessions",)),
    Turn: ((), ("text", "state_delta")),
    Learner: (("user_id", "name"), ("messages",)),
    PartageScenario: (("target", "quoted", "unknown", "witnesses"), ()),
}


def _inputs(obj: object, sentence: bool = False) -> Iterator[str]:
    """The inputs a hidden scenario holds: ids, names, personal data; sentences from 12 characters
    (``3``, ``clair``, ``boucles`` are the course's own words, a sentence is the scenario's)."""
    if isinstance(obj, str):
        if len(obj.strip()) >= (12 if sentence else MIN_INPUT):
            yield obj.strip()
    elif type(obj) in _FIELDS:
        plain, sentences = _FIELDS[type(obj)]
        for name in plain + sentences:
            yield from _inputs(getattr(obj, name), name in sentences)
    elif isinstance(obj, dict | list | tuple):
        for value in obj.values() if isinstance(obj, dict) else obj:
            yield from _inputs(value, sentence)


def _graded(nb) -> bool:
    """An assignment notebook (points to earn), not a lesson: a lesson's exercises show their
    own solution on purpose (``<details>``), an assignment's never."""
    return any(
        float(cell.get("metadata", {}).get("nbgrader", {}).get("points", 0) or 0) > 0
        for cell in nb.cells
    )


def secrets(repo: Path = REPO, chosen: Iterable[str] | None = None) -> list[Secret]:
    """What must never reach a student: the solution cells of the `chosen` assignments (a lesson
    may show the answer of one nobody is given), every hidden test and hidden input the visible
    examples lack, nbgrader's markers."""
    chosen = set(assignments(repo) if chosen is None else chosen)
    found: dict[str, Secret] = {}
    for path in sorted((repo / "solutions").rglob("*.ipynb")):
        rel = path.relative_to(repo).as_posix()
        nb = nbformat.read(path, as_version=4)
        graded = _graded(nb) and path.parent.name in chosen
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            name = meta.get("grade_id") or cell.get("id", "?")
            if meta.get("solution") and graded:
                texts = [cell.source]  # a written answer: the whole cell
                if cell.cell_type == "code":
                    texts = _regions(cell.source, "### BEGIN SOLUTION", "### END SOLUTION")
                for line in _lines(texts, MIN_LINE):
                    found.setdefault(line, Secret(line, f"{rel}, solution «\u00a0{name}\u00a0»"))
            hidden = _regions(cell.source, "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
            for line in _lines(hidden, 1):
                found.setdefault(line, Secret(line, f"{rel}, test caché «\u00a0{name}\u00a0»"))
    visible = set(_inputs(VISIBLE)) | set(_inputs(EXAMPLE))
    for origin, scenario in (("hidden", HIDDEN), ("hidden_partage", HIDDEN_PARTAGE)):
        where = f"grader/grading/nbgrader_ext/{origin}.py, entrée cachée"
        for value in (value for value in _inputs(scenario) if value not in visible):
            found.setdefault(value, Secret(value, where))
    for marker in _MARKERS:
        found[marker] = Secret(marker, "marqueur nbgrader d'une solution ou d'un test caché")
    return list(found.values())


def _texts(name: str, data: bytes) -> Iterator[str]:
    """The text a student reads in a file: as UTF-8, and for JSON (a notebook, ``course/**.json``)
    every string it holds as written, not as escaped (``\\"``, ``\\u00e9``): a cell's source,
    an output, metadata, any shape, each list of texts (a notebook's lines) joined too."""
    text = data.decode("utf-8", errors="replace")
    yield text
    if not name.endswith((".ipynb", ".json")):
        return
    try:
        stack = [json.loads(text)]
    except (ValueError, RecursionError):  # not JSON, or nested past Python's limit: the text
        return
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
            if value and all(isinstance(v, str) for v in value):
                yield "".join(value)


def scan(files: dict[str, bytes], found: Iterable[Secret]) -> list[str]:
    """French findings: each secret of `found` seen in a file (a reflowed line too)."""
    squash = re.compile(r"\s+")
    texts = {name: squash.sub(" ", "\n".join(_texts(name, data))) for name, data in files.items()}
    return [
        f"{name}\u00a0: {secret.origin}\u00a0: «\u00a0{secret.text[:80]}\u00a0»"
        for secret in found
        for name, text in texts.items()
        if squash.sub(" ", secret.text) in text
    ]


def read_archive(path: Path) -> dict[str, bytes]:
    """The files of a built package, paths without the top folder."""
    with zipfile.ZipFile(path) as zf:
        return {
            info.filename.removeprefix(f"{TOP}/"): zf.read(info)
            for info in zf.infolist()
            if not info.is_dir()
        }


def build(
    out: Path, repo: Path = REPO, chosen: Iterable[str] | None = None
) -> tuple[Path | None, list[str]]:
    """Write the package into `out`; (its path, []) or (None, the findings) when it would leak."""
    graded = assignments(repo)
    chosen = set(graded if chosen is None else chosen)
    if unknown := sorted(chosen - set(graded)):
        raise ValueError(
            f"TP inconnu\u00a0: {', '.join(unknown)} (les TP du cours\u00a0: {', '.join(graded)})."
        )
    files = package_files(repo, chosen)
    out.mkdir(parents=True, exist_ok=True)
    target = out / ARCHIVE_NAME
    tmp = target.with_name(f".{target.name}.tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name, data in sorted(files.items()):
            info = zipfile.ZipInfo(f"{TOP}/{name}", date_time=(2025, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, data, zipfile.ZIP_DEFLATED)
    if findings := scan(read_archive(tmp), secrets(repo, chosen)):
        tmp.unlink()
        return None, findings
    tmp.replace(target)
    return target, []


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.student_package",
        description="Construit le paquet des élèves (leçons, TP, paquet course, make lab), "
        "sans solutions ni tests cachés, et le vérifie.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DOSSIER",
        default=REPO / "build" / "paquet-eleve",
        help="dossier où écrire le zip (par défaut build/paquet-eleve)",
    )
    parser.add_argument(
        "--tp",
        nargs="*",
        metavar="TP",
        help="les TP donnés aux élèves (par défaut tous\u00a0: oublier oublier_partage)",
    )
    args = parser.parse_args(argv)
    try:
        target, findings = build(args.out, chosen=args.tp)
    except ValueError as exc:
        print(f"✘ {exc}", file=sys.stderr)
        return 2
    if target is None:
        print(
            f"✘ Paquet des élèves refusé\u00a0: {len(findings)} texte(s) réservé(s) à "
            "l'enseignant s'y trouvent\u00a0:",
            *(f"  - {line}" for line in findings),
            sep="\n",
            file=sys.stderr,
        )
        return 1
    size, count = target.stat().st_size, len(read_archive(target))
    print(
        f"Paquet des élèves écrit\u00a0: {target} ({count} fichiers, {size // 1024} Ko), "
        "sans solutions, tests cachés ni entrées cachées (vérifié). Donnez ce zip aux "
        "élèves\u00a0: ils le décompressent et lancent make lab dans le dossier memoire-tuteur/."
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
