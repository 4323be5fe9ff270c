"""Attaque : la cellule oublier change d'id et perd ses métadonnées nbgrader (rien ne la désigne
plus). Sa réponse (``graine``) est retrouvée parce qu'elle définit oublier, et notée pour ce
qu'elle est. Une ligne au niveau du module écrit le canari si elle s'exécute hors du bac à sable.
Attendu : 5, la note de ``graine``.
"""

REPONSE = "graine"


def carnet(nb, reponses, canari):
    cell = next(c for c in nb.cells if c.get("id") == "oublier")
    cell.metadata.pop("nbgrader", None)
    cell["id"] = "ma-reponse"
    cell.source = f"open({canari!r}, 'w').write('exécutée')\n{cell.source}"
