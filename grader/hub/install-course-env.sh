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
#   grader/hub/install-course-env.sh [--force]        the environment, its config and the template
#   grader/hub/install-course-env.sh --template-only  only the instructors' course template
#   grader/hub/install-course-env.sh --exchange-only  only the exchange (e.g. to give the
#                        course's folder to the instructor once their account exists)
# Settings (environment variables):
#   COURSE_HUB_PREFIX    where to install               (default /opt/cours-memoire-tuteur)
#   COURSE_HUB_PYTHON    Python 3.11+ readable by all   (default /usr/bin/python3)
#   COURSE_HUB_EXCHANGE  nbgrader exchange folder       (default /srv/nbgrader/exchange)
#   COURSE_HUB_INSTRUCTORS_GROUP  the only Unix group that reads the template (default
#                        cours-enseignants, created if missing; the hub keeps instructors in it)
#   COURSE_HUB_TEMPLATE  "0": no instructors' template (the students' image on Kubernetes)
#   COURSE_ID            nbgrader course id: its exchange folder is made now (default memoire-tuteur)
#   COURSE_HUB_EXCHANGE_OWNER  the account that releases assignments (the instructor, or the
#                        shared grading account): owns the course's exchange folder (default
#                        root: then re-run with --exchange-only once that account exists)
#   JUPYTERHUB_SPEC      pip requirement for JupyterHub (default "jupyterhub>=5,<7"; must match the hub)
#   PIP_ARGS             extra pip arguments (e.g. an internal index or --find-links for offline hubs)
# Result:
#   $PREFIX/env          the venv: jupyterlab, nbgrader, the `course` package, jupyterhub-singleuser,
#                        jupyterhub-idle-culler, cours-singleuser and cours-roster
#   $PREFIX/etc          jupyterhub_config.py, roster.py and the per-group Jupyter config
#   $PREFIX/share/cours  the instructors' course template (solutions/, grader/ with the hidden
#                        tests, notebooks/): root:$GROUP, 0750, students cannot read it
#   $EXCHANGE            nbgrader's exchange, mode 1777 (everyone writes, nobody deletes others' files)
#                        with $EXCHANGE/$COURSE_ID made now, owned by COURSE_HUB_EXCHANGE_OWNER
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PREFIX="${COURSE_HUB_PREFIX:-/opt/cours-memoire-tuteur}"
PYTHON="${COURSE_HUB_PYTHON:-/usr/bin/python3}"
EXCHANGE="${COURSE_HUB_EXCHANGE:-/srv/nbgrader/exchange}"
JUPYTERHUB_SPEC="${JUPYTERHUB_SPEC:-jupyterhub>=5,<7}"
INSTRUCTORS_GROUP="${COURSE_HUB_INSTRUCTORS_GROUP:-cours-enseignants}"
TEMPLATE="${COURSE_HUB_TEMPLATE:-1}"
COURSE_ID="${COURSE_ID:-memoire-tuteur}"
EXCHANGE_OWNER="${COURSE_HUB_EXCHANGE_OWNER:-root}"
# installed next to JupyterHub in the hub's environment (the hub runs it as a service)
CULLER_SPEC="jupyterhub-idle-culler>=1.4,<3"
read -r -a EXTRA_PIP <<<"${PIP_ARGS:-}"
FORCE=0 TEMPLATE_ONLY=0 EXCHANGE_ONLY=0
case "${1:-}" in
  --force) FORCE=1 ;;
  --template-only) TEMPLATE_ONLY=1 ;;
  --exchange-only) EXCHANGE_ONLY=1 ;;
  "") ;;
  *) echo "install-course-env: option inconnue / unknown option: $1" >&2; exit 2 ;;
esac

die() { echo "install-course-env: $*" >&2; exit 1; }
log() { echo "install-course-env: $*"; }

[ "$(id -u)" = 0 ] || die "à lancer en root (il crée $PREFIX et $EXCHANGE) / must run as root"

# The instructors' course template: sources with their solutions and the grader's hidden tests.
# Copied into an instructor's home at first start; never readable by students.
install_template() {
  local dest="$PREFIX/share/cours"
  getent group "$INSTRUCTORS_GROUP" >/dev/null || groupadd --system "$INSTRUCTORS_GROUP" \
    || die "impossible de créer le groupe $INSTRUCTORS_GROUP / cannot create the group"
  umask 022
  mkdir -p "$PREFIX/share"
  chmod 0755 "$PREFIX" "$PREFIX/share"
  rm -rf "$dest"
  # created private: nothing is readable by others, even for a moment
  mkdir -m 0700 "$dest"
  # Only the course's own files (tracked by git when this is a checkout): never a local
  # gradebook, submissions or feedback left in the source tree.
  if git -C "$REPO" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$REPO" ls-files -z -- solutions notebooks grader \
      | tar -C "$REPO" --ignore-failed-read --null -T - -cf - 2>/dev/null | tar -C "$dest" -xf -
  else
    for part in solutions notebooks grader; do
      [ -d "$REPO/$part" ] && cp -r "$REPO/$part" "$dest/"
    done
    rm -rf "$dest/grader/"{submitted,autograded,feedback,solution} "$dest/grader/"gradebook.db*
  fi
  rm -rf "$dest/grader/hub"
  find "$dest" -name __pycache__ -prune -exec rm -rf {} +
  find "$dest" -name '.ipynb_checkpoints' -prune -exec rm -rf {} +
  chown -R "root:$INSTRUCTORS_GROUP" "$dest"
  chmod -R u=rwX,g=rX,o= "$dest"
  chmod 0750 "$dest"
  log "modèle du cours / course template: $dest (root:$INSTRUCTORS_GROUP 0750)"
}

