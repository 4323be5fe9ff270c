"""Her own places (learner_places: ``_scan_folders``, ``_scan_downloads``, ``_scan_lists``,
``_scan_hub``): her folders (a link never followed), the archives received (whose member is
whose: zip_collect's regexp and the folders), the report regenerated without her, a home that is
not a learner's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from erase_scenes import _erase, _setup

pytestmark = [pytest.mark.timeout(300)]


def _received(c, name: str) -> Path:
    """Where an archive `name` of the school's platform lies once downloaded
    (downloaded/oublier/archive/, zip_collect's folder), its folder made."""
    archive = c["grader"] / "downloaded" / "oublier" / "archive" / name
    archive.parent.mkdir(parents=True)
    return archive


@pytest.mark.slow
def test_a_classmates_file_named_after_the_learner_is_kept(petite_classe):
    """ben names a file of his « ana.ipynb » (or the LMS extracted it so): erasing ana deletes
    ben's file (the stem rule of _scan_downloads), and the proof (control cyr) says « Preuve
    faite ». zip_collect itself would give ben/ana.ipynb to ben (named_regexp)."""
    base = petite_classe["grader"] / "downloaded" / "oublier"
    bens = [base / "extracted" / "ben" / "ana.ipynb", base / "archive" / "ben" / "ana.txt"]
    for path in bens:
        path.parent.mkdir(parents=True)
        path.write_text("le travail de ben")
    result = _erase(petite_classe, "ana")
    assert not result.failures  # « Preuve faite »…
    assert [p for p in bens if not p.exists()] == []  # …but ben's files are gone


@pytest.mark.slow
def test_nothing_outside_the_course_is_deleted_through_a_symlinked_folder(petite_classe):
    """The teacher points downloaded/oublier/extracted at a folder of theirs (another class,
    their downloads): rglob follows the link at its root, and erasing ana deletes the teacher's
    files outside the course. The linked folder, which the erasure never walks, is named for her
    to check: never a proof over it."""
    from grading.erase_learner import ErasureError

    outside = petite_classe["tmp"] / "autre-classe"
    (outside / "ana").mkdir(parents=True)
    (outside / "ana" / "bulletin.pdf").write_text("autre classe, autre Ana")
    (outside / "ana.txt").write_text("notes de l'enseignant")
    base = petite_classe["grader"] / "downloaded" / "oublier"
    base.mkdir(parents=True)
    (base / "extracted").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ErasureError, match="extracted — lien vers le dossier"):
        _erase(petite_classe, "ana")
    assert (outside / "ana" / "bulletin.pdf").exists()
    assert (outside / "ana.txt").exists()


@pytest.mark.slow
def test_a_symlinked_submitted_folder_is_named(petite_classe):
    """submitted/ana is a link to where the teacher keeps the copies (another disk): the scan
    skips links (good: nothing outside is deleted), but says nothing either: her copy stays and
    the command says « Preuve faite » with exit status 0. It should at least be named."""
    c = petite_classe
    elsewhere = c["tmp"] / "disque" / "ana"
    (c["grader"] / "submitted" / "ana").rename(elsewhere.parent.mkdir() or elsewhere)
    (c["grader"] / "submitted" / "ana").symlink_to(elsewhere, target_is_directory=True)
    from grading.erase_learner import ErasureError

    with pytest.raises(ErasureError, match="est un lien") as refused:
        _erase(c, "ana")
    assert "submitted/ana" in str(refused.value) and "Rien n'a été effacé" in str(refused.value)
    assert (elsewhere / "oublier" / "oublier.ipynb").exists()  # the link is not followed
    assert (c["grader"] / "submitted" / "ben").exists()


@pytest.mark.slow
def test_a_home_of_someone_who_is_not_a_learner_is_kept(petite_classe):
    """A careless teacher types the id of the teaching assistant (« tom »: on the hub, not in the
    roster, the gradebook nor submitted/) with HOMES=/home CONFIRMER=1: his home is deleted (as
    his hub account would be with HUB_URL): nothing checks that the id is a learner's."""

    from grading.erase_learner import Setup, erase

    c = petite_classe
    homes = c["tmp"] / "home"
    (homes / "tom").mkdir(parents=True)
    (homes / "tom" / "preparation.ipynb").write_text("le cours de l'assistant")
    if os.geteuid() == 0:  # a home owned by root is refused: give it to a non-root owner
        os.chown(homes / "tom", 65534, 65534)
    setup = Setup(grader_dir=c["grader"], roster=c["roster"], exchange=c["exchange"], homes=homes)
    try:
        erase("tom", setup, confirm=True, control="cyr")
    except Exception:  # noqa: BLE001 — refusing is fine; deleting is not
        pass
    assert (homes / "tom" / "preparation.ipynb").exists(), "dossier personnel de tom effacé"


