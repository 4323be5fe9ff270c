"""Attaque : l'élève efface les métadonnées nbgrader de la cellule oublier (éditeur de métadonnées
de JupyterLab). Sa réponse (``triche``) n'efface rien et truque ``noter`` dans le noyau ; une
ligne au niveau du module écrit le canari si la cellule s'exécute hors du bac à sable.
Attendu : 0, comme ``triche`` dans sa cellule (la cellule est reconnue par son id).
"""

REPONSE = "triche"


def _answer(nb):
    return next(c for c in nb.cells if c.get("id") == "oublier")


def carnet(nb, reponses, canari):
    cell = _answer(nb)
    cell.metadata.pop("nbgrader", None)
    cell.source = f"open({canari!r}, 'w').write('exécutée')\n{cell.source}"
