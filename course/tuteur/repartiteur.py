"""A load balancer in front of tutor instances, each a real process (lesson 7).

``Repartiteur(dossier, n=3, url=…)`` starts ``n`` instance processes
(``course.tuteur.instance``) and sends each learner turn to the next one in turn (round robin),
as a load balancer without sticky sessions does. The instances end when ``fermer()`` closes
their pipes, or when the kernel that started them dies (their stdin closes too).

An instance that cannot serve a turn (a module missing, the database refused) raises
``InstanceEnPanne`` here, in French and naming the real cause, before the lesson reads any
field of the answer: a learner sees why, not a ``KeyError`` three calls later.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

__all__ = ["InstanceEnPanne", "Repartiteur"]


class InstanceEnPanne(RuntimeError):
    """Une instance du tuteur n'a pas pu traiter un tour : le message dit pourquoi."""


def _failure(answer: dict[str, Any], store: str) -> InstanceEnPanne:
    where = "la base partagée" if store == "shared" else f"son stockage «\u00a0{store}\u00a0»"
    text = (
        f"L'instance {answer.get('instance', '?')} du tuteur n'a pas pu utiliser {where}"
        f"\u00a0: {str(answer['failure']).rstrip('. ')}"  # one final point, never two
    )
    missing = answer.get("missing")
    if isinstance(missing, str) and missing.replace("_", "").replace(".", "").isalnum():
        top = missing.split(".")[0]
        text += (
            f". Il manque le module Python «\u00a0{top}\u00a0» à l'environnement du cours"
            f"\u00a0: installez-le (pip install {top}), puis redémarrez le noyau"
        )
    return InstanceEnPanne(text + ".")


