"""Hidden scenarios leak nothing: for every sample submission (the hostile ones included), every
message a feedback page or the class report shows (each criterion's verdict on both scenarios,
the outcome, the load error) holds no hidden input, no sandbox uid and no grading folder. The
control: the samples that try to leak really see the hidden inputs (they raise them, by name)."""

from __future__ import annotations

import pytest
from fuites import hidden_leaks, hidden_values

from course.labo.criteria import KNOWN_ERRORS, _raised
from course.labo.protocol import CallOutcome, RaisedError

pytestmark = pytest.mark.timeout(900)


@pytest.mark.slow
def test_no_feedback_message_holds_a_hidden_input(graded_samples, sample_answers):
    leaks = hidden_leaks()
    seen = {}
    for name in sorted(sample_answers):
        evaluation = graded_samples[name]
        messages = [v.message for c in evaluation.criteria.values() for v in c.values()]
        messages += [evaluation.outcome()[1], evaluation.load_error or ""]
        seen[name] = {m: leaks(m) for m in messages if leaks(m)}
    assert {name: found for name, found in seen.items() if found} == {}


def test_a_hostile_class_name_is_replaced_for_hidden_inputs():
    """The control for the scan: a class name holding a hidden input is shown on the example,
    replaced on the hidden inputs; Python's own names stay."""
    secret = sorted(hidden_values())[0]
    forged = CallOutcome("c", RaisedError(f"Erreur_{secret}", secret))
    assert secret in _raised(forged, hidden=False)
    shown = _raised(forged, hidden=True)
    assert secret not in shown and shown == "De plus, oublier a levé une exception."
    known = CallOutcome("c", RaisedError("OperationalError", secret))
    assert _raised(known, hidden=True) == "De plus, oublier a levé OperationalError."
    assert {"KeyError", "OperationalError", "IntegrityError"} <= KNOWN_ERRORS


SCHEMA_LEAK = """
async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    try:
        lignes = conn.execute("SELECT user_id FROM sessions").fetchall()
        nom = "_".join(sorted({l[0] for l in lignes})).replace('"', "")
        conn.execute("PRAGMA writable_schema = ON")
        with conn:
            conn.execute(
                "UPDATE sqlite_master SET sql = ? WHERE name = 'events'",
                (f"CREATE TABLE events (cassee {nom} {user_id.replace(chr(34), '')}",),
            )
    finally:
        conn.close()
"""


def test_a_schema_broken_with_the_inputs_shows_no_reason_for_hidden_inputs():
    """SQLite names the broken object in its error: the reason is shown on the example only.
    The control: on the example the reason really quotes what the answer wrote there."""
    from grading.nbgrader_ext.hidden import HIDDEN

    from course.labo.evaluate import evaluate_source
    from course.labo.scenario import VISIBLE

    evaluation = evaluate_source(SCHEMA_LEAK, scenarios=(VISIBLE, HIDDEN), sandboxed=True)
    assert evaluation.score == 0
    visible = evaluation.criteria[VISIBLE.name]["sessions"].message
    assert "la base de données est abîmée après oublier (" in visible and "alice" in visible
    leaks = hidden_leaks()
    for verdict in evaluation.criteria[HIDDEN.name].values():
        assert leaks(verdict.message) == [], verdict.message
        assert "abîmée après oublier\u00a0: il faut" in verdict.message


