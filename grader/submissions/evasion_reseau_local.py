# Tentative d'évasion : se connecter à un service de la machine (127.0.0.1 : JupyterHub,
# JupyterLab, ou le port qu'un test indique). Si elle y arrive, elle efface l'élève correctement
# (10/10) ; dans le bac à sable, il n'y a pas de réseau, même local (0/10).
import socket

CIBLE = 0  # un test peut ajouter ici le port d'un service qu'il a démarré


def _connectee():
    for port in ([CIBLE] if CIBLE else []) + [8000, 8081, 8888]:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            pass
    return False


async def oublier(service, user_id: str) -> None:
    if not _connectee():
        return
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
