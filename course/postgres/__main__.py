"""``python -m course.postgres``: what this machine offers lesson 7 and the shared-database TP.

`make lab` prints it before opening JupyterLab: the PostgreSQL the course will start (its folder
and version), or the one sentence that says what to install and what to skip meanwhile. Always
exits 0: the rest of the course works without PostgreSQL.
"""

from __future__ import annotations

import subprocess

__all__ = ["main"]

SKIP = (
    "en attendant, la leçon 7 (07_partager_la_memoire) passe ses cellules PostgreSQL et le "
    "second TP (oublier_partage) ne peut pas être noté ici\u00a0; le reste du cours fonctionne"
)


def main() -> int:
    try:
        from course.postgres._server import PostgresIndisponible, binaires_postgres
    except ImportError:  # pwd, fcntl: a Unix system (Windows: WSL 2)
        unix = "il demande Linux ou macOS (sous Windows, WSL 2)"
        print(f"PostgreSQL du cours\u00a0: {unix}\u00a0; {SKIP}.")
        return 0
    try:
        binaries = binaires_postgres()
    except PostgresIndisponible as err:
        print(f"{str(err).rstrip('.')}\u00a0; {SKIP}.")
        return 0
    done = subprocess.run([str(binaries / "postgres"), "--version"], capture_output=True, text=True)
    version = done.stdout.strip().rsplit(" ", 1)[-1] if done.returncode == 0 else "?"
    print(f"PostgreSQL {version} pour la leçon 7 et le TP oublier_partage\u00a0: {binaries}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
