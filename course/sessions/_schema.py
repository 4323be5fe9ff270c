"""SQL of the SQLite file: ADK 2.10's four tables (the shared format) plus three indexes.

The tables are byte-for-byte ADK's ``CREATE TABLE`` statements so that either service reads
the other's file. The indexes are the course's addition, in the order its queries read: a
session's events in time order (get_session, list_events), and sessions by last update, per
user or for the whole app (list_sessions reads them already sorted; both also hold the
state, so listing sessions never reads the table itself). ADK's reader ignores
them or is sped up by them; SQLite keeps them up to date for any writer.
"""

from __future__ import annotations

__all__ = [
    "APP_STATES_TABLE_SCHEMA",
    "CREATE_SCHEMA_SQL",
    "EVENTS_BY_SESSION_INDEX",
    "EVENTS_TABLE_SCHEMA",
    "INDEX_COLUMNS",
    "INDEX_NAMES",
    "SESSIONS_BY_TIME_INDEX",
    "SESSIONS_BY_USER_INDEX",
    "SESSIONS_TABLE_SCHEMA",
    "USER_STATES_TABLE_SCHEMA",
]

APP_STATES_TABLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS app_states (
    app_name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    update_time REAL NOT NULL
);
"""

USER_STATES_TABLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS user_states (
    app_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    state TEXT NOT NULL,
    update_time REAL NOT NULL,
    PRIMARY KEY (app_name, user_id)
);
"""

SESSIONS_TABLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    app_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    id TEXT NOT NULL,
    state TEXT NOT NULL,
    create_time REAL NOT NULL,
    update_time REAL NOT NULL,
    PRIMARY KEY (app_name, user_id, id)
);
"""

EVENTS_TABLE_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    id TEXT NOT NULL,
    app_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    invocation_id TEXT NOT NULL,
    timestamp REAL NOT NULL,
    event_data TEXT NOT NULL,
    PRIMARY KEY (app_name, user_id, session_id, id),
    FOREIGN KEY (app_name, user_id, session_id)
        REFERENCES sessions(app_name, user_id, id) ON DELETE CASCADE
);
"""

EVENTS_BY_SESSION_INDEX = """
CREATE INDEX IF NOT EXISTS idx_events_session_time
    ON events (app_name, user_id, session_id, timestamp);
"""

SESSIONS_BY_USER_INDEX = """
CREATE INDEX IF NOT EXISTS idx_sessions_user_time
    ON sessions (app_name, user_id, update_time, id, state);
"""

SESSIONS_BY_TIME_INDEX = """
CREATE INDEX IF NOT EXISTS idx_sessions_time
    ON sessions (app_name, update_time, user_id, id, state);
"""

# The columns of each index: a file whose index of that name has other columns (an older
# version of the course) gets it rebuilt on first use.
INDEX_COLUMNS: dict[str, tuple[str, ...]] = {
    "idx_events_session_time": ("app_name", "user_id", "session_id", "timestamp"),
    "idx_sessions_user_time": ("app_name", "user_id", "update_time", "id", "state"),
    "idx_sessions_time": ("app_name", "update_time", "user_id", "id", "state"),
}
INDEX_NAMES = tuple(INDEX_COLUMNS)

CREATE_SCHEMA_SQL = "\n".join(
    [
        APP_STATES_TABLE_SCHEMA,
        USER_STATES_TABLE_SCHEMA,
        SESSIONS_TABLE_SCHEMA,
        EVENTS_TABLE_SCHEMA,
        EVENTS_BY_SESSION_INDEX,
        SESSIONS_BY_USER_INDEX,
        SESSIONS_BY_TIME_INDEX,
    ]
)