@pytest.mark.slow
def test_her_members_one_folder_deeper_in_an_archive_are_erased(petite_classe):
    """An ENT archive that puts each copy one folder deeper (ana/oublier/oublier.ipynb, a draft
    in ana/brouillon/): named_regexp reads the student as « oublier » / « brouillon », so her
    members are not hers for the scan; the archive keeps her notebooks while the command says
    « Preuve faite » (zip_collect skips those members: they stay in the archive)."""
    import zipfile

    c = petite_classe
    archive = _received(c, "ent.zip")
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ana/oublier/oublier.ipynb", b"copie d'Ana Martin")
        zf.writestr("ana/brouillon/essai.ipynb", b"brouillon d'Ana Martin")
        zf.writestr("ben/oublier/oublier.ipynb", b"copie de ben")
    result = _erase(c, "ana")
    assert not result.failures
    with zipfile.ZipFile(archive) as zf:
        left = [n for n in zf.namelist() if n.startswith("ana/")]
    assert left == [], f"membres d'ana laissés dans {archive.name}, « Preuve faite »"


@pytest.mark.slow
def test_an_ambiguous_archive_member_is_named_not_guessed(petite_classe):
    """« ben/ana/oublier.ipynb »: in ben's folder, but zip_collect's regexp gives it to ana.
    Erasing either must not guess (deleting ben's file, or leaving ana's copy to be collected
    again): the member is named and nothing is erased."""
    import zipfile

    from grading.erase_learner import ErasureError

    c = petite_classe
    archive = _received(c, "lot.zip")
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ben/ana/oublier.ipynb", b"copie ?")
        zf.writestr("cyr/oublier.ipynb", b"copie de cyr")
    for sid in ("ana", "ben"):
        with pytest.raises(ErasureError, match="Membre ambigu.*ben/ana/oublier.ipynb"):
            _erase(c, sid)
    assert (c["grader"] / "submitted" / "ana").is_dir() and (
        c["grader"] / "submitted" / "ben"
    ).is_dir()


