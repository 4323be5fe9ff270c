import time


async def oublier(service, user_id: str) -> None:
    time.sleep(3600)  # bloque tout le processus, même la boucle asyncio
