"""Attaque (souvent involontaire) : la cellule oublier est copiée-collée (JupyterLab donne un
nouvel id à la copie et garde ses métadonnées nbgrader), l'original garde l'ébauche, la copie
reçoit la réponse complète. Avec nbgrader seul, DeduplicateIds vide les métadonnées d'une des deux
et CheckCellMetadata arrête la notation de toute la classe.
Attendu : 10 (la dernière définition d'oublier est notée, comme « Exécuter tout » la laisserait).
"""

import copy

REPONSE = "ebauche"


def carnet(nb, reponses, canari):
    at = next(k for k, c in enumerate(nb.cells) if c.get("id") == "oublier")
    twin = copy.deepcopy(nb.cells[at])
    twin["id"] = "oublier-copie"
    twin.source = reponses["complete_vacuum"].rstrip("\n")
    nb.cells.insert(at + 1, twin)
