async def oublier(service, user_id: str) -> None:
    """Efface toutes les données de l'élève `user_id` de l'application du tuteur."""
    # VOTRE CODE ICI
    raise NotImplementedError()
