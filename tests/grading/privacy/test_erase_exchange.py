"""The exchange (learner_places ``_scan_exchange``): her released feedback found through her
inbound secret, a mistyped exchange folder, and classmates' submissions there that name her
(text, PDF, closed to the teacher, too large to read)."""

from __future__ import annotations

import shutil
import zlib
from pathlib import Path

import pytest
from erase_scenes import _assert_proved, _copy_class, _erase, _erased_as_another_teacher, _make_from

pytestmark = [pytest.mark.timeout(300)]

# a submission's folder in inbound/, as nbgrader submit names it (<id>+<assignment>+<time>+<random>)
BENS = "ben+oublier+2025-03-14 17:00:00.000000 UTC+abc"


def _sent_by_ben(c, name: str) -> Path:
    """Where Ben's submitted file `name` lies in the exchange (inbound/<his submission>/), its
    folder made."""
    sent = c["exchange"] / "memoire-tuteur" / "inbound" / BENS / name
    sent.parent.mkdir()
    return sent


@pytest.mark.slow
def test_released_feedback_is_erased_when_her_folders_are_already_gone(petite_classe):
    """Her released feedback (exchange feedback/<md5(secret + notebook)>.html) is found only
    through submission_secret.txt in submitted/autograded/feedback. If those folders are gone
    (removed by hand before, or a first run that failed after deleting them: « relancez »), the
    page stays while the command says « Preuve faite ». Her inbound copy holds the same secret
    (nbgrader submit writes it there)."""
    from nbgrader.utils import notebook_hash

    c = petite_classe
    x = c["exchange"] / "memoire-tuteur"
    inbound = x / "inbound" / "ana+oublier+2025-03-14 17:00:00.000000 UTC+abc"
    inbound.mkdir()
    (inbound / "oublier.ipynb").write_text("{}")
    (inbound / "submission_secret.txt").write_text("secret-ana")
    page = x / "feedback" / f"{notebook_hash(secret='secret-ana', notebook_id='oublier')}.html"
    page.write_text("<html>retour d'Ana : ses réponses, sa note</html>")

    shutil.rmtree(c["grader"] / "submitted" / "ana")
    result = _erase(c, "ana")
    assert not result.failures
    assert not page.exists(), "retour publié d'ana laissé dans l'échange, « Preuve faite » dite"