# nbgrader's exchange, made before any student exists. Its root stays writable by all and
# sticky (nbgrader requires it); the course's own folder is made here, owned by the account
# that releases (an instructor, or the shared grading account), with nbgrader's modes:
# a student can neither create it first (squat) nor remove or rename it.
install_exchange() {
  local course="$EXCHANGE/$COURSE_ID" owner="$EXCHANGE_OWNER"
  id -u "$owner" >/dev/null 2>&1 \
    || die "COURSE_HUB_EXCHANGE_OWNER : compte inconnu « $owner » / unknown account"
  getent group "$INSTRUCTORS_GROUP" >/dev/null || groupadd --system "$INSTRUCTORS_GROUP" \
    || die "impossible de créer le groupe $INSTRUCTORS_GROUP / cannot create the group"
  umask 022
  mkdir -p "$EXCHANGE"
  chmod 1777 "$EXCHANGE"
  local parent
  parent="$(dirname "$EXCHANGE")"
  while [ "$parent" != "/" ]; do chmod a+x "$parent"; parent="$(dirname "$parent")"; done
  if [ -e "$course" ] || [ -L "$course" ]; then
    local found
    found="$(stat -c %U "$course")"
    if [ -L "$course" ] || [ ! -d "$course" ] || { [ "$found" != "$owner" ] && [ "$found" != root ]; }; then
      die "$course existe déjà et appartient à « $found » (pas à $owner) : vérifiez qui l'a créé," \
        "déplacez-le puis relancez / already exists, owned by $found: move it aside and re-run"
    fi
  fi
  mkdir -p "$course/outbound" "$course/inbound" "$course/feedback"
  chown "$owner:$INSTRUCTORS_GROUP" "$course" "$course/outbound" "$course/inbound" "$course/feedback"
  chmod 0755 "$course" "$course/outbound"
  chmod 2733 "$course/inbound"  # students drop submissions, never list them
  chmod 0711 "$course/feedback"
  log "échange / exchange: $course ($owner:$INSTRUCTORS_GROUP)"
}

if [ "$TEMPLATE_ONLY" = 1 ]; then
  install_template
  exit 0
fi
if [ "$EXCHANGE_ONLY" = 1 ]; then
  install_exchange
  exit 0
fi
[ -x "$PYTHON" ] || die "Python introuvable : $PYTHON (COURSE_HUB_PYTHON) / Python not found"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || die "$PYTHON est trop ancien : Python 3.11+ requis / Python 3.11+ required"
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null \
  || die "le module venv manque : apt-get install python3-venv / venv module missing"
# The interpreter itself must run for an unprivileged user (not a symlink into /root).
runuser -u nobody -- "$PYTHON" -c 'import sys' 2>/dev/null \
  || die "$PYTHON n'est pas lisible par les autres utilisateurs (sous /root ?) / not readable by other users"

# Stamp: the dependency list and the JupyterHub spec decide whether the env must be rebuilt.
stamp_value="$(cat "$REPO/pyproject.toml" "$REPO/requirements/hub.txt" | sha256sum | cut -c1-16) $JUPYTERHUB_SPEC $CULLER_SPEC $("$PYTHON" -V)"
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
    "$build" "$JUPYTERHUB_SPEC" "$CULLER_SPEC"
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
cp "$HERE/jupyterhub_config.py" "$HERE/roster.py" "$HERE/login_guard.py" "$HERE/roster_sync.py" \
  "$HERE/verified_spawner.py" "$HERE/capped_spawner.py" "$HERE/cgroup_caps.py" "$PREFIX/etc/"
install -m 0755 "$HERE/cours-singleuser" "$PREFIX/env/bin/cours-singleuser"
cat >"$PREFIX/env/bin/cours-roster" <<ROSTER
#!/bin/sh
exec "$PREFIX/env/bin/python" "$PREFIX/etc/roster.py" "\$@"
ROSTER
chmod 0755 "$PREFIX/env/bin/cours-roster"
chmod -R a+rX "$PREFIX/env" "$PREFIX/etc"

if [ "$TEMPLATE" = 0 ]; then
  rm -rf "$PREFIX/share/cours"
  log "pas de modèle du cours / no course template (COURSE_HUB_TEMPLATE=0)"
else
  install_template
fi

install_exchange

# Final check, as an unprivileged user: the env runs and imports what a learner's server needs.
runuser -u nobody -- "$PREFIX/env/bin/python" -c \
  'import course, nbgrader, jupyterlab, jupyterhub; print("ok", nbgrader.__version__)' >/dev/null \
  || die "l'environnement ne marche pas pour un utilisateur ordinaire / env unusable by a regular user"
log "prêt / ready: $PREFIX/env/bin/jupyterhub -f $PREFIX/etc/jupyterhub_config.py"
