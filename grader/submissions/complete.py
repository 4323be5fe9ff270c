async def oublier(service, user_id: str) -> None:
    """Efface l'élève : ses sessions (et leurs événements) puis sa ligne user_states."""
    reponse = await service.list_sessions(app_name=APP_NAME, user_id=user_id)
    for session in reponse.sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=session.id)
    with sqlite3.connect(service.db_path) as conn:
        conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                     (APP_NAME, user_id))
    conn.close()
