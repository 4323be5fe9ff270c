#!/usr/bin/env bash
# Installe l'environnement Python partagé du cours pour un JupyterHub de classe.
# Installs the course's shared Python environment for a classroom JupyterHub.
#
# Why: every learner's server runs as that learner's Unix user, so its Python must live where
# every user can read it. A venv that symlinks into /root (pyenv, a root-only conda) fails for
# them with "Permission denied". This script builds a venv from a system Python (Debian's
# /usr/bin/python3 by default) under a world-readable prefix and checks it as user `nobody`.
#
# Usage (as root):
#   grader/hub/install-course-env.sh [--force]
# Settings (environment variables):
#   COURSE_HUB_PREFIX    where to install               (default /opt/cours-memoire-tuteur)
#   COURSE_HUB_PYTHON    Python 3.11+ readable by all   (default /usr/bin/python3)
#   COURSE_HUB_EXCHANGE  nbgrader exchange folder       (default /srv/nbgrader/exchange)
#   JUPYTERHUB_SPEC      pip requirement for JupyterHub (default "jupyterhub>=5,<7"; must match the hub)
#   PIP_ARGS             extra pip arguments (e.g. an internal index or --find-links for offline hubs)
# Result:
#   $PREFIX/env          the venv: jupyterlab, nbgrader, the `course` package, jupyterhub-singleuser
#   $PREFIX/etc          jupyterhub_config.py and the per-group Jupyter config (instructors/, students/)
#   $PREFIX/share/cours  the instructors' course template (solutions/, grader/, notebooks/)
#   $EXCHANGE            nbgrader's exchange, mode 1777 (everyone writes, nobody deletes others' files)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PREFIX="${COURSE_HUB_PREFIX:-/opt/cours-memoire-tuteur}"
PYTHON="${COURSE_HUB_PYTHON:-/usr/bin/python3}"
EXCHANGE="${COURSE_HUB_EXCHANGE:-/srv/nbgrader/exchange}"
JUPYTERHUB_SPEC="${JUPYTERHUB_SPEC:-jupyterhub>=5,<7}"
read -r -a EXTRA_PIP <<<"${PIP_ARGS:-}"
FORCE=0
[ "${1:-}" = "--force" ] && FORCE=1

die() { echo "install-course-env: $*" >&2; exit 1; }
log() { echo "install-course-env: $*"; }

[ "$(id -u)" = 0 ] || die "à lancer en root (il crée $PREFIX et $EXCHANGE) / must run as root"
[ -x "$PYTHON" ] || die "Python introuvable : $PYTHON (COURSE_HUB_PYTHON) / Python not found"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || die "$PYTHON est trop ancien : Python 3.11+ requis / Python 3.11+ required"
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null \
  || die "le module venv manque : apt-get install python3-venv / venv module missing"
# The interpreter itself must run for an unprivileged user (not a symlink into /root).
runuser -u nobody -- "$PYTHON" -c 'import sys' 2>/dev/null \
  || die "$PYTHON n'est pas lisible par les autres utilisateurs (sous /root ?) / not readable by other users"

# Stamp: the dependency list and the JupyterHub spec decide whether the env must be rebuilt.
stamp_value="$(cat "$REPO/pyproject.toml" "$REPO/requirements/hub.txt" | sha256sum | cut -c1-16) $JUPYTERHUB_SPEC $("$PYTHON" -V)"
stamp_file="$PREFIX/env/.course-stamp"

umask 022
mkdir -p "$PREFIX"
chmod 0755 "$PREFIX"
if [ "$FORCE" = 1 ] || [ ! -f "$stamp_file" ] || [ "$(cat "$stamp_file")" != "$stamp_value" ]; then
  log "création du venv / creating the venv in $PREFIX/env"
  rm -rf "$PREFIX/env"
  "$PYTHON" -m venv "$PREFIX/env"
  "$PREFIX/env/bin/python" -m pip install -q --disable-pip-version-check -U pip "${EXTRA_PIP[@]}"
  deps_only=1