class Repartiteur:
    """Envoie chaque tour de l'élève à l'instance suivante, à tour de rôle.

    Chaque instance a son propre fichier SQLite (``instance1.db``…, dans ``dossier``) et la
    base partagée d'URL ``url`` (qu'on peut donner après coup : les instances démarrent, et
    importent ADK, pendant que le serveur démarre). ``envoyer(...)`` renvoie la réponse de
    l'instance (un dictionnaire : ``instance``, ``session_id``, ``replies``, ``error``…)."""

    def __init__(self, dossier: str | os.PathLike[str], n: int = 3, url: str | None = None):
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"n doit être un entier positif (reçu\u00a0: {n!r}).")
        self.dossier = Path(dossier)
        self.dossier.mkdir(parents=True, exist_ok=True)
        self.suivante = 0
        self.url = url
        self.pids: list[int] = []
        self._pipes: list[tuple[TextIO, TextIO]] = []
        start = time.perf_counter()
        specs, child_ends = [], []
        for i in range(1, n + 1):
            to_child, from_parent = os.pipe()[::-1]  # (write end, read end)
            to_parent, from_child = os.pipe()[::-1]
            specs.append(f"{i}:{from_parent}:{to_parent}")
            child_ends += [from_parent, to_parent]
            self._pipes.append(
                (
                    os.fdopen(to_child, "w", encoding="utf-8"),
                    os.fdopen(from_child, "r", encoding="utf-8"),
                )
            )
        command = [sys.executable, "-m", "course.tuteur.instance"]
        command += ["--sqlite-dir", str(self.dossier), *specs]
        # what the instances say on stderr (a failed import), read if one ends before it is
        # ready; a file without a name, never a pipe that could fill up and block them
        self._errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed by fermer()
        try:
            self._launcher = subprocess.Popen(
                command,
                pass_fds=child_ends,
                stdin=subprocess.DEVNULL,
                stderr=self._errors,
                # a session of their own: JupyterLab's Interrupt (SIGINT to the kernel's process
                # group) must not reach them; they still end with the kernel (their pipe closes)
                start_new_session=True,
            )
        finally:
            for fd in child_ends:
                os.close(fd)
        self._start = start
        self._closed = False
        self.secondes_demarrage: float | None = None

    def _check_open(self) -> None:
        if self._closed:
            raise InstanceEnPanne(
                "Les instances du tuteur sont arrêtées (fermer() ou ranger() les a "
                "arrêtées)\u00a0: relancez la leçon depuis sa première cellule."
            )

    def attendre(self) -> list[int]:
        """Attend que chaque instance soit prête ; renvoie leurs numéros de processus."""
        self._check_open()
        if not self.pids:
            try:
                self.pids = [self._read(i, "ready")["pid"] for i in range(len(self._pipes))]
            except BaseException:
                self.fermer()
                raise
            self.secondes_demarrage = time.perf_counter() - self._start
        return self.pids

    def _read(self, index: int, expected: str) -> dict[str, Any]:
        line = self._pipes[index][1].readline()
        if not line:
            raise self._gone(index, ready=expected == "ready")
        return json.loads(line)

    def _gone(self, index: int, *, ready: bool) -> InstanceEnPanne:
        """An instance whose pipe closed: before its first line (ADK failed to import, or it
        was killed at once), or later (its process ended: killed, or crashed)."""
        if ready:
            said = self._last_error()
            missing = re.search(
                r"ModuleNotFoundError\W+(?:No module named '|import of )([\w.]+)", said
            )
            if missing:
                return InstanceEnPanne(
                    f"L'instance {index + 1} du tuteur n'a pas pu démarrer\u00a0: il manque le "
                    f"module Python «\u00a0{missing.group(1)}\u00a0» à l'environnement du cours. "
                    f"Installez ses paquets (make setup), puis redémarrez le noyau."
                )
            return InstanceEnPanne(
                f"L'instance {index + 1} du tuteur s'est arrêtée avant d'être prête\u00a0: "
                f"{said or 'son processus a pris fin sans message'}."
            )
        pid = f" (pid {self.pids[index]})" if index < len(self.pids) else ""
        return InstanceEnPanne(
            f"L'instance {index + 1} du tuteur{pid} s'est arrêtée\u00a0: son processus a pris "
            f"fin (tué, ou arrêté par une erreur). Relancez la leçon depuis sa première "
            f"cellule pour redémarrer les instances."
        )

    def _last_error(self) -> str:
        """The last line the instances wrote on stderr (the error that ended them), or ""."""
        errors = getattr(self, "_errors", None)
        if errors is None or errors.closed:
            return ""
        errors.seek(0, os.SEEK_END)
        errors.seek(max(0, errors.tell() - 4096))
        lines = errors.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1].strip() if lines else ""

    def ouvrir_base(self) -> None:
        """Fait ouvrir la base partagée par chaque instance (ADK y crée ses tables) ; lève
        ``InstanceEnPanne`` si l'une n'y arrive pas."""
        # one first (it makes the tables: three at once race on CREATE TABLE), then the others
        try:
            self.envoyer_ensemble([(None, "sonde", None, "shared")])
            if len(self._pipes) > 1:
                self.envoyer_ensemble([(None, "sonde", None, "shared")] * (len(self._pipes) - 1))
        finally:  # failed too: the next turn (a SQLite one) still goes to the first instance
            self.suivante = 0

    def envoyer(
        self,
        texte: str,
        *,
        user_id: str,
        session_id: str | None,
        stockage: str,
        instance: int | None = None,
    ) -> dict[str, Any]:
        """Envoie un tour à l'instance suivante (ou à ``instance``, de 1 à n : une session
        « collante ») ; renvoie sa réponse."""
        self._check_open()
        if instance is not None:
            if not isinstance(instance, int) or not 1 <= instance <= len(self._pipes):
                raise ValueError(
                    f"instance doit aller de 1 à {len(self._pipes)}\u00a0: {instance!r}"
                )
            self.suivante = instance - 1
        return self.envoyer_ensemble([(texte, user_id, session_id, stockage)])[0]

    def envoyer_ensemble(
        self, tours: list[tuple[str, str, str | None, str]]
    ) -> list[dict[str, Any]]:
        """Envoie plusieurs tours en même temps, chacun à l'instance suivante, puis lit les
        réponses (au plus un tour par instance à la fois : les instances travaillent en
        parallèle)."""
        self._check_open()
        if len(tours) > len(self._pipes):
            raise ValueError("au plus un tour par instance à la fois")
        if any(stockage == "shared" for *_, stockage in tours) and not self.url:
            raise ValueError("la base partagée n'a pas d'URL\u00a0: donnez repartiteur.url.")
        self.attendre()
        targets = []
        for texte, user_id, session_id, stockage in tours:
            index = self.suivante
            self.suivante = (self.suivante + 1) % len(self._pipes)
            request = {"store": stockage, "user_id": user_id, "session_id": session_id}
            request.update(text=texte, **({"url": self.url} if stockage == "shared" else {}))
            pipe = self._pipes[index][0]
            try:
                pipe.write(json.dumps(request, ensure_ascii=False) + "\n")
                pipe.flush()
            except BrokenPipeError:
                raise self._gone(index, ready=False) from None
            targets.append(index)
        answers = [self._read(i, "answer") for i in targets]  # every pipe read, then judged
        for answer, (*_, stockage) in zip(answers, tours, strict=True):
            if "failure" in answer:
                raise _failure(answer, stockage)
        return answers

    def fermer(self) -> None:
        """Arrête les instances (ferme leurs entrées, attend leur fin)."""
        self._closed = True
        for to_child, _ in self._pipes:
            try:
                to_child.close()
            except OSError:
                pass
        launcher = getattr(self, "_launcher", None)
        if launcher is not None:
            if not self.pids:  # never ready: no need to wait for ADK's import to finish
                launcher.kill()
            try:
                launcher.wait(30)
            except subprocess.TimeoutExpired:
                launcher.kill()
                launcher.wait(10)
        for _, from_child in self._pipes:
            from_child.close()
        self._pipes = []
        errors = getattr(self, "_errors", None)
        if errors is not None:
            errors.close()

    def __enter__(self) -> Repartiteur:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.fermer()
