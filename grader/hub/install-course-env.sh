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
#                        (--force: a full rebuild, in a new release as always)
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
# Result (every run that changes something makes a new release; a running hub keeps its own):
#   $PREFIX/releases/<date>-<fingerprint>/  one release: env/ and etc/ below, never modified later
#   $PREFIX/current      symlink to the release in service, switched atomically (rename);
#   $PREFIX/previous     the one before it, kept to roll back (see ADMIN.md, « Mettre à jour »)
#   $PREFIX/env          -> current/env: jupyterlab, nbgrader, the `course` package,
#                        jupyterhub-singleuser, jupyterhub-idle-culler, cours-singleuser, cours-roster
#   $PREFIX/etc          -> current/etc: jupyterhub_config.py, roster.py, the per-group Jupyter config
#   Older releases are removed unless a running process (hub, server, kernel) still uses them.
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
# on any exit: the scratch build folder goes, and so does a release that was not finished
build="" pending=""
cleanup() {
  [ -z "$build" ] || rm -rf "$build"
  [ -z "$pending" ] || rm -rf "$pending"
}
trap cleanup EXIT
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
  # the hub's recipes are not the instructors' business; roster.py stays: the class list's one
  # reader and id rule, which `make students`, collect and the erasure load (grading/classroom/ids.py)
  find "$dest/grader/hub" -mindepth 1 -maxdepth 1 ! -name roster.py -exec rm -rf {} +
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

# Releases: every install that changes something goes into a new folder,
# $PREFIX/releases/<date>-<fingerprint>/{env,etc}, checked as `nobody`, then made current by
# one atomic rename of the symlink $PREFIX/current ($PREFIX/env and $PREFIX/etc point through
# it). A running hub and its servers keep the release they started from: its scripts name
# their own release's Python. The previous release stays ($PREFIX/previous, to roll back), and
# so does any release a running process still uses; older ones are removed.
# The stamp (dependency list, JupyterHub spec, Python) decides between a full build and a copy
# of the current release (hard links) with only the `course` package reinstalled.
stamp_value="$(cat "$REPO/pyproject.toml" "$REPO/requirements/hub.txt" | sha256sum | cut -c1-16) $JUPYTERHUB_SPEC $CULLER_SPEC $("$PYTHON" -V)"
fingerprint="$(
  cd "$REPO" && {
    echo "$stamp_value"
    find course "grader/hub" -type f ! -path '*/__pycache__/*' ! -name '*.pyc' -print0 \
      | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -c1-12
)"

umask 022
mkdir -p "$PREFIX/releases"
chmod 0755 "$PREFIX" "$PREFIX/releases"
# one install at a time on a prefix (two would switch and prune under each other)
exec 9>"$PREFIX/.install.lock"
flock 9

# An install made before releases existed: $PREFIX/env and $PREFIX/etc are real folders.
current=""
if [ -L "$PREFIX/current" ]; then
  current="$(readlink -f "$PREFIX/current")"
elif [ -d "$PREFIX/env" ] && [ ! -L "$PREFIX/env" ]; then
  current="$PREFIX/releases/ancienne-$(date -u +%Y%m%dT%H%M%SZ)"
  log "ancienne installation déplacée / previous layout moved to $current"
  mkdir -p "$current"
  mv "$PREFIX/env" "$current/env"
  [ -d "$PREFIX/etc" ] && [ ! -L "$PREFIX/etc" ] && mv "$PREFIX/etc" "$current/etc"
  ln -sfn "releases/$(basename "$current")" "$PREFIX/current"
fi
for part in env etc; do
  if [ ! -L "$PREFIX/$part" ]; then
    [ -e "$PREFIX/$part" ] && die "$PREFIX/$part existe et n'est pas un lien : déplacez-le / not a symlink"
    ln -s "current/$part" "$PREFIX/$part"
  fi
done

if [ "$FORCE" = 0 ] && [ -n "$current" ] && [ -f "$current/.course-fingerprint" ] \
  && [ "$(cat "$current/.course-fingerprint")" = "$fingerprint" ]; then
  log "version à jour / release up to date: $current"
