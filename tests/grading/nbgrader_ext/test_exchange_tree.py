"""How the collect walks a copy of the exchange before taking it (``exchange.ownership_problem``):
a copy is the student's, so its walk never leaves it. A link named like a copy and pointing at
``/`` cost the instructor's collect a walk of the whole machine (found by the shrink-exchange
helper); a folder swapped for such a link during the walk is not entered either."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from grading.nbgrader_ext.exchange import ownership_problem

ME = "root" if os.getuid() == 0 else None
SCANS: list[object] = []
_RECORDING: list[bool] = []


def _audit(event: str, args: tuple) -> None:
    if _RECORDING and event in ("os.scandir", "os.listdir"):
        SCANS.append(args[0])


sys.addaudithook(_audit)  # stays for the worker's life: it records only inside `_listings`


def _listings(path: Path, student: str) -> tuple[str | None, list[object]]:
    """What `ownership_problem` says of `path`, and the folders it listed on the way."""
    SCANS.clear()
    _RECORDING.append(True)
    try:
        said = ownership_problem(path, student, check_owner=False)
    finally:
        _RECORDING.clear()
    return said, list(SCANS)


def _big_tree(root: Path) -> Path:
    for k in range(30):
        (root / f"d{k}" / "sous").mkdir(parents=True)
        (root / f"d{k}" / "sous" / "f.txt").write_text("x")
    return root


def test_a_link_named_like_a_copy_is_named_and_never_walked(tmp_path: Path) -> None:
    target = _big_tree(tmp_path / "ailleurs")
    link = tmp_path / "bob+oublier+2025-03-14 10:00:00.000000 UTC+abc"
    link.symlink_to(target)
    said, listed = _listings(link, "bob")
    assert said == "le dossier est un lien symbolique"
    assert listed == []


def test_a_link_to_the_root_of_the_machine_is_named_at_once(tmp_path: Path) -> None:
    link = tmp_path / "bob+oublier+2025-03-14 10:00:00.000000 UTC+abc"
    link.symlink_to("/")
    said, listed = _listings(link, "bob")
    assert said == "le dossier est un lien symbolique"
    assert listed == []


def test_a_link_inside_a_copy_is_named_and_not_entered(tmp_path: Path) -> None:
    target = _big_tree(tmp_path / "ailleurs")
    copy = tmp_path / "copie"
    (copy / "oublier").mkdir(parents=True)
    (copy / "oublier" / "oublier.ipynb").write_text("{}")
    (copy / "oublier" / "zz").symlink_to(target)
    said, listed = _listings(copy, "bob")
    assert said == "«\u00a0oublier/zz\u00a0» est un lien symbolique"
    assert len(listed) == 2  # the copy and its folder oublier/, never the link's target


@pytest.mark.skipif(ME is None, reason="needs a user with a passwd entry: root in the suite")
def test_a_copy_of_her_own_is_taken_and_another_s_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "copie"
    (copy / "a" / "b").mkdir(parents=True)
    (copy / "a" / "b" / "oublier.ipynb").write_text("{}")
    assert ownership_problem(copy, ME) is None
    said = ownership_problem(copy, "bob")
    assert said == f"le dossier appartient à «\u00a0{ME}\u00a0», pas à «\u00a0bob\u00a0»"


def test_what_is_neither_a_folder_nor_a_file_is_named_first_in_name_order(tmp_path: Path) -> None:
    copy = tmp_path / "copie"
    (copy / "b").mkdir(parents=True)
    os.mkfifo(copy / "b" / "tube")
    os.mkfifo(copy / "a-tube")
    said, _ = _listings(copy, "bob")
    assert said == "«\u00a0a-tube\u00a0» n'est ni un dossier ni un fichier"


def test_a_folder_swapped_for_a_link_during_the_walk_is_not_entered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The student wins the race between the check of her folder and its listing: the folder the
    walk opens is no longer the one it checked, so it is not listed."""
    target = _big_tree(tmp_path / "ailleurs")
    copy = tmp_path / "copie"
    (copy / "sous").mkdir(parents=True)
    real_open = os.open

    def swapping_open(path, flags, *args, **kwargs):
        if str(path) in ("sous", str(copy / "sous")) and (copy / "sous").is_dir():
            (copy / "sous").rmdir()
            (copy / "sous").symlink_to(target)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", swapping_open)
    said, listed = _listings(copy, "bob")
    assert len(listed) <= 1, listed  # the copy itself, never the target's 30 folders
    assert said in (None, "«\u00a0sous\u00a0» est un lien symbolique") or "illisible" in said


def test_a_copy_of_more_files_than_a_submission_can_hold_is_named_without_listing_them_all(
    tmp_path: Path,
) -> None:
    """200,000 empty files in one copy cost its check 12 s (found by the attack-collect helper): a
    copy beyond 10,000 entries is named at once, set aside as any other."""
    copy = tmp_path / "copie"
    (copy / "oublier").mkdir(parents=True)
    for k in range(10_001):
        (copy / "oublier" / f"f{k}").touch()
    said, _ = _listings(copy, "bob")
    assert said == "le dossier contient plus de 10\u00a0000 fichiers et dossiers"


def test_a_copy_32_folders_deep_is_named(tmp_path: Path) -> None:
    copy = tmp_path / "copie"
    deep = copy.joinpath(*["a"] * 33)
    deep.mkdir(parents=True)
    said, _ = _listings(copy, "bob")
    assert said == "le dossier a plus de 32 niveaux de sous-dossiers"
    shallow = tmp_path / "autre"
    shallow.joinpath(*["a"] * 31).mkdir(parents=True)
    assert _listings(shallow, "bob")[0] is None
