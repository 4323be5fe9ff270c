"""Dates, scores and the order of names as a French reader expects them, with no OS locale
(grading/french_format.py)."""

from __future__ import annotations

from datetime import datetime

from grading.criterion_titles import criterion_title
from grading.feedback_student import student_name
from grading.french_format import collation_key, french_datetime, french_score


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
