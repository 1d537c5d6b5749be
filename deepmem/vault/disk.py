"""Everything that reaches disk goes through here: crash-safe replaces, appends and the writers' lock.

A replace writes a temporary file in the target's folder, fsyncs it, renames it over the
target and fsyncs the folder, so after a crash (even a power cut) the file holds either
its old or its new bytes. The lock is `filelock` (flock on POSIX, msvcrt on Windows):
one exclusive lock file per folder, held by every deepmem process that rewrites it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

LOCK_NAME = ".lock"
TEMP_SUFFIX = ".tmp"
PUBLIC = 0o644
PRIVATE = 0o600
"""Mode of files that may hold session content (raw transcripts, CCR originals, stats)."""
SEALED_MARK = ".sealed-v1"
"""Written once every private file of a memory folder is sealed (`deepmem.project.upkeep`): later starts skip the scan."""
GITIGNORE = f"""\
# Written by `deepmem init`. MEMORY.md, notes.md and checkpoint.md are meant to be shared
# through git; raw transcripts, CCR originals, indexes and logs stay local.
sessions/
ccr/
index/
logs/
*.tmp
{SEALED_MARK}
"""
"""The memory folder's `.gitignore`, written by `deepmem init` and when the engine starts."""


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path: Path, data: bytes, mode: int = PUBLIC) -> None:
    """Replace path's bytes all at once: temp file (named with the writer's pid), fsync, rename, fsync of the folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def create_once(path: Path, data: bytes, mode: int) -> None:
    """Create `path` holding `data` whole, unless it exists already (another process made it first: link refuses)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        os.chmod(tmp, mode)
        os.write(fd, data)
        os.fsync(fd)
        os.close(fd)
        os.link(tmp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    fsync_dir(path.parent)


def append_capped(path: Path, line: bytes, cap_bytes: int, mode: int = PUBLIC) -> None:
    """Append one line; past `cap_bytes` the oldest lines are dropped (call under the folder's lock).

    The append is one `write` of a whole line in O_APPEND mode, so a crash can at worst
    leave the last line cut short; the trim keeps the newest half of the cap and is a replace.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, mode)
    try:
        os.write(fd, line)
        os.fsync(fd)
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if size > cap_bytes:
        data = path.read_bytes()
        keep = data[-(cap_bytes // 2):]
        atomic_write(path, keep[keep.find(b"\n") + 1:], mode)


def prune_folders(parent: Path, keep: int, current: Path) -> list[Path]:
    """Delete the subfolders of `parent` changed least recently beyond `keep` (never `current`)."""
    found = []
    for folder in parent.glob("*"):
        try:
            if folder.is_dir():
                found.append((folder.stat().st_mtime_ns, folder.name, folder))
        except OSError:
            continue
    stale = [folder for _, _, folder in sorted(found, reverse=True)[keep:] if folder != current]
    for folder in stale:
        shutil.rmtree(folder, ignore_errors=True)
    return stale


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold the exclusive lock of `folder` (other deepmem writers, in any process, wait)."""
    folder.mkdir(parents=True, exist_ok=True)
    with FileLock(folder / LOCK_NAME):
        yield