# An answer cell that looks everywhere a call's process can look for what it was not given: every
# frame up the stack, every object the garbage collector tracks, /proc/self (environ, cmdline,
# maps, status, its descriptors and what they lead to, all its readable memory), its parent's and
# every visible process's /proc entries. It searches for the markers shifted by one (byte + 1), so
# that the markers themselves are never in its memory; it raises which markers it found, where,
# and how much it read (so that a scan that read nothing cannot pass).
SCAN_EVERYWHERE = """
import gc
import os
import sys

_SHIFT = bytes((i + 1) % 256 for i in range(256))
_TARGETS = [bytes.fromhex(h) for h in TARGETS_HEX]


def _search(data, found, where, sizes):
    if isinstance(data, str):
        data = data.encode("utf-8", "replace")
    sizes[where] = sizes.get(where, 0) + len(data)
    shifted = bytes(data).translate(_SHIFT)
    for index, target in enumerate(_TARGETS):
        if target in shifted:
            found.setdefault(index, where)


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read(1 << 22)
    except OSError:
        return b""


def _memory(found, sizes):
    with open("/proc/self/maps") as f:
        regions = [line.split() for line in f]
    mem = os.open("/proc/self/mem", os.O_RDONLY)
    try:
        for region in regions:
            start, end = (int(x, 16) for x in region[0].split("-"))
            name = region[5] if len(region) > 5 else ""
            if "r" not in region[1] or end - start > (256 << 20) or name == "[vvar]":
                continue
            for offset in range(start, end, 1 << 22):
                try:
                    chunk = os.pread(mem, min(1 << 22, end - offset) + 256, offset)
                except OSError:
                    try:
                        chunk = os.pread(mem, min(1 << 22, end - offset), offset)
                    except OSError:
                        break
                _search(chunk, found, "mem", sizes)
    finally:
        os.close(mem)


async def oublier(service, user_id: str) -> None:
    found, sizes = {}, {}
    conn = sqlite3.connect(service.db_path)
    try:
        _search(repr(conn.execute("SELECT * FROM events").fetchall()), found, "base", sizes)
    finally:
        conn.close()
    frame = sys._getframe()
    while frame is not None:
        _search(repr(frame.f_locals), found, "frames", sizes)
        frame = frame.f_back
    for obj in gc.get_objects():
        if isinstance(obj, dict):
            items = obj.items()
        else:
            items = obj if isinstance(obj, (list, tuple, set, frozenset)) else ()
        try:
            for item in items:
                for value in item if isinstance(obj, dict) else (item,):
                    if isinstance(value, (str, bytes, bytearray)):
                        _search(value, found, "gc", sizes)
        except Exception:
            pass
    for name in ("environ", "cmdline", "maps", "status", "stat", "comm", "auxv"):
        _search(_read(f"/proc/self/{name}"), found, "proc", sizes)
    for fd in os.listdir("/proc/self/fd"):
        try:
            _search(os.readlink(f"/proc/self/fd/{fd}"), found, "fd", sizes)
            _search(_read(f"/proc/self/fdinfo/{fd}"), found, "fd", sizes)
            os.set_blocking(int(fd), False)
            _search(os.pread(int(fd), 1 << 20, 0), found, "fd", sizes)
        except OSError:
            pass
    parent = str(os.getppid())
    for pid in [parent] + [p for p in os.listdir("/proc") if p.isdigit()]:
        for name in ("environ", "cmdline", "maps", "status", "stat"):
            where = "parent" if pid == parent else "pids"
            _search(_read(f"/proc/{pid}/{name}"), found, where, sizes)
    try:
        _memory(found, sizes)
    except OSError:
        sizes["mem"] = sizes.get("mem", 0)
    raise RuntimeError(
        "found " + ",".join(f"{i}:{w}" for i, w in sorted(found.items()))
        + " read " + ",".join(f"{w}={n}" for w, n in sorted(sizes.items()))
    )
"""


def _scan_cell(markers: list[str]) -> str:
    shifted = [bytes((b + 1) % 256 for b in m.encode()).hex() for m in markers]
    return f"TARGETS_HEX = {shifted!r}\n" + SCAN_EVERYWHERE


def _scan_report(message: str) -> tuple[dict[int, str], dict[str, int]]:
    found_part, _sep, read_part = message.removeprefix("found ").partition(" read ")
    found = {int(i): where for i, where in (x.split(":") for x in found_part.split(",") if x)}
    sizes = {w: int(n) for w, n in (x.split("=") for x in read_part.split(",") if x)}
    return found, sizes


@pytest.mark.slow
def test_a_call_process_holds_nothing_but_its_own_call():
    """Issue 32, point 3: the process of a call on the example holds no hidden input anywhere it
    can look (frames, gc, /proc/self and its memory, its parent, every process). Controls: the
    same scan finds the example's data in the example's calls, and in the hidden calls finds the
    hidden learner's data (the hidden input exists in the runner, only where its call runs)."""
    from grading.nbgrader_ext.hidden import HIDDEN

    from course.labo.evaluate import evaluate_source
    from course.labo.fixture import ALICE_PERSONAL_DATA
    from course.labo.scenario import VISIBLE

    hidden = ["maelle.girard@exemple.org", "07 65 43 21 09", "personne-7", "Un pour tous, tous"]
    hidden += sorted(v for v in hidden_values() if len(v) >= 30)[:4]  # the hidden session ids
    visible = [ALICE_PERSONAL_DATA[1]]
    markers = visible + hidden
    evaluation = evaluate_source(
        _scan_cell(markers), scenarios=(VISIBLE, HIDDEN), sandboxed=True, timeout=60
    )
    reports = {}
    for name, result in evaluation.results.items():
        for call in result.calls:
            assert call.outcome is not None and call.outcome.error is not None, (name, call)
            reports[(name, call.planned.call_id)] = _scan_report(call.outcome.error.message)
    assert len(reports) == len(VISIBLE.calls()) + len(HIDDEN.calls())
    print(reports)
    for (name, role), (found, sizes) in reports.items():
        # the scan read frames, the collector's objects, /proc and at least 10 MB of memory
        assert sizes.get("frames", 0) > 0 and sizes.get("gc", 0) > 0, (name, role, sizes)
        assert sizes.get("proc", 0) > 0 and sizes.get("parent", -1) >= 0, (name, role, sizes)
        if name == VISIBLE.name:
            assert found.get(0) is not None, (role, found)  # the example's own data: seen
            assert {markers[i] for i in found} == set(visible), (role, found)
        assert sizes.get("mem", 0) > 10 << 20, (name, role, sizes)
    hidden_found, _sizes = reports[(HIDDEN.name, HIDDEN.calls()[0][1].call_id)]
    assert {markers[i] for i in hidden_found} >= {"maelle.girard@exemple.org", "07 65 43 21 09"}
