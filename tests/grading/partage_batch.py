"""Grades a batch of ``oublier_partage`` cells on real PostgreSQL servers, as the hooks grade
them, while watching the machine's ``/tmp``; prints the results as JSON.

Run in the test process, or as a script (``python partage_batch.py < CONFIG``) by another Unix
user or in another mount namespace, with the interpreter of an environment where the course is
installed. CONFIG (JSON): ``items`` (name -> ``{"source", "limits"}``, limits the keyword
arguments of ``ServerLimits`` or null), ``grader`` (a folder holding ``grading/``: the hidden
scenario; null: the lesson's example), ``watch_uid`` (only the entries of ``/tmp`` this uid owns
count; null: every entry), ``clusters`` (the clusters' folder, watched too; null: the default
one, ``clusters_root()``).

The watch's positive control: a file made by ``tempfile.mkstemp()`` (the default temporary
folder: ``TMPDIR`` must be unset) while the watch runs, removed before grading starts; the
report names it, and every other new entry of ``/tmp`` seen during the batch.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

__all__ = ["grade_batch"]

TMP = "/tmp"
POLL = 0.02


class _Watch:
    """The entries of a folder that appear while it runs (polled), with their owner and mode as
    last seen (mkdtemp makes a folder as root before it is given to the server's user)."""

    def __init__(self, folder: str, uid: int | None) -> None:
        self.folder = folder
        self.uid = uid
        self.before = set(os.listdir(folder))
        self.seen: dict[str, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            try:
                entries = list(os.scandir(self.folder))
            except OSError:
                entries = []
            for entry in entries:
                if entry.name in self.before:
                    continue  # an entry is recorded as last seen: a folder made, then given away
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if self.uid is None or st.st_uid == self.uid:
                    self.seen[entry.name] = (st.st_uid, st.st_mode & 0o7777)
            if self._stop.is_set():
                return
            time.sleep(POLL)

    def __enter__(self) -> _Watch:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


def grade_batch(config: dict) -> dict:
    from course.labo.partage import EXAMPLE, evaluate_partage
    from course.labo.partage_base import ServerLimits

    scenario = EXAMPLE
    if config.get("grader"):
        if config["grader"] not in sys.path:
            sys.path.insert(0, config["grader"])
        from grading.nbgrader_ext.hidden_partage import HIDDEN_PARTAGE

        scenario = HIDDEN_PARTAGE

    def grade(item: tuple[str, dict]) -> tuple[str, dict]:
        name, spec = item
        limits = ServerLimits(**spec["limits"]) if spec.get("limits") else None
        evaluation = evaluate_partage(spec["source"], scenario, sandboxed=True, limits=limits)
        return name, {
            "score": evaluation.score,
            "failed": sorted(t for t, v in evaluation.verdicts.items() if not v.ok),
            "statuses": evaluation.statuses,
            "ended": str(evaluation.outcome()[0].value),
            "reason": evaluation.reason,
        }

    clusters = config.get("clusters")
    if not clusters:  # the default one, where the hooks put them
        from course.labo.partage_base import clusters_root

        clusters = str(clusters_root())
    with _Watch(TMP, config.get("watch_uid")) as tmp, _Watch(clusters, None) as made:
        fd, control = tempfile.mkstemp(prefix="controle-")
        os.close(fd)
        time.sleep(10 * POLL)  # seen by the watch before it goes
        os.unlink(control)
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = dict(pool.map(grade, config["items"].items()))
        time.sleep(5 * POLL)
    return {
        "results": results,
        "control": control,
        "tmp_new": sorted(tmp.seen),
        "clusters_made": {name: list(v) for name, v in made.seen.items()},
        "clusters": clusters,
        "clusters_left": sorted(os.listdir(clusters)),
    }


if __name__ == "__main__":
    print(json.dumps(grade_batch(json.load(sys.stdin))))
