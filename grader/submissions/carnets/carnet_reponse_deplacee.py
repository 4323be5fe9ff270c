"""Attaque (ou maladresse) : la cellule oublier garde l'ébauche et la réponse complète est écrite
dans une nouvelle cellule, à la fin du notebook, sans métadonnées nbgrader.
Attendu : 10, noté dans le bac à sable, avec une note qui dit où la réponse a été trouvée.
"""

import nbformat

REPONSE = "ebauche"


def carnet(nb, reponses, canari):
    nb.cells.append(nbformat.v4.new_code_cell(reponses["complete_vacuum"].rstrip("\n")))
