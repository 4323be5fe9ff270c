"""The copy of the students' notebooks out of nbgrader's exchange, by a process that cannot read
the instructor's files.

The collect (``exchange.OwnerCheckedCollect``) runs as the instructor, who can read the gradebook,
``source/`` and the hidden inputs; all it reads from the exchange was written by a student, who
chooses names, links and timing. A second wall behind the opens without following links: a fresh
child (``python -I -S``, not a fork; the standard library and ``course.system_reason`` only)
confines itself with Landlock (unprivileged, Linux 5.13+, binding on root too) to read only beneath
``inbound/``, write only beneath a fresh staging folder, open no TCP connection (ABI 4+) and signal
no process outside itself (ABI 6+): a link, a path or a bug that points it at
``grader/gradebook.db`` meets ``EACCES``. Without Landlock it copies unconfined and says why.

The job (``OwnerCheckedCollect._job``) is a JSON object on stdin, the answer one on stdout: each
item's notebooks (and ``submission_secret.txt``) in ``<staging>/<out>/``, or nothing on a problem;
an item with ``"keep": true`` (for ``grader/quarantaine/``) copied whole, within one budget for all
the job's set-aside copies, what was not copied in ``"skipped"``.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import course

from ..french.system_reason import french_reason

__all__ = [
    "QUARANTINE_ENTRIES",
    "SECRET",
    "SMALL",
    "TIMESTAMP",
    "Unsafe",
    "is_notebook",
    "landlock_abi",
    "open_dir",
    "read_optional",
    "read_regular",
    "run_copier",
    "serve_job",
    "write_new",
]

QUARANTINE_DEPTH = 4  # folders kept below a set-aside copy
# entries kept of one collect's set-aside copies, all together: a student makes as many as they
# like, of sparse files or empty names that cost them nothing (their bytes: the job's limit, in all)
QUARANTINE_ENTRIES = 1000
TIMESTAMP = "timestamp.txt"
SECRET = "submission_secret.txt"
SMALL = 4096  # bytes: the most a timestamp or a submission secret holds
_UID = "l'uid {}"  # the child cannot read /etc/passwd (Landlock): an owner is a uid
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# Landlock's system calls (one number on every Linux architecture), constants (linux/landlock.h)
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_READ = (1 << 2) | (1 << 3)  # READ_FILE, READ_DIR
# WRITE_FILE, REMOVE_DIR, REMOVE_FILE, MAKE_DIR, MAKE_REG, and TRUNCATE (ABI 3+)
_WRITE = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 7) | (1 << 8) | (1 << 14)
# every file access each ABI knows: all of them handled, so all denied but the rules' own
_HANDLED_FS = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1}
_ALL_FS = (1 << 16) - 1  # ABI 5+: IOCTL_DEV too
_NET_TCP = (1 << 0) | (1 << 1)  # BIND_TCP, CONNECT_TCP (ABI 4+)
_SCOPED = (1 << 0) | (1 << 1)  # abstract Unix sockets and signals outside the domain (ABI 6+)
_NO_LANDLOCK = {
    errno.ENOSYS: "noyau sans Landlock (Linux 5.13 ou plus récent requis)",
    errno.EOPNOTSUPP: "Landlock désactivé au démarrage du noyau (option lsm=)",
    errno.EPERM: "Landlock refusé (profil seccomp d'un conteneur\u00a0?)",
}


class Unsafe(Exception):
    """A file of the exchange that is not a plain file of its owner's: why, in French."""


def _name(name: str) -> str:
    return "le dossier" if name in (".", "") else f"«\u00a0{name}\u00a0»"


