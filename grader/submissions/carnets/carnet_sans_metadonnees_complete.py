"""Attaque (sans malice) : toutes les métadonnées nbgrader du notebook sont effacées, tests
compris. Une réponse complète garde sa vraie note : la notation retrouve la cellule oublier par
son id et remet les cellules de l'enseignant depuis la version distribuée.
Attendu : 10.
"""

REPONSE = "complete_vacuum"


def carnet(nb, reponses, canari):
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
