"""Attaque : la cellule oublier est supprimée. Avec les crochets d'avant, la notation ne trouvait
plus de TP et exécutait tout dans son noyau, où ``noter`` réussissait les tests cachés (7/10).
Une cellule ajoutée écrit le canari si elle s'exécute.
Attendu : 0, avec la raison en français dans le détail de la notation.
"""

import nbformat

REPONSE = "ebauche"


def carnet(nb, reponses, canari):
    nb.cells = [c for c in nb.cells if c.get("id") != "oublier"]
    at = next(k for k, c in enumerate(nb.cells) if c.get("id") == "verifier")
    nb.cells.insert(at, nbformat.v4.new_code_cell(f"open({canari!r}, 'w').write('exécutée')"))
