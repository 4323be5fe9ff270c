import sqlite3


async def oublier(service, user_id: str) -> None:
    conn = sqlite3.connect(service.db_path)
    with conn:
        conn.execute("DELETE FROM sessions WHERE app_name = ? AND user_id = ?", (APP_NAME, user_id))
        conn.execute("DELETE FROM user_states WHERE app_name = ? AND user_id = ?",
                     (APP_NAME, user_id))
    conn.close()
