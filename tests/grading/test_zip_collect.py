"""Submissions gathered outside a hub (`make zip-collect`, ``grading.zip_collect``): a zip of
several students (one folder per student, as the grading guide says) goes into
grader/submitted/; one bad member is skipped and named while everyone else is collected; ids are
read in NFC and matched against the registered class, never guessed; a later archive adds its
new students and newer copies and loses nothing already collected (issue 18 point 8, issue 22
points 1 and 3)."""

from __future__ import annotations

import unicodedata
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading import zip_collect
from grading.french.french_format import LISTED
from grading.samples import build_submission
from grading_course import grading, register
from nbgrader.api import Gradebook

from course.labo.tp_notebook import ANSWER_GRADE_ID

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

Q = "\u00a0"


def _notebook(course: Path, sample: str) -> str:
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    text = (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8")
    return nbformat.writes(build_submission(release, text))


def _zip(path: Path, members: dict[str, str], date=(2025, 3, 14, 17, 0, 0)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=date), text)


def _answer(course: Path, student: str) -> str:
    path = course / "submitted" / student / "oublier" / "oublier.ipynb"
    cell = next(
        c
        for c in nbformat.read(path, as_version=4).cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER_GRADE_ID
    )
    return cell.source


def _sample(course: Path, sample: str) -> str:
    return (course / "submissions" / f"{sample}.py").read_text(encoding="utf-8").rstrip("\n")


def test_zip_with_a_traversal_member_collects_everyone_else(course):
    archive = course / "downloaded" / "oublier" / "archive"
    answers = {"ana": "complete_vacuum", "ben_2": "graine", "jean.marc": "ebauche"}
    members = {f"rendus/{s}/oublier.ipynb": _notebook(course, a) for s, a in answers.items()}
    members["rendus/../../../evade/oublier.ipynb"] = _notebook(course, "ebauche")
    members["__MACOSX/rendus/ana/._oublier.ipynb"] = "\x00\x05\x16\x07"
    # no class list: a new id is admitted by the hub's rule (grader/hub/roster.py), no space
    members["rendus/jean marc/oublier.ipynb"] = _notebook(course, "ebauche")
    _zip(archive / "rendus-ent.zip", members)
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"rendus/../../../evade/oublier.ipynb{Q}: chemin qui sort du dossier" in out, out
    assert f"oublier.ipynb{Q}: identifiant invalide «{Q}jean marc{Q}»" in out, out
    for student, sample in answers.items():
        assert _answer(course, student) == _sample(course, sample), student
    root = course.parent.parent
    assert not list(root.rglob("evade")), "un membre est sorti du dossier"
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(answers)


def test_ids_matched_not_guessed(course):
    register(course, "chloé", "zoé", "lucas", "ana")
    nfd = unicodedata.normalize("NFD", "chloé")
    assert nfd != "chloé"
    archive = course / "downloaded" / "oublier" / "archive"
    _zip(
        archive / "mac.zip",
        {
            f"rendus/{nfd}/oublier.ipynb": _notebook(course, "complete_vacuum"),
            "rendus/zoe/oublier.ipynb": _notebook(course, "graine"),
            "rendus/lucas/oublier (1).ipynb": _notebook(course, "graine"),
            "rendus/ana/oublier.ipynb": _notebook(course, "ebauche"),
        },
    )
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ana", "chloé"]
    assert _answer(course, "chloé") == _sample(course, "complete_vacuum")
    assert (
        f"«{Q}zoe{Q}» n'est pas un élève inscrit{Q}; le plus proche inscrit est «{Q}zoé{Q}»" in out
    )
    assert f"«{Q}oublier (1).ipynb{Q}» n'est pas un notebook" in out, out
    assert f"attendu{Q}: «{Q}oublier.ipynb{Q}»" in out, out


