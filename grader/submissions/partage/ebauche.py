async def oublier_partage(sql, user_id):
    """Efface un élève de la base partagée : ses sessions, ses événements, son état user:."""
    # VOTRE CODE ICI
    raise NotImplementedError()
