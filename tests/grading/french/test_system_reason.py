"""A system error said in French in the class tools' messages (grading/french/system_reason.py): the
short reason of a known errno, without the path the sentence already names; the original text
for anything else; and, end to end, the French reason in what a command prints."""

from __future__ import annotations

import errno
import os
import socket
import urllib.error

import pytest
from grading.french.system_reason import french_message, french_reason
from grading_course import copy_course, grading

pytestmark = pytest.mark.timeout(300)


def os_error(code: int, path: str = "/x") -> OSError:
    """The exception the system raises for `code` on `path` (its subclass, e.g.
    FileNotFoundError for ENOENT, as OSError's constructor picks it)."""
    return OSError(code, os.strerror(code), path)


# --------------------------------------------------------------------------- the reason


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (errno.ENOENT, "fichier ou dossier introuvable"),
        (errno.EACCES, "permission refusée"),
        (errno.EPERM, "permission refusée"),
        (errno.EISDIR, "c'est un dossier, pas un fichier"),
        (errno.ENOTDIR, "un élément du chemin n'est pas un dossier"),
        (errno.ENOSPC, "disque plein"),
        (errno.EROFS, "système de fichiers en lecture seule"),
        (errno.EEXIST, "existe déjà"),
        (errno.ENOTEMPTY, "dossier non vide"),
        (errno.EMFILE, "trop de fichiers ouverts"),
        (errno.EXDEV, "déplacement entre deux systèmes de fichiers impossible"),
        (errno.ECONNREFUSED, "connexion refusée"),
        (errno.ETIMEDOUT, "délai dépassé"),
        (errno.EHOSTUNREACH, "hôte injoignable"),
    ],
)
def test_a_known_errno_has_a_short_french_reason_without_the_path(code, reason):
    exc = os_error(code, "/cours/eleves.csv")
    assert french_reason(exc) == reason
    assert french_message(exc) == f"/cours/eleves.csv\u00a0: {reason}"
    assert french_message(exc, "/cours/eleves.csv") == reason  # the sentence names it already


def test_every_reason_is_lower_case_and_free_of_french_punctuation():
    """A reason goes inside a sentence: no capital, no final period, none of the characters
    French typography spaces (the sentence around it owns them)."""
    from course.system_reason import _REASONS

    for reason in _REASONS.values():
        assert reason == reason.strip() and reason[0].islower(), reason
        assert not set(reason) & set(".:;?!«»"), reason


def test_real_system_errors_are_said_in_french(tmp_path):
    (tmp_path / "fichier").write_text("x")
    cases = {
        tmp_path / "absent.csv": "fichier ou dossier introuvable",
        tmp_path: "c'est un dossier, pas un fichier",
        tmp_path / "fichier" / "eleves.csv": "un élément du chemin n'est pas un dossier",
    }
    for path, reason in cases.items():
        with pytest.raises(OSError) as caught:
            path.read_bytes()
        assert french_reason(caught.value) == reason
        assert french_message(caught.value) == f"{path}\u00a0: {reason}"


def test_a_rename_names_both_paths():
    exc = OSError(errno.EXDEV, os.strerror(errno.EXDEV), "/a", None, "/b")
    assert (
        french_message(exc)
        == "/a → /b\u00a0: déplacement entre deux systèmes de fichiers impossible"
    )


def test_an_unknown_errno_keeps_its_own_text():
    exc = OSError(9999, "Unknown error 9999", "/x")
    assert french_reason(exc) == "Unknown error 9999"  # strerror: still without the path
    assert french_message(exc) == str(exc)


def test_other_exceptions_keep_their_own_text():
    french = FileNotFoundError(
        "Aucun dossier /cours/telechargements\u00a0: déposez-y les archives."
    )
    assert french.errno is None  # the tools' own FileNotFoundError: a French sentence, kept
    for exc in (ValueError("pas un nombre"), french, KeyError("ana")):
        assert french_reason(exc) == str(exc)
        assert french_message(exc) == str(exc)
    assert french_reason(OSError()) == "OSError"  # nothing to say: at least its kind


def test_the_hub_s_network_errors_are_said_in_french():
    refused = urllib.error.URLError(
        ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
    )
    assert french_reason(refused) == "connexion refusée"
    unknown_host = urllib.error.URLError(socket.gaierror(socket.EAI_NONAME, "Name unknown"))
    assert french_reason(unknown_host) == "nom d'hôte inconnu"
    assert french_reason(urllib.error.URLError(TimeoutError("timed out"))) == "délai dépassé"
    assert french_reason(urllib.error.URLError("no host given")) == "no host given"


def test_a_refused_connection_is_real(tmp_path):
    with socket.socket() as closed:  # a port bound, not listening: the connection is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        with pytest.raises(OSError) as caught:
            socket.create_connection(("127.0.0.1", port), timeout=10)
    assert french_reason(caught.value) == "connexion refusée"


# --------------------------------------------------------------------------- end to end


@pytest.fixture
def grader(tmp_path):
    return copy_course(tmp_path / "cours")


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("absente.csv", "fichier ou dossier introuvable"),
        ("dossier.csv", "c'est un dossier, pas un fichier"),
        ("fichier.txt/eleves.csv", "un élément du chemin n'est pas un dossier"),
    ],
)
def test_an_unreadable_roster_is_said_in_french(grader, tmp_path, name, reason):
    (tmp_path / "dossier.csv").mkdir()
    (tmp_path / "fichier.txt").write_text("pas un dossier")
    roster = tmp_path / name
    proc = grading(grader, "roster_csv", str(roster))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"✘ Liste d'élèves illisible\u00a0: {roster} ({reason})." in proc.stderr
    assert "Rien n'a été inscrit." in proc.stderr
    for english in ("No such file", "Is a directory", "Not a directory", "Errno", "Traceback"):
        assert english not in proc.stderr, proc.stderr


def test_a_missing_backup_is_said_in_french(grader, tmp_path):
    archive = tmp_path / "sauvegarde-20250101-000000.tar.gz"
    proc = grading(grader, "backup", "restaurer", str(archive))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    expected = f"✘ Sauvegarde illisible\u00a0: {archive} (fichier ou dossier introuvable)."
    assert expected in proc.stderr
    assert "No such file" not in proc.stderr and "Errno" not in proc.stderr
    assert not (grader / "gradebook.db").exists()


def test_a_system_error_shown_on_its_own_names_its_file_in_french(grader, tmp_path):
    """A command that stops on a FileNotFoundError prints it whole: the tools' own ones are
    French sentences; a real one (here a sample that is a dangling link) gets its path and the
    French reason."""
    root = grader.parent
    (root / "notebooks" / "oublier").mkdir(parents=True)
    (root / "notebooks" / "oublier" / "oublier.ipynb").write_text("{}")
    link = grader / "submissions" / "zz_lien.py"
    link.symlink_to(tmp_path / "absent.py")
    rendus = tmp_path / "rendus"
    proc = grading(grader, "samples", "--root", str(root), "--submitted", str(rendus))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    expected = f"✘ python -m grading.samples\u00a0: {link}\u00a0: fichier ou dossier introuvable"
    assert expected in proc.stderr
    assert "No such file" not in proc.stderr and "Errno" not in proc.stderr
    assert not rendus.exists()