def test_later_archive_adds_and_keeps_what_was_collected(course):
    archive = course / "downloaded" / "oublier" / "archive"
    first = {
        "rendus/ana/oublier.ipynb": _notebook(course, "ebauche"),
        "rendus/ben/oublier.ipynb": _notebook(course, "graine"),
    }
    _zip(archive / "premier.zip", first, date=(2025, 3, 14, 17, 0, 0))
    proc = grading(course, "zip_collect", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the instructor writes ben's submission time by hand (he handed it in late, by e-mail)
    stamp = course / "submitted" / "ben" / "oublier" / "timestamp.txt"
    stamp.write_text("2025-03-16 06:00:00")
    ben_before = (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").read_bytes()

    # the LMS's second download holds everyone: ben unchanged, ana's newer copy, cyr late
    _zip(archive / "premier.zip", first, date=(2025, 3, 14, 17, 0, 0))
    second = {
        "rendus/ana/oublier.ipynb": _notebook(course, "complete_vacuum"),
        "rendus/ben/oublier.ipynb": first["rendus/ben/oublier.ipynb"],
        "rendus/cyr/oublier.ipynb": _notebook(course, "graine"),
    }
    _zip(archive / "second.zip", second, date=(2025, 3, 15, 9, 0, 0))
    again = grading(course, "zip_collect", "oublier")
    out = again.stdout + again.stderr
    assert again.returncode == 0, out
    assert stamp.read_text() == "2025-03-16 06:00:00"
    assert (course / "submitted" / "ben" / "oublier" / "oublier.ipynb").read_bytes() == ben_before
    assert _answer(course, "cyr") == _sample(course, "graine")
    assert _answer(course, "ana") == _sample(course, "complete_vacuum")
    (kept,) = (course / "downloaded" / "oublier" / "remplaces" / "ana").iterdir()
    assert "VOTRE CODE ICI" in (kept / "oublier.ipynb").read_text() or (
        (kept / "oublier.ipynb").read_text() == first["rendus/ana/oublier.ipynb"]
    )
    assert f"Collectés{Q}: cyr" in out and "Remplacés (ancienne copie gardée)" in out, out

    # an older copy of ana (dated before the one collected) never replaces it
    _zip(
        archive / "vieux.zip",
        {"rendus/ana/oublier.ipynb": _notebook(course, "ebauche")},
        date=(2025, 3, 1, 9, 0, 0),
    )
    third = grading(course, "zip_collect", "oublier")
    assert third.returncode == 0, third.stdout + third.stderr
    assert _answer(course, "ana") == _sample(course, "complete_vacuum")


# --- identity and dates (issue 32 point 9, issue 33 point 5) -----------------------------------

PARIS = "Europe/Paris"


def _zip_dated(path: Path, members: dict[str, tuple[str, tuple | None, float | None]]) -> None:
    """A zip whose members each carry a DOS date (read in the course's zone), or none (the zip
    format's 1980), and optionally the extended timestamp (UTC) an LMS may write."""
    import struct

    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        for name, (text, dos, exact) in members.items():
            info = zipfile.ZipInfo(name, date_time=dos or (1980, 1, 1, 0, 0, 0))
            if exact is not None:
                info.extra = struct.pack("<HHBl", 0x5455, 5, 1, int(exact))
            zf.writestr(info, text)


def _stamp(course: Path, student: str) -> str | None:
    path = course / "submitted" / student / "oublier" / "timestamp.txt"
    return path.read_text() if path.exists() else None


def _utc(text: str) -> float:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(PARIS)).timestamp()


def test_a_member_naming_another_student_is_set_aside(course):
    register(course, "alice", "bob")
    archive = course / "downloaded" / "oublier" / "archive"
    spring = (2025, 3, 14, 17, 0, 0)
    _zip_dated(
        archive / "classe.zip",
        {"rendus/alice/oublier.ipynb": (_notebook(course, "ebauche"), spring, None)},
    )
    first = grading(course, "zip_collect", "oublier")
    assert first.returncode == 0, first.stdout + first.stderr
    alice_first = (course / "submitted" / "alice" / "oublier" / "oublier.ipynb").read_bytes()

    # bob's own archive (his e-mail) and bob's folder in a class export both hold "alice"'s copy
    # dated 2030: neither is alice's, whatever the folder says
    future = (2030, 1, 1, 12, 0, 0)
    forged = _notebook(course, "complete_vacuum")
    _zip_dated(
        archive / "bob.zip",
        {
            "alice/oublier.ipynb": (forged, future, None),
            "bob/oublier.ipynb": (_notebook(course, "graine"), spring, None),
        },
    )
    _zip_dated(archive / "export2.zip", {"rendus/bob/alice/oublier.ipynb": (forged, future, None)})
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert (
        course / "submitted" / "alice" / "oublier" / "oublier.ipynb"
    ).read_bytes() == alice_first
    for origin in (
        f"bob.zip{Q}: alice/oublier.ipynb",
        f"export2.zip{Q}: rendus/bob/alice/oublier.ipynb",
    ):
        assert (
            f"{origin}{Q}: notebook de «{Q}alice{Q}» dans l'archive ou le dossier de "
            f"«{Q}bob{Q}»{Q}: mis de côté"
        ) in out, out
    # bob's own copy is collected, but his archive's dates are his computer's: no time
    assert _answer(course, "bob") == _sample(course, "graine")
    assert _stamp(course, "bob") is None
    assert f"bob{Q}: archive de l'élève «{Q}bob.zip{Q}»{Q}: ses dates ne prouvent rien" in out, out

    # alice's later real copy, in the next class export, still replaces her first one
    _zip_dated(
        archive / "classe2.zip",
        {"rendus/alice/oublier.ipynb": (_notebook(course, "graine"), (2025, 3, 15, 9, 0, 0), None)},
    )
    (archive / "bob.zip").unlink()
    (archive / "export2.zip").unlink()
    again = grading(course, "zip_collect", "oublier", "--sans-heure=retard")
    out = again.stdout + again.stderr
    assert again.returncode == 0, out
    assert _answer(course, "alice") == _sample(course, "graine")
    assert _stamp(course, "alice") == "2025-03-15 08:00:00.000000 UTC"


def test_lms_dates_become_submission_times_and_the_rest_follow_the_rule(course):
    register(course, "ana", "ben", "cyr", "dou", "eve", "fay")
    # the due date, set as `nbgrader db assignment add oublier --duedate=…` sets it (its one
    # gradebook call, which parses the zone), in this process: the set-up, not what is shown
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "memoire-tuteur") as gb:
        gb.update_or_create_assignment("oublier", duedate=f"2025-03-14 18:00:00 {PARIS}")
    archive = course / "downloaded" / "oublier" / "archive"
    nb = _notebook(course, "graine")
    _zip_dated(
        archive / "ent.zip",
        {
            "ana/oublier.ipynb": (nb, (2025, 3, 14, 17, 30, 0), None),  # DOS date, Paris
            # the LMS's extended timestamp (UTC) is exact: a day and a half late
            "ben/oublier.ipynb": (nb, (2025, 3, 16, 7, 0, 0), _utc("2025-03-16 07:00:00")),
            "cyr/oublier.ipynb": (nb, (2031, 1, 1, 0, 0, 0), None),  # after the archive: untrue
            "dou/oublier.ipynb": (nb, None, None),  # no date at all
        },
    )
    _zip_dated(archive / "eve.zip", {"oublier.ipynb": (nb, (2025, 3, 1, 8, 0, 0), None)})
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # three copies without a time and no rule chosen
    assert _stamp(course, "ana") == "2025-03-14 16:30:00.000000 UTC"
    assert _stamp(course, "ben") == "2025-03-16 06:00:00.000000 UTC"
    assert [_stamp(course, s) for s in ("cyr", "dou", "eve")] == [None, None, None]
    assert f"ana{Q}: 14/03/2025 17:30, date du fichier dans l'export «{Q}ent.zip{Q}»" in out, out
    assert "3 copie(s) collectée(s) sans heure de rendu connue" in out, out
    assert "postérieure à l'archive elle-même" in out and "sans date pour ce fichier" in out, out
    assert "make zip-collect SANS_HEURE=a-l-heure" in out and "SANS_HEURE=retard" in out, out

    # the teacher chooses: the same rule for the three, the LMS-dated copies untouched
    chosen = grading(course, "zip_collect", "oublier", "--sans-heure=a-l-heure")
    out = chosen.stdout + chosen.stderr
    assert chosen.returncode == 0, out
    assert [_stamp(course, s) for s in ("cyr", "dou", "eve")] == [
        "2025-03-14 17:00:00.000000 UTC"
    ] * 3
    assert _stamp(course, "ben") == "2025-03-16 06:00:00.000000 UTC"
    dating = course / "submitted" / "eve" / "oublier" / "heure-de-rendu.txt"
    assert "SANS_HEURE=a-l-heure" in dating.read_text(), dating.read_text()
    # one rule for the class: another one later is refused, none given applies the same
    other = grading(course, "zip_collect", "oublier", "--sans-heure=retard")
    assert other.returncode == 2, other.stdout + other.stderr
    assert "SANS_HEURE=retard refusé" in other.stderr and "SANS_HEURE=a-l-heure" in other.stderr
    assert _stamp(course, "cyr") == "2025-03-14 17:00:00.000000 UTC"
    _zip_dated(archive / "fay.zip", {"oublier.ipynb": (nb, (2025, 3, 2, 8, 0, 0), None)})
    later = grading(course, "zip_collect", "oublier")
    assert later.returncode == 0, later.stdout + later.stderr
    assert _stamp(course, "fay") == "2025-03-14 17:00:00.000000 UTC"

    # graded: ben loses 2 points (two days started), the others are on time; the report says how
    # each copy was dated
    graded = grading(course, "autograde", "oublier")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    from grading.report import _row_lateness, class_table

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_submission("oublier", "ben").late_submission_penalty == 2
        assert gb.find_submission("oublier", "ana").late_submission_penalty in (None, 0)
        df = class_table(gb, "oublier", course / "autograded")
    late = {r["student_id"]: _row_lateness(r) for _, r in df.iterrows()}
    assert late["ana"] == f"à l'heure — heure{Q}: date du fichier dans l'export «{Q}ent.zip{Q}»"
    assert late["ben"].startswith("1 j 13 h (−2") and "ent.zip" in late["ben"], late["ben"]
    assert late["eve"].startswith("à l'heure — heure") and "SANS_HEURE=a-l-heure" in late["eve"]


