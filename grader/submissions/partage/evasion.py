# Tente de sortir de sa base avant de faire le travail : devenir superutilisateur (postgres),
# ouvrir une autre base, lancer une commande sur la machine du serveur (COPY ... PROGRAM), lire
# ses fichiers (pg_read_file), joindre un service de la machine en TCP, lire le dossier du
# cluster ou le carnet de notes. Si UNE de ces tentatives réussit, elle ne fait rien (0 point) ;
# si toutes échouent, elle efface l'élève correctement : la note complète montre que le bac à
# sable les a toutes bloquées.
import asyncio
import os
import socket
import sys


async def oublier_partage(sql, user_id):
    import asyncpg

    reussies = []
    cours = os.path.dirname(sys.prefix)  # le dossier du cours, à côté de son .venv
    for chemin in ("/etc/passwd", "/etc/hostname", os.path.join(cours, "grader"),
                   os.path.join(cours, "solutions")):
        if os.path.exists(chemin):
            return  # un fichier de la machine ou du cours est lisible : rien de plus à faire
    sockets = []
    for racine in ("/tmp", "/run", "/var/run"):
        for dossier, _sous, fichiers in os.walk(racine):
            sockets += [dossier for f in fichiers if f.startswith(".s.PGSQL")]
    reussies += [d for d in sockets if os.path.exists(os.path.join(d, "donnees"))]
    for dossier in sockets:
        for utilisateur, base in (("postgres", "postgres"), ("postgres", "tuteur"),
                                  ("eleve", "postgres")):
            try:
                c = await asyncpg.connect(host=dossier, user=utilisateur, database=base)
            except Exception:
                continue
            reussies.append(f"{utilisateur}@{base}")
            await c.close()
    for requete in ("COPY (SELECT 1) TO PROGRAM 'id'", "SELECT pg_read_file('PG_VERSION')",
                    "SELECT lo_import('/etc/passwd')", "CREATE EXTENSION dblink"):
        try:
            await sql(requete)
            reussies.append(requete)
        except Exception:
            pass
    for port in (22, 5432, 8000, 8888):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            s.close()
            reussies.append(f"tcp {port}")
        except OSError:
            pass
    if reussies:
        return
    await sql("DELETE FROM sessions WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("DELETE FROM user_states WHERE app_name = $1 AND user_id = $2", APP_NAME, user_id)
    await sql("VACUUM FULL events, sessions, user_states")
    await asyncio.sleep(0)
