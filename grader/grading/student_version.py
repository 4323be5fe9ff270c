"""``make notebooks``: the student version nbgrader generated (in a folder of its own) put in
``notebooks/``, never at the cost of what someone did there. ``make lab`` opens ``notebooks/``:
a lesson's database, an answer tried, a note of one's own live there, and nbgrader's
``generate_assignment --force`` deleted them all with one English warning. What differs from the
generated version (and, in a git checkout, from what git holds) is named and kept; with
``ECRASER=1`` it is set aside in ``build/``, never deleted."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .french.french_args import FrenchParser
from .french.system_reason import french_message

__all__ = ["main", "own_changes", "put_in_place"]


def _files(folder: Path) -> set[str]:
    """Every file of `folder` and every link (to a folder too: moved aside, never emptied)."""
    found = (p for p in folder.rglob("*") if p.is_symlink() or not p.is_dir())
    return {p.relative_to(folder).as_posix() for p in found}


def _dirty(notebooks: Path) -> set[str] | None:
    """What git sees changed, new or ignored under `notebooks` (paths relative to it); None
    outside a git checkout, where every difference counts."""
    command = ["git", "status", "--porcelain=v1", "-z", "--ignored", "--untracked-files=all"]
    try:
        listed = subprocess.run([*command, "--", "."], cwd=notebooks, capture_output=True)
    except OSError:
        return None
    if listed.returncode:
        return None
    top = subprocess.run(["git", "rev-parse", "--show-prefix"], cwd=notebooks, capture_output=True)
    prefix = top.stdout.decode().strip()
    tokens = iter(listed.stdout.decode(errors="surrogateescape").split("\0"))
    entries = []
    for token in tokens:  # « XY path », a rename's or copy's source path next, alone
        entries.append(token[3:].rstrip("/"))
        if token[:1] in ("R", "C"):
            entries.append(next(tokens, ""))
    return {e.removeprefix(prefix) for e in entries if e and e.startswith(prefix)}


def own_changes(generated: Path, notebooks: Path) -> list[str]:
    """The files of `notebooks` that the generated version would replace or delete and that are
    not the course's own: changed, or absent from the generated version and from git."""
    if not notebooks.is_dir():
        return []
    made, dirty = _files(generated), _dirty(notebooks)
    assignments = {rel.split("/", 1)[0] for rel in made}
    return sorted(
        rel
        for rel in _files(notebooks)
        if rel.split("/", 1)[0] in assignments
        and (dirty is None or rel in dirty or any(rel.startswith(f"{d}/") for d in dirty))
        and not (rel in made and filecmp.cmp(notebooks / rel, generated / rel, shallow=False))
    )


def put_in_place(generated: Path, notebooks: Path, kept: list[str], aside: Path) -> None:
    """`kept` moved to `aside`, then each generated assignment's folder replacing its own."""
    for rel in kept:
        (aside / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(notebooks / rel, aside / rel)
    for folder in sorted(p for p in generated.iterdir() if p.is_dir()):
        shutil.rmtree(notebooks / folder.name, ignore_errors=True)
        shutil.copytree(folder, notebooks / folder.name)


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.student_version",
        description="Met la version élève générée par nbgrader dans notebooks/, sans perdre ce "
        "qui y a été fait (make lab l'ouvre).",
    )
    parser.add_argument("generated", metavar="DOSSIER", type=Path, help="la version générée")
    parser.add_argument("notebooks", metavar="NOTEBOOKS", type=Path, help="le dossier notebooks/")
    parser.add_argument(
        "--ecraser",
        action="store_true",
        help="mettre de côté dans build/ ce qui diffère, puis remplacer",
    )
    args = parser.parse_args(argv)
    kept = own_changes(args.generated, args.notebooks)
    if kept and not args.ecraser:
        shown = "".join(f"\n  - notebooks/{rel}" for rel in kept[:20])
        more = f"\n  … et {len(kept) - 20} autre(s)" if kept[20:] else ""
        print(
            f"✘ notebooks/ n'a pas été régénéré\u00a0: {len(kept)} fichier(s) y diffèrent de la "
            f"version élève (le travail fait avec make lab){shown}{more}\nDéplacez-les, ou "
            "relancez avec ECRASER=1, qui les met de côté dans build/ avant de régénérer.",
            file=sys.stderr,
        )
        return 1
    aside = args.notebooks.parent / "build" / time.strftime("notebooks-mis-de-cote-%Y%m%d-%H%M%S")
    try:
        put_in_place(args.generated, args.notebooks, kept, aside)
    except OSError as exc:
        print(
            f"✘ notebooks/ n'a pas été régénéré en entier\u00a0: {french_message(exc)}. Ce qui "
            f"était déjà mis de côté est dans {aside}\u00a0; relancez après avoir corrigé.",
            file=sys.stderr,
        )
        return 1
    if kept:
        print(f"{len(kept)} fichier(s) de notebooks/ mis de côté dans {aside}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