def test_unknown_rule_is_refused(course):
    (course / "downloaded" / "oublier" / "archive").mkdir(parents=True)
    proc = grading(course, "zip_collect", "oublier", "--sans-heure=peut-etre")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "a-l-heure" in proc.stderr and "retard" in proc.stderr, proc.stderr
    # called from Python: refused before any copy is written (ana's copy is there to collect)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_student("ana")
    release = course.parent / "notebooks" / "oublier" / "oublier.ipynb"
    copy = course / "downloaded" / "oublier" / "archive" / "ana" / "oublier.ipynb"
    copy.parent.mkdir()
    copy.write_bytes(release.read_bytes())
    with pytest.raises(ValueError, match="SANS_HEURE=peut-etre\u00a0: règle inconnue"):
        zip_collect.zip_collect("oublier", course, "peut-etre")
    assert not (course / "submitted" / "ana").exists()


@pytest.mark.parametrize("moment", [1_741_971_600.0, None], ids=["datee", "sans-heure"])
def test_the_explanation_never_outruns_the_time_it_explains(tmp_path, moment):
    """``timestamp.txt`` (the time nbgrader reads) is written, or removed for a copy without a
    time, before ``heure-de-rendu.txt`` says how it was found: when that step fails (here a
    folder in its place), the explanation is still the one of the time left there."""
    (tmp_path / "timestamp.txt").mkdir()  # neither written nor removed
    (tmp_path / "timestamp.txt" / "x").write_text("")
    explanation = tmp_path / zip_collect.DATING_FILE
    explanation.write_text("ancienne explication\n", encoding="utf-8")

    class Report:
        dated: list[str] = []
        undated: list[str] = []

    with pytest.raises(OSError):
        zip_collect._stamp(tmp_path, moment, "date du fichier dans l'export", "ben", Report)
    assert explanation.read_text(encoding="utf-8") == "ancienne explication\n"
    assert Report.dated == Report.undated == []


