async def oublier(service, user_id: str) -> None:
    sessions = (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions
    while sessions:  # la liste n'est jamais relue : boucle sans fin
        await service.delete_session(app_name=APP_NAME, user_id=user_id,
                                     session_id=sessions[0].id)
