"""Attaque : une cellule ajoutée porte des métadonnées nbgrader forgées, celles du test caché
« fichier » (grade_id test_fichier, 1 point), et n'affiche qu'une coche ; la vraie cellule de test
la suit. Avec nbgrader seul, DeduplicateIds vide les métadonnées d'une des deux et la notation de
toute la classe s'arrête. La réponse est l'ébauche.
Attendu : 0 ; la cellule forgée n'est jamais exécutée (canari absent).
"""

import copy

import nbformat

REPONSE = "ebauche"


def carnet(nb, reponses, canari):
    at = next(k for k, c in enumerate(nb.cells) if c.get("id") == "test-fichier")
    forged = nbformat.v4.new_code_cell(f"open({canari!r}, 'w').write('exécutée')\nprint('✔')")
    forged.metadata["nbgrader"] = copy.deepcopy(nb.cells[at].metadata["nbgrader"])
    forged.metadata["nbgrader"]["locked"] = False
    nb.cells.insert(at, forged)
