async def oublier(service, user_id: str) -> None:
    """Efface l'élève, puis réécrit le fichier… mais VACUUM arrive avant commit()."""
    reponse = await service.list_sessions(app_name=APP_NAME, user_id=user_id)
    for session in reponse.sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=session.id)
    conn = sqlite3.connect(service.db_path)
    conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                 (APP_NAME, user_id))
    conn.execute("VACUUM")  # OperationalError : la transaction du DELETE est encore ouverte
    conn.commit()
    conn.close()