def test_a_damaged_gradebook_is_refused_in_french_before_any_copy(course):
    """Found in review (before the one gradebook reader too; test_paths' « every command »
    leaves zip-collect out): a truncated gradebook stops ``make zip-collect`` on a Python
    traceback (now the reader's French sentence inside a GradebookError traceback, before it an
    sqlalche.me address), never the French refusal the other class commands give. The
    control: the same archive with the gradebook whole is collected."""
    register(course, "ana")
    archive = course / "downloaded" / "oublier" / "archive"
    _zip(archive / "classe.zip", {"ana/oublier.ipynb": _notebook(course, "graine")})
    db = course / "gradebook.db"
    whole = db.read_bytes()
    with open(db, "r+b") as file:
        file.truncate(len(whole) * 2 // 5)
    damaged = grading(course, "zip_collect", "oublier", "--sans-heure=a-l-heure")
    said = damaged.stdout + damaged.stderr
    db.write_bytes(whole)
    collected = grading(course, "zip_collect", "oublier", "--sans-heure=a-l-heure")
    assert collected.returncode == 0, collected.stdout + collected.stderr  # the control
    assert "Traceback" not in said, said
    assert damaged.returncode == 2, said
    assert "le carnet de notes est illisible" in damaged.stderr, said


def test_zip_collect_with_a_lost_gradebook_makes_no_empty_one(course):
    """Review3 (f60fa71: « make collect no longer creates an empty gradebook »): zip-collect
    still does, with ``SANS_HEURE=a-l-heure``: its ``_due`` opens nbgrader's
    ``Gradebook(db_url)`` for the due date, which creates the tables when the file is missing.
    After the gradebook was lost, ``make zip-collect SANS_HEURE=a-l-heure`` leaves an empty
    gradebook.db, and ``make grade`` says « inscrivez d'abord la classe » instead of
    « introuvable ; restaurez la dernière sauvegarde ». Control: without SANS_HEURE, the same
    collect leaves no gradebook."""
    archive = course / "downloaded" / "oublier" / "archive"
    _zip(archive / "classe.zip", {"ana/oublier.ipynb": _notebook(course, "graine")})
    db = course / "gradebook.db"
    db.unlink()  # lost
    plain = grading(course, "zip_collect", "oublier")
    assert not db.exists(), plain.stdout + plain.stderr  # the control
    timed = grading(course, "zip_collect", "oublier", "--sans-heure=a-l-heure")
    said = timed.stdout + timed.stderr
    assert not db.exists(), f"make zip-collect a créé un carnet de notes vide\n{said}"


def test_an_archive_of_many_bad_members_is_summed_up_not_printed_whole(course):
    """Attack, stop 57: one archive of 200,000 empty members printed 200,000 lines, one per
    member. Each list shows its first LISTED items and says how many more, and where the whole
    summary is written (rapport/zip-collect.log); the good member is collected (the control)."""
    archive = course / "downloaded" / "oublier" / "archive"
    members = {f"../evade{k}/oublier.ipynb": "{}" for k in range(LISTED + 70)}
    members["rendus/ana/oublier.ipynb"] = _notebook(course, "complete_vacuum")
    _zip(archive / "rendus-ent.zip", members)
    proc = grading(course, "zip_collect", "oublier")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert out.count("chemin qui sort du dossier") == LISTED, out
    whole = course / "rapport" / "zip-collect.log"
    assert f"  … et 70 autre(s){Q}: liste complète dans {whole}" in out, out
    assert whole.read_text(encoding="utf-8").count("chemin qui sort du dossier") == len(members) - 1
    assert _answer(course, "ana") == _sample(course, "complete_vacuum")


def test_archives_downloaded_readable_by_all_are_made_private(course):
    """The README's step: the teacher puts the ENT's zip in grader/downloaded/oublier/archive/,
    made from a shell at umask 022 (0755 folders, a 0644 zip holding the whole class's work);
    `make zip-collect` takes the others' rights away from downloaded/ and says so, once."""
    archive = course / "downloaded" / "oublier" / "archive"
    _zip(archive / "rendus-ent.zip", {"rendus/ana/oublier.ipynb": _notebook(course, "complete")})
    for path in (course / "downloaded", archive.parent, archive):
        path.chmod(0o755)
    (archive / "rendus-ent.zip").chmod(0o644)
    proc = grading(course, "zip_collect", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (course / "downloaded").stat().st_mode & 0o777 == 0o750
    said = f"downloaded était lisible par tous les comptes de la machine (rendus de la classe){Q}:"
    assert said in proc.stdout
    proc = grading(course, "zip_collect", "oublier")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "lisible par tous" not in proc.stdout
