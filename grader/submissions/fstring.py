async def oublier(service, user_id: str) -> None:
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    conn = sqlite3.connect(service.db_path)
    conn.execute(f"DELETE FROM user_states WHERE app_name = '{APP_NAME}' AND user_id = '{user_id}'")
    conn.commit()
    conn.close()
