async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    conn.executescript("DROP TABLE events; DROP TABLE sessions; DROP TABLE user_states;")
    conn.close()
