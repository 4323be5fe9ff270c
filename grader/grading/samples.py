"""Submission notebooks built from the sample answers of ``grader/submissions/``: ``<name>.py``
a student's ``oublier`` cell (``<name>.md`` their written answer); ``carnets/<name>.py`` an attack
on the notebook (its docstring, ``REPONSE`` the sample it starts from, ``carnet(nb, reponses,
canari)`` the mutation), each cell it adds writing the file ``canari`` first: none after grading."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat

from course.labo.tp_notebook import ANSWER_GRADE_ID

from .classroom.paths import course_dirs, find_grader_dir
from .french.french_args import FrenchParser
from .french.system_reason import french_message

__all__ = [
    "ASSIGNMENT",
    "build_carnet",
    "build_submission",
    "carnets",
    "samples",
    "write_all",
    "written_answer",
]

ASSIGNMENT = "oublier"
WRITTEN_GRADE_ID = "documentation"
SAMPLES = Path("grader", "submissions")


def samples(root: Path) -> dict[str, str]:
    """Sample name -> cell text."""
    return {p.stem: p.read_text(encoding="utf-8") for p in sorted((root / SAMPLES).glob("*.py"))}


def written_answer(root: Path, name: str) -> str | None:
    """The written answer of sample `name` (``<name>.md``), None when it has none."""
    path = root / SAMPLES / f"{name}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def carnets(root: Path) -> dict[str, Path]:
    """Notebook-level attack name -> its module."""
    folder = root / SAMPLES / "carnets"
    found = {p.stem: p for p in sorted(folder.glob("*.py")) if not p.stem.startswith("_")}
    if clash := set(found) & set(samples(root)):
        raise ValueError(
            f"Noms en double dans grader/submissions\u00a0: {', '.join(sorted(clash))}."
        )
    return found


def build_carnet(
    release_notebook: Path, root: Path, name: str, canary: Path
) -> nbformat.NotebookNode:
    """The student version with the carnet `name`'s answer, then mutated by its ``carnet``."""
    spec = importlib.util.spec_from_file_location(f"carnet_{name}", carnets(root)[name])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    canary.parent.mkdir(parents=True, exist_ok=True)  # a hostile cell that runs can write it
    answers = samples(root)
    nb = build_submission(release_notebook, answers[module.REPONSE])
    module.carnet(nb, answers, str(canary))
    return nb


def build_submission(
    release_notebook: Path, cell_text: str, written: str | None = None
) -> nbformat.NotebookNode:
    """The student version, its ``oublier`` cell (and written answer, if given) replaced."""
    nb = nbformat.read(release_notebook, as_version=4)
    for grade_id, text in {ANSWER_GRADE_ID: cell_text, WRITTEN_GRADE_ID: written}.items():
        if text is None and grade_id == WRITTEN_GRADE_ID:  # none given: left as released
            continue
        cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
        if len(cells) != 1:
            raise ValueError(
                f"{release_notebook} : une seule cellule « {grade_id} » attendue, "
                f"{len(cells)} trouvée(s)."
            )
        cells[0].source = text.rstrip("\n")
    return nb


def write_all(
    root: Path,
    submitted: Path,
    copies: int = 1,
    only: list[str] | None = None,
    release_dir: Path | None = None,
    overwrite: bool = False,
    canary_dir: Path | None = None,
) -> dict[str, str]:
    """Write every sample and carnet (or `only` these), `copies` times each (``<sample>_<k>``);
    student_id -> sample. A carnet's hostile cells would write into `canary_dir` (``canaris/``
    beside `submitted`). Nothing is written over a submission, unless `overwrite`."""
    release = (release_dir or root / "notebooks") / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    if not release.exists():
        raise FileNotFoundError(f"{release} manque\u00a0: lancez d'abord « make notebooks ».")
    canary_dir = submitted.parent / "canaris" if canary_dir is None else canary_dir
    planned: dict[Path, nbformat.NotebookNode] = {}
    students: dict[str, str] = {}
    answers = samples(root)
    for name in [n for n in [*answers, *carnets(root)] if not only or n in only]:
        for k in range(copies):
            student = name if copies == 1 else f"{name}_{k + 1}"
            if name in answers:
                nb = build_submission(release, answers[name], written_answer(root, name))
            else:
                nb = build_carnet(release, root, name, canary_dir / student)
            planned[submitted / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"] = nb
            students[student] = name
    if (existing := [p for p in planned if p.exists()]) and not overwrite:
        raise FileExistsError(
            f"{len(existing)} rendu(s) existent déjà ({existing[0]}...)\u00a0: rien n'est écrit. "
            "Les rendus d'exemple vont dans un cours à part (make demo-grading)."
        )
    for path, nb in planned.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
    return students


def main(argv: list[str] | None = None) -> int:
    parser = FrenchParser(
        prog="python -m grading.samples",
        description="Écrire les rendus d'exemple (grader/submissions/) dans le dossier des "
        "rendus de nbgrader, comme si des élèves les avaient rendus.",
    )
    folders = {
        "--root": "racine du cours (défaut\u00a0: celle de nbgrader_config.py, trouvé depuis le "
        "dossier courant)",
        "--submitted": "dossier des rendus (défaut\u00a0: celui de nbgrader_config.py)",
    }
    for option, text in folders.items():
        parser.add_argument(option, type=Path, metavar="DOSSIER", help=text)
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        metavar="N",
        help="exemplaires de chaque rendu (défaut\u00a0: 1)",
    )
    parser.add_argument(
        "--remplacer",
        dest="overwrite",
        action="store_true",
        help="remplacer les rendus de même nom déjà présents (sinon\u00a0: refus, rien "
        "n'est écrit)",
    )
    args = parser.parse_args(argv)
    root, submitted, release_dir = args.root, args.submitted, None
    try:
        if root is None or submitted is None:
            dirs = course_dirs(find_grader_dir(root) if root else None)
            root, submitted = root or dirs.root, submitted or dirs.submitted
            release_dir = dirs.release
        students = write_all(
            root, submitted, args.copies, release_dir=release_dir, overwrite=args.overwrite
        )
    except (FileExistsError, FileNotFoundError) as exc:
        parser.fail(french_message(exc))
    print("\n".join([f"{len(students)} rendus écrits dans {submitted}", *students]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