def open_dir(path: str | os.PathLike, dir_fd: int | None = None) -> int:
    """A descriptor on the folder `path`, never through a link (``Unsafe`` otherwise)."""
    try:
        return os.open(path, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        what = _name(os.path.basename(path))
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise Unsafe(f"{what} n'est pas un dossier (lien\u00a0?)") from exc
        raise Unsafe(f"{what} illisible ({french_reason(exc)})") from exc


def read_regular(
    dir_fd: int, name: str, uid: int | None, limit: int, owner: Callable[[int], str] = _UID.format
) -> tuple[bytes, os.stat_result]:
    """The bytes of the plain file `name` in the folder `dir_fd`, opened without following a
    link and checked on the opened descriptor: a regular file with no other hard link, owned by
    `uid` (any owner when None), of at most `limit` bytes."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Unsafe(f"{_name(name)} est un lien symbolique") from exc
        raise Unsafe(f"{_name(name)} illisible ({french_reason(exc)})") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unsafe(f"{_name(name)} n'est pas un fichier")
        if info.st_nlink != 1:  # a hard link to a file the student could not copy
            raise Unsafe(f"{_name(name)} a {info.st_nlink} liens physiques")
        if uid is not None and info.st_uid != uid:
            raise Unsafe(f"{_name(name)} appartient à {owner(info.st_uid)}")
        if info.st_size > limit:
            raise Unsafe(f"{_name(name)} est trop gros ({info.st_size} octets, limite {limit})")
        os.set_blocking(fd, True)
        data = bytearray()  # at most one byte past the limit, should the file grow meanwhile
        while len(data) <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - len(data)))):
            data += chunk
        if len(data) > limit:
            raise Unsafe(f"{_name(name)} est trop gros (plus de {limit} octets)")
        return bytes(data), info
    finally:
        os.close(fd)


def read_optional(dir_fd: int, name: str, uid: int | None, limit: int) -> bytes | None:
    """`read_regular`'s bytes, or None when the file is missing or not safe to read."""
    try:
        return read_regular(dir_fd, name, uid, limit)[0]
    except Unsafe:
        return None


def is_notebook(name: str, expected: list[str] | set[str] | None) -> bool:
    """A notebook of the assignment: one of `expected`, else any top-level visible ``*.ipynb``."""
    if expected is None:
        return name.endswith(".ipynb") and not name.startswith(".")
    return name in expected


def write_new(folder: str | os.PathLike, name: str, data: bytes, mode: int) -> None:
    """A new file `name` in `folder` with exactly `mode` (never through an existing link, never
    over an existing file; ``erasure_register.write_private`` replaces a file atomically)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(os.path.join(folder, name), flags, mode)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("handled_access_fs", "handled_access_net", "scoped")]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _landlock(number: int, what: str, *args: object) -> int:
    """One of Landlock's system calls: its result, or ``OSError`` with its errno."""
    call = ctypes.CDLL(None, use_errno=True).syscall
    call.restype = ctypes.c_long
    result = call(ctypes.c_long(number), *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), what)
    return int(result)


def landlock_abi() -> tuple[int, str]:
    """(Landlock ABI version, "") when this kernel offers it, else (0, why in French)."""
    if not sys.platform.startswith("linux"):
        return 0, "Landlock n'existe que sous Linux"
    try:  # flags 1: LANDLOCK_CREATE_RULESET_VERSION
        return _landlock(_CREATE_RULESET, "", None, ctypes.c_size_t(0), ctypes.c_uint32(1)), ""
    except OSError as exc:
        return 0, _NO_LANDLOCK.get(exc.errno, f"Landlock indisponible ({os.strerror(exc.errno)})")


def restrict(read_roots: list[str], write_roots: list[str], abi: int) -> None:
    """Confine this process for good: read only beneath `read_roots`, write only beneath
    `write_roots`, nothing else on any file system; no TCP, no signal outside (by ABI). Landlock
    confines the calling thread and its future children: call it before starting any thread."""
    handled, no_flags = _HANDLED_FS.get(abi, _ALL_FS), ctypes.c_uint32(0)
    attr = _RulesetAttr(handled, _NET_TCP if abi >= 4 else 0, _SCOPED if abi >= 6 else 0)
    # zeros past what an older kernel reads are accepted
    args = (ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(_RulesetAttr)), no_flags)
    ruleset = _landlock(_CREATE_RULESET, "landlock_create_ruleset", *args)
    try:
        rules = [(root, _READ) for root in read_roots]
        for root, access in rules + [(root, _WRITE | _READ) for root in write_roots]:
            fd = os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                rule = ctypes.byref(_PathBeneathAttr(access & handled, fd))
                args = (ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH), rule, no_flags)
                _landlock(_ADD_RULE, f"landlock_add_rule {root}", *args)
            finally:
                os.close(fd)
        zero = ctypes.c_ulong(0)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), zero, zero, zero):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        _landlock(_RESTRICT_SELF, "landlock_restrict_self", ctypes.c_int(ruleset), no_flags)
    finally:
        os.close(ruleset)


def _confine(job: dict) -> dict:
    """Landlock on this process as the job asks: what was applied, or why not (French)."""
    if not job.get("confine", True):
        return {"applied": False, "abi": 0, "why": "confinement désactivé par la configuration"}
    abi, why = landlock_abi()
    if not abi:
        return {"applied": False, "abi": 0, "why": why}
    try:
        restrict([job["inbound"]], [job["staging"]], abi)
    except OSError as exc:
        return {"applied": False, "abi": abi, "why": f"Landlock refusé ({french_reason(exc)})"}
    return {"applied": True, "abi": abi, "why": ""}


def _staged_dir(item: dict, job: dict) -> str:
    out = os.path.join(job["staging"], item["out"])
    os.mkdir(out, job["dir_mode"])
    os.chmod(out, job["dir_mode"])
    return out


def _serve(item: dict, job: dict) -> dict:
    """One item's folder, opened without following a link, then its notebooks (and secret) read
    and staged, or (``keep``) all it holds that can be copied; what happened."""
    keep = item.get("keep")
    more = dict(skipped=[]) if keep else dict(notebooks=[], ignored=[], deposit=None, claimed="")
    result = dict(out=item["out"], problem=None, errno=None, write_error=None, **more)
    try:
        fd = open_dir(os.path.join(job["inbound"], item["folder"]))
        try:
            if not keep:
                _copy(fd, item, job, result)
            else:  # copied whole, for the quarantine
                try:
                    result["skipped"] = _keep_folder(fd, _staged_dir(item, job), 0, job)
                except OSError as exc:
                    result["write_error"] = french_reason(exc)
        finally:
            os.close(fd)
    except Unsafe as exc:
        result["problem"] = str(exc)
        result["errno"] = getattr(exc.__cause__, "errno", None)  # EACCES: the wall held
    return result