@pytest.mark.slow
def test_a_mistyped_exchange_folder_is_refused(petite_classe):
    """DPO attack, item 12: `make oublier-eleve ECHANGE=<a folder that is not there>` ignored
    the exchange (her inbound copies and released feedback unseen) and could end on « Preuve
    faite ». Refused in French, exit 2, nothing erased; the right folder is accepted."""
    c = petite_classe
    common = ("oublier-eleve", "ID=ben", "ELEVES=grader/eleves.csv", "TEMOIN=cyr")
    for wrong in (c["tmp"] / "echnage", c["tmp"] / "echange" / "memoire-tuteur"):
        proc = _make_from(c, "", *common, f"ECHANGE={wrong}", "CONFIRMER=1")
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "Dossier d'échange introuvable" in proc.stderr or (
            "ne contient pas le dossier du cours «\u00a0memoire-tuteur\u00a0»" in proc.stderr
        ), proc.stderr
        assert "Rien n'a été effacé" in proc.stderr
        assert (c["grader"] / "submitted" / "ben").is_dir()
    proc = _make_from(c, "", *common, f"ECHANGE={c['exchange']}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Rien n'a été effacé (essai à blanc)" in proc.stdout


@pytest.mark.slow
def test_a_classmates_submission_in_the_exchange_naming_the_learner_is_named(petite_classe):
    """Review4: a mention of her in a classmate's work is found in grader/ (and redacted with
    CAVIARDER=1), never in the exchange, where only her own entries are looked at. Ben's
    notebook thanks « Ana Martin »: his collected copy (submitted/ben) is redacted, his
    submission in the exchange (inbound/ben+oublier+…) keeps her name, « Preuve faite » is
    said, and the next ``make collect`` brings her name back. Control: before redaction, his
    collected copy is named."""
    from grading.erase_learner import ErasureError, Setup, erase

    c = petite_classe
    text = '{"copie de": "ben", "merci": "Ana Martin"}'
    copy = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb"
    copy.write_text(text, encoding="utf-8")
    sent = _sent_by_ben(c, "oublier.ipynb")
    sent.write_text(text, encoding="utf-8")
    with pytest.raises(
        ErasureError, match="travail d'autres élèves|dans l'échange"
    ):  # control: named
        _erase(c, "ana")
    setup = Setup(grader_dir=c["grader"], roster=c["roster"], exchange=c["exchange"], redact=True)
    try:
        result = erase("ana", setup, confirm=True, control="cyr")
    except ErasureError as exc:
        assert "inbound" in str(exc), exc
        return
    assert "Ana Martin" not in copy.read_text(encoding="utf-8")  # his copy, redacted
    assert "Ana Martin" in sent.read_text(encoding="utf-8")  # his submission, not
    said = "\n".join(str(f) for f in result.failures)
    assert result.failures, f"« Preuve faite », ana dans le rendu de ben (échange)\u00a0: {said}"


@pytest.mark.slow
def test_a_classmates_pdf_in_the_exchange_naming_the_learner_is_named(petite_classe):
    """Review5: a classmate's submission in the exchange is searched as raw bytes, never
    expanded as the class folder's files are (PDF streams, gzip, zip). Ben hands in his
    notebook and its PDF export (File > Save and Export as PDF: « binôme : Ana Martin » in a
    FlateDecode stream); before make collect brings it into grader/, the erasure says
    « Preuve faite », and the next collect brings her name back. Control: the same PDF in his
    collected folder (grader/submitted/ben/) is named."""
    from grading.erase_learner import ErasureError

    c = petite_classe
    text = b"BT /F1 12 Tf 72 712 Td (Ben Durand, binome : Ana Martin) Tj ET"
    body = zlib.compress(text)
    pdf = (
        b"%%PDF-1.4\n1 0 obj\n<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body)
        + body
        + b"\nendstream\nendobj\ntrailer\n<< >>\n%EOF\n"
    )
    collected = c["grader"] / "submitted" / "ben" / "oublier" / "oublier.pdf"
    collected.write_bytes(pdf)
    with pytest.raises(ErasureError, match="oublier.pdf"):  # control: named in grader/
        _erase(c, "ana")
    collected.unlink()
    sent = _sent_by_ben(c, "oublier.pdf")
    sent.write_bytes(pdf)
    with pytest.raises(ErasureError, match="oublier.pdf"):
        _erase(c, "ana")


@pytest.mark.slow
def test_a_classmates_submission_the_teacher_cannot_read_in_the_exchange_is_named(petite_classe):
    """Review5: the exchange's classmates' files are found by ``rglob``, which passes over a
    folder it cannot open, and read by ``read_bytes`` with no ``OSError`` handled. On a hub,
    each submission in inbound/ is its student's; Ben closes his (``chmod 700`` on
    inbound/ben+oublier+…/, his own folder): the teacher's erasure of ana never reads it and
    says « Preuve faite », though it names her. Ben closes only his notebook (``chmod 600``):
    the erasure stops on a PermissionError traceback. Both should be named, as an unreadable
    file of grader/ is. Control: the same submission readable by the teacher is named."""

    def prepare(case: str, here: Path, user: str) -> None:
        inbound = here / "echange" / "memoire-tuteur" / "inbound"
        sent = inbound / "ben+oublier+2025-03-14 17:00:00.000000 UTC+abc"
        sent.mkdir()  # Ben's (root stands for his account here)
        notebook = sent / "oublier.ipynb"
        notebook.write_text('{"copie de": "ben", "merci": "Ana Martin"}')
        notebook.chmod(0o644)
        sent.chmod(0o755)
        if case == "dossier":
            sent.chmod(0o700)
        elif case == "fichier":
            notebook.chmod(0o600)

    cases = ("lisible", "dossier", "fichier")
    said = _erased_as_another_teacher(petite_classe, "r5", cases, prepare)
    assert said["lisible"].startswith("REFUS") and "inbound" in said["lisible"], said
    wrong = {
        case: said[case][-600:]
        for case in ("dossier", "fichier")
        if "Traceback" in said[case]
        or said[case].startswith("PREUVE FAITE")
        or "ben+oublier" not in said[case]
    }
    assert not wrong, wrong


@pytest.mark.slow
def test_a_classmates_large_file_in_the_exchange_never_blocks_every_erasure(
    petite_classe, monkeypatch
):
    """Review5: a classmate's file in the exchange over 50 MiB is named « non lu par cette
    commande, à vérifier à la main », whoever is erased, though nbgrader accepts 100 MB per
    file and the class folder's own files are read up to 256 MiB. Ben hands in his tutor's
    database (inbound/ben+oublier+…/memoire.db, 60 MiB): no learner of the class can be erased
    until the teacher deletes Ben's submission from the exchange. Control: the same file in
    his collected folder (grader/submitted/ben/) is read, and ana is erased. (The archive
    member's cap, which the exchange used, is lowered to 1 MiB here, the file made 2 MiB:
    searching 60 MiB four times takes most of a minute.)"""
    from grading.privacy import learner_places, packed

    for module in (packed, learner_places):
        monkeypatch.setattr(module, "MEMBER_MAX", 2**20)
    c = petite_classe
    size = 2 * 2**20
    collected = c["grader"] / "submitted" / "ben" / "oublier" / "memoire.db"
    with open(collected, "wb") as file:
        file.truncate(size)
    assert not _erase(_copy_class(c), "ana").failures  # control: read in grader/
    collected.unlink()
    sent = _sent_by_ben(c, "memoire.db")
    with open(sent, "wb") as file:
        file.truncate(size)
    _assert_proved(c, "ana", "le fichier de ben dans l'échange")
