"""The hidden learners of ``oublier_partage``, on the instructor's side, out of ``course``."""

from __future__ import annotations

from course.labo.partage import Learner, PartageScenario

__all__ = ["HIDDEN_PARTAGE"]

HIDDEN_PARTAGE = PartageScenario(
    target=Learner(
        "margaux.kerbrat",
        "Kerbrat",
        ("Bonjour, je m'appelle Margaux Kerbrat", "3", "[0, 2, 4]"),
    ),
    quoted=Learner("d'artagnan", "Gascogne", ("Bonjour, je viens de Gascogne",)),
    unknown="x' OR '1'='1",
    witnesses=(
        Learner("yanis", "Bensalem", ("Bonjour, je m'appelle Yanis Bensalem", "2")),
        Learner("margaux.kerbrat", "Orthodontiste", ("Orthodontiste mardi",), app="agenda"),
        Learner("margaux", "Margot", ("Bonjour, je suis Margot",)),
    ),
)
