"""The attacks on the shared-database lab's server (issue 32, point 4: its memory, disk and
settings outside every limit), with the small limits that make each quick and its expected end.
One list for the tests that grade them as root (test_oublier_partage.py) and as an ordinary
instructor (test_normal_user.py). The samples of grader/submissions/partage (attendus.json) are
graded beside them with the default limits."""

from __future__ import annotations

from helpers import REPO

__all__ = ["CONCURRENT_HOGS", "DISK_FILLER", "LIMIT_ATTACKS", "MEMORY_HOG", "SAMPLES", "SMALL"]

SAMPLES = REPO / "grader" / "submissions" / "partage"
SMALL = {"temp_file_kb": 8 * 1024, "connections": 3}

# an UNLOGGED table of a few GB: the cluster's folder is in the budget
DISK_FILLER = (SAMPLES / "disque_plein.py").read_text(encoding="utf-8")
MEMORY_HOG = """
async def oublier_partage(sql, user_id):
    await sql("SELECT length(string_agg(repeat('x', 1000000), '')) FROM generate_series(1, 400)")
"""
# the attack that crashed the server (OOM, recovery): three connections, each process bounded
CONCURRENT_HOGS = """
import asyncio

async def oublier_partage(sql, user_id):
    requete = "SELECT length(string_agg(repeat('x', 1000000), '')) FROM generate_series(1, 200)"
    await asyncio.gather(*(sql(requete) for _ in range(12)), return_exceptions=True)
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
"""

# name -> (source, ServerLimits keywords, the calls' statuses, score)
LIMIT_ATTACKS: dict[str, tuple[str, dict, list[str], int]] = {
    "disque": (DISK_FILLER, {**SMALL, "disk_bytes": 32 << 20}, ["disk"], 0),
    "memoire": (
        MEMORY_HOG,
        {**SMALL, "memory_bytes": 160 << 20, "backend_bytes": 1 << 30},
        ["memory"],
        0,
    ),
    "agregats_concurrents": (CONCURRENT_HOGS, {**SMALL, "backend_bytes": 96 << 20}, ["ok"] * 4, 6),
}
