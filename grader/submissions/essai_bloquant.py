import asyncio


async def oublier(service, user_id: str) -> None:
    while True:  # attend une session qui ne disparaît jamais
        await asyncio.sleep(1)


# Un essai dans le notebook, qui ne rend jamais la main (un Ctrl-C du noyau ne l'arrête pas) :
await oublier(None, "alice")
