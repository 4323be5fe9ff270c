# Le contrôleur face à une vue sans fin : après avoir bien effacé l'élève, oublier remplace la
# table events par une vue sur une requête récursive qui ne se termine jamais. Le contrôleur ne
# lit que de vraies tables du schéma attendu (0/10, base abîmée), sans attendre.
async def oublier(service, user_id: str) -> None:
    await _efface(service, user_id)
    conn = sqlite3.connect(service.db_path)
    try:
        with conn:
            conn.execute("ALTER TABLE events RENAME TO events_vrais")
            conn.execute(
                "CREATE VIEW events AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
                "SELECT i + 1 FROM n) SELECT e.* FROM n, events_vrais AS e"
            )
    except sqlite3.Error:
        pass
    finally:
        conn.close()


async def _efface(service, user_id):
    for s in (await service.list_sessions(app_name=APP_NAME, user_id=user_id)).sessions:
        await service.delete_session(app_name=APP_NAME, user_id=user_id, session_id=s.id)
    conn = sqlite3.connect(service.db_path)
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        with conn:
            for table in ("events", "sessions", "user_states"):
                conn.execute(f"DELETE FROM {table} WHERE app_name = ? AND user_id = ?",
                             (APP_NAME, user_id))
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()

