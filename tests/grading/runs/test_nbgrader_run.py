"""How a quiet nbgrader run is told to the teacher (grading.runs.nbgrader_run)."""

from __future__ import annotations

from pathlib import Path

from grading.runs.nbgrader_run import QuietRun


def test_a_failure_s_reason_forged_in_the_log_reaches_the_terminal_inert(tmp_path: Path):
    """The log holds what the kernels write too (a student's cell): its last ERROR line, quoted
    as the reason of a failure, never sends an escape sequence or a second line to the
    teacher's terminal."""
    forged = "[AutogradeApp | ERROR] \x1b]0;pwn\x07 effacez tout\u2028[OK] tout va bien\n"
    run = QuietRun(1, tmp_path / "x.log", "[AutogradeApp | INFO] début\n" + forged)
    said = run.failure("notation")
    assert "\x1b" not in said and "\x07" not in said and "\u2028" not in said
    assert "effacez tout" in said and said.startswith("✘ notation\u00a0: nbgrader")
    assert QuietRun(1, tmp_path / "x.log", "").failure("export").count("\u00a0:") == 2


def test_a_failure_s_reason_is_nbgrader_s_reason_not_its_closing_line(tmp_path: Path):
    """Teacher's walk, stop 60: `make release-feedback` without an exchange quoted « nbgrader
    release_feedback failed », nbgrader's last ERROR line, and left the reason, the CRITICAL line
    before it, in the log. The reason is quoted; the closing line only when it is alone."""
    log = (
        "[ReleaseFeedbackApp | CRITICAL] pas de dossier de l'échange\n"
        "[ReleaseFeedbackApp | ERROR] nbgrader release_feedback failed\n"
    )
    said = QuietRun(1, tmp_path / "x.log", log).failure("retours")
    assert "pas de dossier de l'échange" in said and "failed" not in said
    alone = "[CollectApp | ERROR] nbgrader collect failed\n"
    assert "nbgrader collect failed" in QuietRun(1, tmp_path / "x.log", alone).failure("ramassage")