def _copy(fd: int, item: dict, job: dict, result: dict) -> None:
    """The folder `fd`'s notebooks and secret, all read (``Unsafe`` stops it), then staged."""
    uid = item.get("uid")
    info = os.fstat(fd)
    if uid is not None and info.st_uid != uid:
        raise Unsafe(f"le dossier appartient à {_UID.format(info.st_uid)}")
    times = [info.st_ctime]
    notebooks: dict[str, bytes] = {}
    for name in sorted(os.listdir(fd)):
        if is_notebook(name, job.get("notebooks")):
            notebooks[name], seen = read_regular(fd, name, uid, int(job["limit"]))
            times.append(seen.st_ctime)
        elif name not in (TIMESTAMP, SECRET):
            result["ignored"].append(name)
    claimed = read_optional(fd, TIMESTAMP, uid, SMALL)
    secret = read_optional(fd, SECRET, uid, SMALL)
    times.append(os.fstat(fd).st_ctime)  # a file added or renamed meanwhile
    result["deposit"] = max(times)
    result["claimed"] = claimed.decode("utf-8", "replace").strip() if claimed else ""
    try:
        out = _staged_dir(item, job)
        for name, data in [*notebooks.items(), (SECRET, secret)]:
            if data is not None:
                write_new(out, name, data, job["file_mode"])
    except OSError as exc:  # a full disk: the next copies still fit
        shutil.rmtree(os.path.join(job["staging"], item["out"]), ignore_errors=True)
        result["write_error"] = french_reason(exc)
        return
    result["notebooks"] = sorted(notebooks)


def _keep_folder(dir_fd: int, dest: str, depth: int, job: dict) -> list[str]:
    """A set-aside folder's plain files and folders (to ``QUARANTINE_DEPTH``), any owner, each
    read without following a link, within the job's budget; what was not copied, and why."""
    skipped, budget = [], job["budget"]
    names = sorted(os.listdir(dir_fd))
    for i, name in enumerate(names):
        if budget["entries"] <= 0:  # one line for the rest, not one per name
            skipped.append(
                f"{name} et {len(names) - i - 1} autre(s)\u00a0: au-delà de "
                f"{QUARANTINE_ENTRIES} fichiers et dossiers"
            )
            break
        budget["entries"] -= 1
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode) and depth < QUARANTINE_DEPTH:
                sub = open_dir(name, dir_fd)
                try:
                    os.mkdir(os.path.join(dest, name), job["dir_mode"])
                    below = _keep_folder(sub, os.path.join(dest, name), depth + 1, job)
                    skipped += [f"{name}/{s}" for s in below]
                finally:
                    os.close(sub)
                continue
            limit = int(job["limit"])
            if stat.S_ISREG(info.st_mode) and limit >= info.st_size > budget["bytes"]:
                raise Unsafe(f"au-delà de {limit} octets copiés en tout")
            read_limit = limit if info.st_size > limit else budget["bytes"]
            data, _ = read_regular(dir_fd, name, None, read_limit)
            budget["bytes"] -= len(data)
            write_new(dest, name, data, job["file_mode"])
        except Unsafe as exc:
            skipped.append(f"{name}\u00a0: {exc}")
        except OSError as exc:
            skipped.append(f"{name}\u00a0: {french_reason(exc)}")
    return skipped


def serve_job() -> int:
    """The child (no ``main``: only ``run_copier`` starts it): read, confine, copy, answer."""
    job = json.loads(sys.stdin.buffer.read())
    confinement = _confine(job)
    job["budget"] = {"entries": QUARANTINE_ENTRIES, "bytes": int(job["limit"])}
    results = [_serve(item, job) for item in job["items"]]
    print(json.dumps({"confinement": confinement, "results": results}), end="", flush=True)
    return 0


# the child's path: grader/ and the folder of the `course` package (its French reasons, in
# course.system_reason), wherever it is installed: -S leaves out site-packages
_BOOT = (
    "import sys; sys.path[:0] = sys.argv[1:3]; "
    "from grading.nbgrader_ext.confined_copy import serve_job; sys.exit(serve_job())"
)


def run_copier(job: dict) -> dict:
    """Start the child on `job` and return its answer; ``OSError`` when it fails (French)."""
    grader_dir = str(Path(__file__).resolve().parents[2])
    course_root = str(Path(course.__file__).resolve().parents[1])
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-c", _BOOT, grader_dir, course_root],
        input=json.dumps(job).encode(),
        capture_output=True,
        env={"LC_ALL": "C.UTF-8"},
        cwd="/",
        check=False,
    )
    if proc.returncode == 0:
        with suppress(ValueError):
            return json.loads(proc.stdout)
    tail = proc.stderr.decode("utf-8", "replace").strip()[-2000:]
    raise OSError(f"le copieur des rendus a échoué (code {proc.returncode})\u00a0: {tail}")
