"""Files a lesson makes with learners' names in them, erased however the lesson ends.

``Effaceur(*chemins)`` gives the paths to a small watchdog process (``python -m course.cleanup``,
one per process) that erases them when its stdin ends, that is when the kernel that started
it ends, however it ends: a shutdown or a restart from JupyterLab, nbclient's end of run, a
crash, ``kill -9`` (atexit runs in none of the last two, and a kernel that does not stop in
time is SIGKILLed). ``effacer()`` erases them at once (the lesson's last cell, or after an
error the lesson catches). A folder holding a locked ``.verrou`` (a running PostgreSQL cluster
of ``course.postgres``) is erased once its watchdog lets the lock go, that is once the server
has stopped, never under a running server.

Protocol: one JSON string a line on stdin, an absolute path to erase; nothing on stdout.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["Effaceur", "main"]

LOCK_WAIT = 90.0  # a cluster's fast shutdown may take 30 s, then its watchdog escalates
# in the kernel, a cluster still running is left (to the watchdog, once the server stops)
IN_KERNEL_WAIT = 5.0


def _lock_name() -> str:
    from course.postgres._watchdog import LOCK_NAME

    return LOCK_NAME


@contextlib.contextmanager
def _unlocked(folder: Path, deadline: float) -> Iterator[bool]:
    """True once no process holds the folder's ``.verrou`` (a server still running in it),
    False at the deadline; the lock is held meanwhile (exclusive: two erasers, such as a
    restarted kernel's and its predecessor's watchdog, take turns), so no server starts in the
    folder being erased: its watchdog finds the lock taken and says so."""
    import fcntl

    try:
        lock = open(folder / _lock_name(), "rb")  # noqa: SIM115 - closed below
    except OSError:  # no lock file: no server was ever started there
        yield True
        return
    with lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.1)
        yield True


def erase(path: Path, *, wait: float = LOCK_WAIT) -> bool:
    """Erase a file or a folder (never what a link points to); True if nothing is left. A
    PostgreSQL cluster's private parent (as root, in the temporary folder) goes too if empty."""
    if path.is_dir() and not path.is_symlink():
        with _unlocked(path, time.monotonic() + wait) as free:
            if not free:  # a server still runs there: never erased under it
                return False
            shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        except OSError:
            return False
    gone = not (path.exists() or path.is_symlink())
    if gone:
        from course.postgres._server import remove_cluster_parent

        remove_cluster_parent(path)
    return gone


_WATCHDOG: subprocess.Popen[bytes] | None = None
_WATCHED: list[Path] = []  # every path given to this process's watchdog


def _send(paths: list[Path]) -> None:
    """Give paths to this process's one watchdog (started, or restarted, on first need).

    One per process, held by this module for the process's whole life: a watchdog whose pipe
    closed when its owner was garbage-collected (a lesson's first cell run twice) would erase
    the files of the run in progress."""
    global _WATCHDOG
    if _WATCHDOG is None or _WATCHDOG.poll() is not None:
        from course.postgres._server import _import_root

        _WATCHDOG = subprocess.Popen(
            [sys.executable, "-m", "course.cleanup"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            start_new_session=True,  # a kernel's process-group kill must not reach it
            env={**os.environ, "PYTHONPATH": _import_root()},
        )
        paths = [*_WATCHED, *(p for p in paths if p not in _WATCHED)]
    assert _WATCHDOG.stdin is not None
    for path in paths:
        if path not in _WATCHED:
            _WATCHED.append(path)
        _WATCHDOG.stdin.write((json.dumps(str(path)) + "\n").encode("utf-8"))
    _WATCHDOG.stdin.flush()


class Effaceur:
    """Efface des fichiers et des dossiers à la fin de la leçon, après une erreur, et quand
    le noyau s'arrête, même tué : ``effaceur = Effaceur("dossier", "fichier.sql")``,
    ``effaceur.ajouter(chemin)``, ``effaceur.effacer()``."""

    def __init__(self, *chemins: str | os.PathLike[str]) -> None:
        self.chemins: list[Path] = []
        for chemin in chemins:
            self.ajouter(chemin)

    def ajouter(self, chemin: str | os.PathLike[str]) -> Path:
        """Un chemin de plus à effacer (relatif au dossier du notebook)."""
        path = Path(os.path.abspath(chemin))
        if path not in self.chemins:
            self.chemins.append(path)
            _send([path])
        return path

    def effacer(self) -> list[Path]:
        """Efface tout maintenant ; renvoie ce qui reste (rien, d'habitude). Le processus de
        garde continue : ce qui serait récrit ensuite est effacé à l'arrêt du noyau."""
        return [path for path in self.chemins if not erase(path, wait=IN_KERNEL_WAIT)]

    def __repr__(self) -> str:
        return f"<Effaceur {[str(p) for p in self.chemins]}>"


def main() -> int:
    """The watchdog: collect paths until stdin ends, then erase them."""
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # a closed terminal is not the kernel's end
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # nor an interrupt of the kernel
    paths: list[Path] = []
    for line in sys.stdin.buffer:
        try:
            path = json.loads(line)
        except ValueError:
            continue
        if isinstance(path, str) and os.path.isabs(path):
            paths.append(Path(path))
    for path in paths:
        erase(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