else
  log "venv à jour / venv up to date ($stamp_value)"
  deps_only=0
fi

# Build the course from a scratch copy: pip must not write build/ or *.egg-info into the repo.
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
cp -r "$REPO/course" "$REPO/pyproject.toml" "$build/"
[ -f "$REPO/README.md" ] && cp "$REPO/README.md" "$build/"
[ -f "$REPO/LICENSE" ] && cp "$REPO/LICENSE" "$build/"
find "$build" -name __pycache__ -prune -exec rm -rf {} +
if [ "$deps_only" = 1 ]; then
  log "installation du cours et de JupyterHub / installing the course and JupyterHub"
  "$PREFIX/env/bin/python" -m pip install -q --disable-pip-version-check "${EXTRA_PIP[@]}" \
    --require-hashes -r "$REPO/requirements/hub.txt"  # the locked set; then the hub's version
  "$PREFIX/env/bin/python" -m pip install -q --disable-pip-version-check "${EXTRA_PIP[@]}" \
    "$build" "$JUPYTERHUB_SPEC"
  echo "$stamp_value" >"$stamp_file"
else
  # Cheap refresh of the course package itself (its code may have changed).
  "$PREFIX/env/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
    --force-reinstall "${EXTRA_PIP[@]}" "$build"
fi

# Per-group Jupyter configuration and the hub's configuration file.
mkdir -p "$PREFIX/etc"
rm -rf "$PREFIX/etc/instructors" "$PREFIX/etc/students"
cp -r "$HERE/jupyter-config/instructors" "$HERE/jupyter-config/students" "$PREFIX/etc/"
cp "$HERE/jupyterhub_config.py" "$PREFIX/etc/jupyterhub_config.py"
install -m 0755 "$HERE/cours-singleuser" "$PREFIX/env/bin/cours-singleuser"

# The instructors' course template: copied into an instructor's home at first start.
rm -rf "$PREFIX/share/cours"
mkdir -p "$PREFIX/share/cours"
# Only the course's own files (tracked by git when this is a checkout): never a local gradebook,
# submissions or feedback left in the source tree.
if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$REPO" ls-files -z -- solutions notebooks grader \
    | tar -C "$REPO" --ignore-failed-read --null -T - -cf - 2>/dev/null | tar -C "$PREFIX/share/cours" -xf -
else
  for part in solutions notebooks grader; do
    [ -d "$REPO/$part" ] && cp -r "$REPO/$part" "$PREFIX/share/cours/"
  done
  rm -rf "$PREFIX/share/cours/grader/"{submitted,autograded,feedback,solution} \
    "$PREFIX/share/cours/grader/"gradebook.db*
fi
rm -rf "$PREFIX/share/cours/grader/hub"
find "$PREFIX/share/cours" -name __pycache__ -prune -exec rm -rf {} +
find "$PREFIX/share/cours" -name '.ipynb_checkpoints' -prune -exec rm -rf {} +
chmod -R a+rX "$PREFIX"

# nbgrader's exchange: writable by all, sticky so nobody removes someone else's files.
mkdir -p "$EXCHANGE"
chmod 1777 "$EXCHANGE"
parent="$(dirname "$EXCHANGE")"
while [ "$parent" != "/" ]; do chmod a+x "$parent"; parent="$(dirname "$parent")"; done

# Final check, as an unprivileged user: the env runs and imports what a learner's server needs.
runuser -u nobody -- "$PREFIX/env/bin/python" -c \
  'import course, nbgrader, jupyterlab, jupyterhub; print("ok", nbgrader.__version__)' >/dev/null \
  || die "l'environnement ne marche pas pour un utilisateur ordinaire / env unusable by a regular user"
log "prêt / ready: $PREFIX/env/bin/jupyterhub -f $PREFIX/etc/jupyterhub_config.py"