def test_hand_added_columns_and_rows_of_a_report_survive_its_regeneration(tmp_path):
    """The teacher added « oral » and « remarque » columns and a « moyenne » row to notes.csv in
    a spreadsheet (saved back in Windows-1252 with `;`); the erasure regenerates the file from
    the gradebook: their columns come back row by row, ben's row goes with what was written in
    it, a hand-edited score is named as replaced, and so is a row the gradebook no longer has."""
    from grading.classroom.kept_columns import read_table, restore_hand_edits

    notes = tmp_path / "notes.csv"
    notes.write_bytes(
        (
            "student_id;score;oral;remarque\r\n"
            "ana;8;15;très bien\r\n"
            "ben;6;12;ben.durand@exemple.fr à relancer\r\n"
            "cyr;4;;\r\n"
            "dou;3;9;partie\r\n"
            ";6;12;moyenne\r\n"
        ).encode("cp1252")
    )
    before = read_table(notes)
    # what the generator writes back (UTF-8, `,`, its own line ends), ana's score regraded
    notes.write_text("student_id,score\nana,8\ncyr,5\n", encoding="utf-8")
    said = restore_hand_edits(notes, before, "ben")
    assert notes.read_text(encoding="utf-8") == (
        "student_id,score,oral,remarque\nana,8,15,très bien\ncyr,5,,\n,6,12,moyenne\n"
    )
    assert b"ben" not in notes.read_bytes()
    assert any("gardée(s) «\u00a0oral\u00a0», «\u00a0remarque\u00a0»" in n for n in said), said
    assert any("non reprise(s)\u00a0: «\u00a0dou\u00a0»" in n for n in said), said
    assert any("colonne «\u00a0score\u00a0»" in n and "«\u00a0cyr\u00a0»" in n for n in said)
    assert not any("ana" in n for n in said), said
    # nothing added by hand: the generated file is left as written, nothing said
    notes.write_text("student_id,score\nana,8\n", encoding="utf-8")
    plain = read_table(notes)
    assert restore_hand_edits(notes, plain, "ben") == []
    assert notes.read_text(encoding="utf-8") == "student_id,score\nana,8\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "card",
    ['["ana"]', '"ana"', "42", None, "lzma", '{"carnet_de_notes": {"identifiant": "ana"}}'],
)
def test_an_export_whose_card_cannot_say_whose_it_is_is_named_never_a_traceback(
    petite_classe, card
):
    """Shrink-privacy's read (learner_places ``_export_of``): an export of her data
    (``exports/donnees-ana-….zip``) whose ``eleve.json`` holds JSON that is not an object (a
    damaged or hand-edited copy) stopped the erasure on ``AttributeError: 'list' object has no
    attribute 'get'``, a traceback in a teacher's terminal; one whose card does not name her
    (``42``) was passed over and outlived a « Preuve faite »; a truncated one (None here) was
    named only as a file the command could not read; one whose compressed card is damaged
    (« lzma ») stopped it on ``lzma.LZMAError``. Named as an export that may be hers now.
    Control: a card of hers as the export writes it is erased (the last case)."""
    import zipfile

    from grading.erase_learner import ErasureError
    from grading.privacy.learner_places import scan

    c = petite_classe
    exports = c["grader"] / "exports"
    exports.mkdir(exist_ok=True)
    export = exports / "donnees-ana-20261206-010101.zip"
    if card is None:  # a zip cut short (a full disk, a copy stopped)
        with zipfile.ZipFile(export, "w") as zf:
            zf.writestr("eleve.json", '{"carnet_de_notes": {"identifiant": "ana"}}' * 50)
        export.write_bytes(export.read_bytes()[:60])
    elif card == "lzma":  # the card's compressed stream damaged past its header
        with zipfile.ZipFile(export, "w", zipfile.ZIP_LZMA) as zf:
            zf.writestr("eleve.json", '{"carnet_de_notes": {"identifiant": "ana"}}' * 50)
        data = bytearray(export.read_bytes())
        data[60:76] = b"\xff" * 16
        export.write_bytes(bytes(data))
    else:
        with zipfile.ZipFile(export, "w") as zf:
            zf.writestr("eleve.json", card)
    found = {(f.where, f.kind) for f in scan("ana", _setup(c)).found}
    if card and card.startswith("{"):  # control: hers, erased
        assert (str(export), "export de ses données") in found, found
        _erase(c, "ana")
        assert not export.exists()
        return
    assert (str(export), "export à son nom, illisible") in found, found
    with pytest.raises(ErasureError):
        _erase(c, "ana")
    assert export.exists()


@pytest.mark.slow
def test_a_classmates_trap_folder_is_named_for_her_to_check_never_a_recursion_error(
    petite_classe,
):
    """Attack, stop 57: 1,100 nested folders in a classmate's submission made the erasure's
    own recursive walk fail (RecursionError after 25 s), so no learner could be erased. Past
    MAX_DEPTH levels the folder is named, unread, for the teacher to check by hand: never a
    proof over it, nothing erased until it is dealt with."""
    import subprocess

    from grading.classroom.paths import TOO_DEEP

    folder = petite_classe["grader"] / "submitted" / "ben" / "oublier"
    inner = folder / "/".join(["a"] * 1100)
    subprocess.run(["mkdir", "-p", str(inner)], check=True)  # os.makedirs recurses
    from grading.erase_learner import ErasureError

    try:
        with pytest.raises(ErasureError) as refused:
            _erase(petite_classe, "ana")
        said = str(refused.value)
        assert "1 endroit(s)" in said and "non lu par cette commande" in said, said
        assert "submitted/ben/oublier/a/a/a/" in said, said
        assert f"{TOO_DEEP}, non parcouru" in said, said
    finally:
        subprocess.run(["rm", "-rf", str(folder / "a")], check=True)


@pytest.mark.slow
def test_a_path_too_long_for_the_system_is_named_never_a_crash(petite_classe):
    """Third teacher's attack, stop 57: 17 folders of 250 characters in a classmate's
    submission made every erasure, even a dry run, stop on « OSError: File name too long ».
    The folder is named, unread, for the teacher to check by hand."""
    import subprocess

    from grading.erase_learner import ErasureError

    folder = petite_classe["grader"] / "submitted" / "ben" / "oublier"
    fd = os.open(folder, os.O_RDONLY)
    for _ in range(17):
        os.mkdir("x" * 250, dir_fd=fd)
        inner = os.open("x" * 250, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)
    try:
        with pytest.raises(ErasureError) as refused:
            _erase(petite_classe, "ana")
        said = str(refused.value)
        assert "non lu par cette commande" in said and "x" * 250 in said, said
    finally:
        subprocess.run(["rm", "-rf", str(folder / ("x" * 250))], check=True)
