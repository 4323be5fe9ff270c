"""Dates, scores and the order of names as a French reader expects them, with no OS locale
(grading/french/french_format.py)."""

from __future__ import annotations

from datetime import datetime

from grading.french.french_format import (
    ITEM_CHARS,
    LISTED,
    collation_key,
    french_datetime,
    french_day,
    french_score,
    listed,
)
from grading.nbgrader_ext.criterion_titles import criterion_title
from grading.nbgrader_ext.feedback_page import student_name


def test_french_order_without_a_locale():
    ids = ["emma", "Zoé", "éloïse", "élodie", "eve", "zoe", "Élise", "ana"]
    assert sorted(ids, key=collation_key) == [
        "ana",
        "Élise",
        "élodie",
        "éloïse",
        "emma",
        "eve",
        "zoe",
        "Zoé",
    ]
    # NFD (a macOS zip) and NFC sort together, and no two distinct ids compare equal
    assert collation_key("chlo\u0301e")[0] == collation_key("chloé")[0]
    assert collation_key("chlo\u0301e") != collation_key("chloé")


def test_dates_in_the_course_time_zone():
    # nbgrader keeps naive UTC: winter UTC+1, summer UTC+2
    assert french_datetime("2025-03-14 17:00:00") == "14/03/2025 18:00"
    assert french_datetime(datetime(2025, 6, 1, 16, 0)) == "01/06/2025 18:00"
    assert french_datetime("2025-03-14 17:00:00.250000") == "14/03/2025 18:00"
    assert french_datetime("2025-03-14 17:00:30", with_zone=True) == (
        "14/03/2025 18:00:30 (Europe/Paris)"
    )
    assert french_datetime("") == french_datetime(None) == french_datetime("n'importe") == ""


def test_one_number_format():
    assert french_score(1.5, 12) == "1,5 / 12"
    assert french_score(10.0, 12.0) == "10 / 12"
    assert french_score(1 / 3, 12) == "0,33 / 12"


def test_titles_and_names_for_readers():
    assert criterion_title("documentation").startswith("Réponse écrite")
    assert criterion_title("inconnu") == "inconnu"
    assert student_name("Chloé", "Roux", "chloé") == "Chloé Roux (chloé)"
    assert student_name(None, " ", "zoé") == "zoé"


def test_spreadsheet_file_is_data_for_french_excel(tmp_path):
    from grading.french.french_csv import write_french_csv

    path = write_french_csv(
        tmp_path / "t.csv",
        ["identifiant", "nom", "note", "rendu"],
        [["=2+5", "N'Diaye; Roux", 1.5, True], ["zoé", "Line\nbreak", float("nan"), False]],
    )
    data = path.read_bytes()
    assert data.startswith("\ufeff".encode()) and data.count(b"\r\n") == 3
    text = data.decode("utf-8-sig")
    assert text.startswith("identifiant;nom;note;rendu\r\n")
    # a formula stays text, a ';' in a name is quoted, decimal comma, French yes/no
    assert "'=2+5;\"N'Diaye; Roux\";1,5;oui\r\n" in text
    assert 'zoé;"Line\nbreak";;non\r\n' in text


def test_duedate_sees_a_zone():
    from grading.duedate import _ZONE

    for date in ("2025-03-14 18:00:00 Europe/Paris", "2025-03-14 18:00 UTC", "2025-03-14 CET"):
        assert _ZONE.search(date), date
    assert _ZONE.search("2025-03-14T18:00:00+01:00")
    assert not _ZONE.search("2025-03-14 18:00:00")


def test_durations_in_summaries_have_a_decimal_comma(graded_class):
    """Issue 33, point 8: « 6,5 s », never « 6.5 s », in what the grading and the feedback
    commands print (their summaries of the class graded by the course's tools)."""
    import re

    from grading.french.french_format import seconds_text

    assert seconds_text(6.5) == "6,5\u00a0s" and seconds_text(0.123, 2) == "0,12\u00a0s"
    for out in (graded_class.grade_out, graded_class.feedback_out):
        assert re.search(r"\d\u00a0s", out), out  # the duration is there (positive control)
        assert not re.search(r"\d\.\d+ ?s\b", out), out


def test_a_day_as_a_french_reader_writes_it():
    """The one conversion of a register's day (the roster's re-enrolment, the erasure, the
    collect's refusal all say it this way)."""
    assert french_day("2026-12-04") == "04/12/2026"
    assert french_day("?") == "?" and french_day("2026-12") == "2026-12"


def test_a_list_is_in_french_order_and_cut_where_a_file_has_it_whole(tmp_path):
    """One home for the lists a class command prints (zip-collect's, the backup's): sorted as a
    French reader looks for a name, cut at LISTED items only when the whole list is in a file."""
    items = [f"élève{k:03d}" for k in range(LISTED + 5)][::-1] + ["Zoé", "émile", "eric"]
    whole = tmp_path / "liste.log"
    shown = listed("Entête\u00a0:", items, whole)
    assert shown[0] == "Entête\u00a0:" and len(shown) == LISTED + 2
    assert shown[1:4] == ["  - élève000", "  - élève001", "  - élève002"]
    assert shown[-1] == f"  … et {len(items) - LISTED} autre(s)\u00a0: liste complète dans {whole}"
    every = listed("Entête\u00a0:", ["Zoé", "émile", "eric", "Ève"])
    assert every[1:] == ["  - émile", "  - eric", "  - Ève", "  - Zoé"]
    assert listed("Entête\u00a0:", [], whole) == []


def test_a_long_item_is_cut_where_the_file_has_it_whole(tmp_path):
    """Attack, stop 58: 60 links of 240-character names and 4,000-byte targets printed 852 kB.
    An item is cut at ITEM_CHARS characters on the screen; the file has it whole."""
    long = "x" * 5000
    assert listed("E\u00a0:", [long], tmp_path / "f")[1] == f"  - {'x' * (ITEM_CHARS - 1)}…"
    assert listed("E\u00a0:", [long])[1] == f"  - {long}"  # no file: all of it
