"""`make help` lists every target of the Makefile and grader/grader.mk, from its `##` comment."""

from __future__ import annotations

import re
import subprocess

from helpers import REPO

MAKEFILES = (REPO / "Makefile", REPO / "grader" / "grader.mk")


def phony_targets() -> set[str]:
    """The targets each file declares .PHONY (the ones a person types)."""
    names: set[str] = set()
    for path in MAKEFILES:
        text = path.read_text(encoding="utf-8").replace("\\\n", " ")
        for line in re.findall(r"^\.PHONY:(.*)$", text, flags=re.M):
            names.update(line.split())
    return names


def defined_targets() -> set[str]:
    return {
        name
        for path in MAKEFILES
        for name in re.findall(r"^([a-z][a-z-]*):", path.read_text(encoding="utf-8"), flags=re.M)
    }


def _help_text(folder) -> str:
    """What `make help` prints in `folder`, started as a user starts it."""
    return subprocess.run(
        ["make", "-s", "--no-print-directory", "help"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_make_help_lists_every_target_with_what_it_does():
    out = _help_text(REPO)
    listed = re.findall(r"^make ([a-z][a-z-]*)\b(.*)$", out, flags=re.M)
    names = [name for name, _ in listed]
    assert len(names) == len(set(names)), names
    assert set(names) == phony_targets()
    assert set(names) <= defined_targets()
    # each with a description, not only its name
    assert all(":" in rest and rest.split(":", 1)[1].strip() for _, rest in listed), listed


def _help(folder) -> list[tuple[str, str]]:
    """(target, what it does, its continuation lines joined) of each `make help` entry."""
    out = _help_text(folder)
    return [
        (m[1], m[2].replace("\n    ", " "))
        for m in re.finditer(r"^make ([a-z][a-z-]*)(.*(?:\n    .*)*)", out, flags=re.M)
    ]


def test_make_help_is_french_for_the_course_and_the_learners_package(tmp_path):
    """Learner's walk, stop 57: a dozen of the course's entries were English (setup, lock,
    test-fast, clean…), and the learner package's help lost its indentation. Every entry of
    both is French, with French typography, its continuation lines indented."""
    import shutil

    from french_text import check_text

    english = re.compile(r"\b(the|and|with|every|for|to|of|from|what|its|it|is|an)\b")

    package = tmp_path / "paquet"
    package.mkdir()
    shutil.copy(REPO / "grader" / "grading" / "student_package.mk", package / "Makefile")
    for folder, expected in ((REPO, phony_targets()), (package, {"help", "setup", "lab"})):
        entries = _help(folder)
        assert expected <= {name for name, _ in entries}
        for name, text in entries:
            assert not english.findall(text.replace("`", " ")), (name, text)
            assert not check_text(text, strict=True), (name, text, check_text(text, strict=True))
    recommencer = dict(_help(package))["recommencer"]
    assert "notebooks/lecons et sa progression" in recommencer  # its second line, joined


def test_every_message_a_recipe_echoes_has_french_typography():
    """Teacher's walk, stop 60: `make donnees-eleve` without ID answered « Donnez l'identifiant
    : … » with an ordinary space (so did `make oublier-eleve` and `make restauration` without
    their variable), where `make help` and the tools' messages have U+00A0: the refusals the
    Makefiles print themselves are checked as their `##` lines are."""
    from french_text import check_text

    makefiles = (*MAKEFILES, REPO / "grader" / "grading" / "student_package.mk")
    found = []
    for path in makefiles:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for said in re.findall(r'echo "([^"$]*)', line):
                if check_text(said, strict=False):
                    found.append(f"{path.name}:{number}: {said}")
    assert not found, "\n".join(found)