else
  release="$PREFIX/releases/$(date -u +%Y%m%dT%H%M%SZ)-$fingerprint"
  [ -e "$release" ] && release="$release-$$"
  mkdir -m 0755 "$release"
  # a failed build never becomes current, and leaves no half-made release behind
  pending="$release"

  # Build the course from a scratch copy: pip must not write build/ or *.egg-info into the repo.
  build="$(mktemp -d)"
  cp -r "$REPO/course" "$REPO/pyproject.toml" "$build/"
  [ -f "$REPO/README.md" ] && cp "$REPO/README.md" "$build/"
  [ -f "$REPO/LICENSE" ] && cp "$REPO/LICENSE" "$build/"
  find "$build" -name __pycache__ -prune -exec rm -rf {} +

  if [ "$FORCE" = 0 ] && [ -n "$current" ] && [ -f "$current/env/.course-stamp" ] \
    && [ "$(cat "$current/env/.course-stamp")" = "$stamp_value" ]; then
    log "nouvelle version : copie de $current et paquet course / new release from $current"
    # hard links: cheap, and nothing below writes into a shared file (pip and sed replace files)
    cp -al "$current/env" "$release/env" 2>/dev/null || cp -a "$current/env" "$release/env"
    # the scripts name the Python of the release they were installed in (its path at the time)
    old_env="$(head -n 1 "$current/env/bin/pip" | sed -E 's|^#! *||; s|/bin/python[0-9.]*$||')"
    { grep -rlIF -- "$old_env/" "$release/env/bin" || true; } | while IFS= read -r script; do
      sed -i "s|$old_env/|$release/env/|g" "$script"
    done
    "$release/env/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
      --force-reinstall "${EXTRA_PIP[@]}" "$build"
  else
    log "création du venv / creating the venv in $release/env"
    "$PYTHON" -m venv "$release/env"
    "$release/env/bin/python" -m pip install -q --disable-pip-version-check -U pip "${EXTRA_PIP[@]}"
    log "installation du cours et de JupyterHub / installing the course and JupyterHub"
    # the locked set is complete by itself: --no-deps, so that pip neither asks for a hash of a
    # package the lock leaves out on purpose (rfc3987-syntax: pyproject.toml says why) nor
    # downloads it unhashed; then the course and the hub's version, already in the lock
    "$release/env/bin/python" -m pip install -q --disable-pip-version-check "${EXTRA_PIP[@]}" \
      --no-deps --require-hashes -r "$REPO/requirements/hub.txt"
    "$release/env/bin/python" -m pip install -q --disable-pip-version-check "${EXTRA_PIP[@]}" \
      --no-deps "$build" "$JUPYTERHUB_SPEC" "$CULLER_SPEC"
    # a JUPYTERHUB_SPEC outside the lock could need what --no-deps skipped: said, not half-built
    missing="$("$release/env/bin/python" -m pip check 2>&1 | grep -v 'rfc3987-syntax' || true)"
    if [ -n "$missing" ] && ! printf '%s' "$missing" | grep -q '^No broken requirements'; then
      echo "install-course-env: dépendances manquantes / missing dependencies:" >&2
      printf '%s\n' "$missing" >&2
      exit 1
    fi
  fi
  echo "$stamp_value" >"$release/env/.course-stamp"

  # Per-group Jupyter configuration and the hub's configuration file.
  mkdir -p "$release/etc"
  cp -r "$HERE/jupyter-config/instructors" "$HERE/jupyter-config/students" "$release/etc/"
  cp "$HERE/jupyterhub_config.py" "$HERE/roster.py" "$HERE/login_guard.py" "$HERE/one_course.py" \
    "$HERE/exchange_check.py" "$HERE/roster_sync.py" \
    "$HERE/verified_spawner.py" "$HERE/capped_spawner.py" "$HERE/cgroup_caps.py" "$release/etc/"
  install -m 0755 "$HERE/cours-singleuser" "$release/env/bin/cours-singleuser"
  cat >"$release/env/bin/cours-roster" <<ROSTER
#!/bin/sh
exec "$release/env/bin/python" "$release/etc/roster.py" "\$@"
ROSTER
  chmod 0755 "$release/env/bin/cours-roster"
  chmod -R a+rX "$release"

  # Checked as an unprivileged user before it becomes current.
  runuser -u nobody -- "$release/env/bin/python" -c \
    'import course, nbgrader, jupyterlab, jupyterhub; print("ok", nbgrader.__version__)' >/dev/null \
    || die "l'environnement ne marche pas pour un utilisateur ordinaire / env unusable by a regular user"
  echo "$fingerprint" >"$release/.course-fingerprint"
  pending=""

  # The switch: one rename(2) of a symlink, atomic for every reader.
  if [ -n "$current" ]; then
    ln -sfn "releases/$(basename "$current")" "$PREFIX/.previous.new"
    mv -Tf "$PREFIX/.previous.new" "$PREFIX/previous"
  fi
  ln -sfn "releases/$(basename "$release")" "$PREFIX/.current.new"
  mv -Tf "$PREFIX/.current.new" "$PREFIX/current"
  log "version en service / current release: $release (précédente / previous: ${current:-aucune})"
  current="$release"
fi

# Old releases: removed, except the current one, the previous one and any that a running
# process (a hub, a server, a kernel) still uses: its command line or a mapped file names it.
# (The path is read from a file, not given on grep's command line, which would name it.)
release_in_use() {
  grep -qsaF -f <(printf '%s/\n' "$1") /proc/[0-9]*/cmdline /proc/[0-9]*/maps
}
previous="$(readlink -f "$PREFIX/previous" 2>/dev/null || true)"
shopt -s nullglob
for old in "$PREFIX"/releases/*/; do
  old="${old%/}"
  if [ "$old" = "$current" ] || [ "$old" = "$previous" ]; then
    continue
  fi
  if release_in_use "$old"; then
    log "gardée, encore utilisée / kept, still in use: $old"
  else
    rm -rf "$old"
    log "ancienne version supprimée / old release removed: $old"
  fi
done

if [ "$TEMPLATE" = 0 ]; then
  rm -rf "$PREFIX/share/cours"
  log "pas de modèle du cours / no course template (COURSE_HUB_TEMPLATE=0)"
else
  install_template
fi

install_exchange

log "prêt / ready: $PREFIX/env/bin/jupyterhub -f $PREFIX/etc/jupyterhub_config.py"
