async def oublier(service, user_id: str) -> None:
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    etat = await service.get_user_state(app_name=APP_NAME, user_id=user_id)
    conn = sqlite3.connect(service.db_path)
    conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                 (APP_NAME, etat["nom"]))  # KeyError : l'état ne contient pas de clé "nom"
    conn.commit()
