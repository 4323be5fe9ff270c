"""Share a folder between tests that only read it, so that a test writing into it fails loudly
instead of changing what the next test reads.

The suite runs as root, whom file modes do not stop: the folder is made immutable (as ``chattr +i``
does: ext4 and most Linux file systems, needs CAP_LINUX_IMMUTABLE), so any write, as root too, fails
with ``EPERM``. Where that is not possible (another file system, no capability), nothing stops a
write but ``changes`` finds it after the test. ``thaw`` must run before the folder is removed.
"""

from __future__ import annotations

import array
import fcntl
import hashlib
import os
from pathlib import Path

__all__ = ["Snapshot", "changes", "freeze", "snapshot", "thaw"]

Snapshot = dict[str, tuple[int, int, str]]


# <linux/fs.h>: what `chattr +i` does, without a process per file
FS_IOC_GETFLAGS, FS_IOC_SETFLAGS, FS_IMMUTABLE_FL = 0x80086601, 0x40086602, 0x10


def _set_immutable(path: Path, on: bool) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | (os.O_DIRECTORY if path.is_dir() else 0))
    try:
        flags = array.array("i", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, flags, True)
        wanted = flags[0] | FS_IMMUTABLE_FL if on else flags[0] & ~FS_IMMUTABLE_FL
        if wanted != flags[0]:
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, array.array("i", [wanted]))
    finally:
        os.close(fd)


def _entries(folder: Path) -> list[Path]:
    """`folder` and everything under it but links (a link has no flags of its own)."""
    return [folder, *(p for p in folder.rglob("*") if not p.is_symlink())]


def freeze(folder: Path) -> bool:
    """Make every file and folder under `folder` immutable; False when this system cannot (then
    only ``changes`` guards it)."""
    try:
        for path in _entries(folder):
            _set_immutable(path, True)
    except OSError:
        thaw(folder)
        return False
    probe = folder / ".write-probe"
    try:
        probe.write_text("")
    except OSError:
        return True
    probe.unlink()  # the flag did not hold (a file system that ignores it)
    thaw(folder)
    return False


def thaw(folder: Path) -> None:
    """Undo ``freeze`` (before removing the folder, or restoring it); parents first, so that
    their children can be reached."""
    for path in _entries(folder):
        try:
            _set_immutable(path, False)
        except OSError:
            pass


def snapshot(folder: Path) -> Snapshot:
    """Every entry under `folder`: its mode, size and a digest of its bytes (a link: its
    target)."""
    entries: Snapshot = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        st = path.lstat()
        if path.is_symlink():
            entries[rel] = (st.st_mode, 0, str(path.readlink()))
        elif path.is_file():
            entries[rel] = (st.st_mode, st.st_size, hashlib.sha256(path.read_bytes()).hexdigest())
        else:
            entries[rel] = (st.st_mode, 0, "")
    return entries


def changes(before: Snapshot, folder: Path) -> list[str]:
    """What differs in `folder` from `before`: added, removed or changed entries, by name."""
    after = snapshot(folder)
    return sorted(
        f"{'added' if k not in before else 'removed' if k not in after else 'changed'}: {k}"
        for k in before.keys() | after.keys()
        if before.get(k) != after.get(k)
    )
