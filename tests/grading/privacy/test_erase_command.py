"""`make oublier-eleve` as the teacher types it (grading.erase_learner's options): an id with
shell characters through make, a goal named like a folder of grader/, a roster that is not there,
the witness (TEMOIN) found nowhere or picked by default."""

from __future__ import annotations

import shutil

import pytest
from erase_scenes import _erase, _make_from, _setup

pytestmark = [pytest.mark.timeout(300)]


@pytest.mark.slow
def test_a_roster_that_is_not_there_is_an_error(petite_classe):
    """`make oublier-eleve ID=ben ELEVES=grader/eleve.csv` (typo, or the roster kept elsewhere):
    the roster is silently ignored, ben's line (name, e-mail) stays in grader/eleves.csv, and
    the command says « Preuve faite » with exit status 0."""
    from grading.erase_learner import main

    c = petite_classe
    rc = main(
        [
            "ben",
            "--confirmer",
            "--temoin",
            "cyr",
            "--eleves",
            str(c["grader"] / "eleve.csv"),
            "--echange",
            str(c["exchange"]),
            "--grader-dir",
            str(c["grader"]),
        ]
    )
    left = "ben.durand@exemple.fr" in c["roster"].read_text(encoding="utf-8")
    assert rc != 0 or not left, "ligne de ben laissée dans la liste, sortie 0"


@pytest.mark.slow
def test_a_witness_found_nowhere_stops_before_anything_is_erased(petite_classe):
    """TEMOIN=zoe (a typo, or a learner already erased): the dry run says « Témoin « zoe » :
    0 endroit(s) » with exit status 0 and no warning; the confirmed run then erases everything
    and only afterwards says the proof is impossible. The control is known before: a witness
    found nowhere should stop the command before it deletes (nothing can be re-done)."""
    from grading.erase_learner import ErasureError, erase

    c = petite_classe
    try:
        _erase(c, "ana", control="zoe")
    except ErasureError:
        pass
    assert (c["grader"] / "submitted" / "ana").exists(), "effacé sans témoin possible"
    # teacher's walk, stop 56: the dry run said « Témoin « cy » : 0 endroit(s) », no warning
    with pytest.raises(ErasureError, match="Témoin «\u00a0cy\u00a0» trouvé nulle part") as typo:
        erase("ana", _setup(c), confirm=False, control="cy")
    assert "Vouliez-vous dire «\u00a0cyr\u00a0»\u00a0?" in str(typo.value)


# (id, refused by the tool): `"<>&` and the backquote never are ids
# (grading.classroom.ids.id_problem)
HOSTILE_IDS = [
    ("o'brien $HOME", False),
    ("-x", False),
    ("$(shell touch canari1)", False),
    ("a$$b;c", False),
    ("`touch canari2`", True),
    ('a"b $(shell touch canari3)', True),
]


@pytest.mark.slow
def test_an_id_with_shell_characters_reaches_the_tool_unchanged(petite_classe):
    """`make oublier-eleve ID=…` (from the root and from grader/, whose Makefile hands over to
    the root's) passes the id through make and its shell: a `$`, a quote, a backquote,
    `$(shell …)` or a leading « - » reach the tool as typed (it names exactly that id: no trace
    of it, or refused in French) and nothing else runs."""
    c = petite_classe
    for k, (sid, refused) in enumerate(HOSTILE_IDS):
        folder = "grader" if k % 2 else ""
        roster = "eleves.csv" if folder else "grader/eleves.csv"
        temoin = "TEMOIN=$(shell touch canari4)" if refused else "TEMOIN=cyr"
        proc = _make_from(c, folder, "oublier-eleve", f"ID={sid}", f"ELEVES={roster}", temoin)
        out = proc.stdout + proc.stderr
        # make echoes its command on one line, no line of a bare « \ » (issue 33, point 8)
        assert "erase_learner" in proc.stdout, out
        assert not [line for line in proc.stdout.splitlines() if line.strip() == "\\"], out
        if refused:
            assert proc.returncode != 0, out
            assert f"Identifiant «\u00a0{sid}\u00a0» refusé" in proc.stderr, out
        else:  # an id of nobody: named as typed, refused (issue 33, point 8), nothing erased
            assert proc.returncode == 2, out
            assert f"Identifiant «\u00a0{sid}\u00a0» inconnu" in proc.stderr, out
    # the id in the environment (ID=… make …), from grader/: handed over as is too
    from grading_course import make

    sid = "$(shell touch canari5) env"
    proc = make(c["grader"].parent, "oublier-eleve", folder="grader", extra_env={"ID": sid})
    assert f"Identifiant «\u00a0{sid}\u00a0» inconnu" in proc.stderr, proc.stdout + proc.stderr
    course = c["grader"].parent
    assert sorted(p.name for p in course.rglob("canari*")) == []
    assert (c["grader"] / "submitted" / "ana").is_dir()


@pytest.mark.slow
def test_from_grader_a_target_named_like_its_folder_is_still_run(petite_classe):
    """After a grading, grader/rapport/ and grader/feedback/ exist: `cd grader && make rapport`
    answered « 'rapport' is up to date » and wrote no report (its catch-all pattern rule took
    the folder for the target). Every goal is handed over to the root Makefile."""
    c = petite_classe
    for name in ("rapport", "feedback", "oublier-eleve"):
        (c["grader"] / name).mkdir(exist_ok=True)
    proc = _make_from(c, "grader", "-n", "rapport", "feedback")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "up to date" not in out and "à jour" not in out, out
    assert "-m grading.rapport oublier" in proc.stdout, out
    assert "-m grading.feedback oublier" in proc.stdout, out


@pytest.mark.slow
def test_the_default_witness_is_a_registered_learner(petite_classe):
    """DPO attack, point 6: ben's copy dropped in the wrong case (submitted/Ben/) is a folder
    name, not a learner: ``make oublier-eleve ID=ben`` without TEMOIN picked « Ben » as the
    control (uppercase sorts first), whose proof then failed. The default witness is another
    registered learner (roster or gradebook); one named with TEMOIN is still taken as given."""
    from grading_course import grading

    c = petite_classe
    stray = c["grader"] / "submitted" / "Ben" / "oublier"
    stray.mkdir(parents=True)
    shutil.copy(c["grader"] / "submitted" / "ben" / "oublier" / "oublier.ipynb", stray)
    base = ("erase_learner", "--eleves", str(c["roster"]), "--echange", str(c["exchange"]))
    proc = grading(c["grader"], *base, "--", "ben")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    witness = "Témoin (un autre élève, la preuve que la recherche trouve) "
    [line] = [x for x in proc.stdout.splitlines() if x.startswith(witness)]
    assert line.startswith(f"{witness}«\u00a0ana\u00a0» (Ana Martin"), line
    # positive control: the same line names « Ben » when it is the witness
    named = grading(c["grader"], *base, "--temoin", "Ben", "--", "ben")
    assert f"{witness}«\u00a0Ben\u00a0»" in named.stdout, named.stdout + named.stderr
