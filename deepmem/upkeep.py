"""Once per engine start, under the memory folder's lock: clear what killed writers left, seal old private files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from deepmem.config import memory_dir
from deepmem.disk import SEALED_MARK, TEMP_SUFFIX, atomic_write, locked
from deepmem.sealed import PRIVATE_FILES, seal_plain_files

UNNAMED_TEMP_AGE = 60.0
"""A temp file without a writer's pid (older releases) is left over once it is this old, in seconds."""


def writer_pid(name: str) -> int | None:
    """The pid in a temp file's name (`.<target>.<pid>.<random>.tmp`), None when it holds none."""
    pieces = name.removesuffix(TEMP_SUFFIX).rsplit(".", 2)
    return int(pieces[1]) if len(pieces) == 3 and pieces[1].isdigit() else None


def is_alive(pid: int) -> bool:
    """True while a process with that id runs (ours included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def leftover_temp_files(folder: Path) -> list[Path]:
    """Temp files whose writer is gone: its pid no longer runs, or (no pid) it is a minute old."""
    found = []
    now = time.time()
    for path in folder.rglob(f".*{TEMP_SUFFIX}"):
        pid = writer_pid(path.name)
        try:
            gone = not is_alive(pid) if pid is not None else now - path.stat().st_mtime > UNNAMED_TEMP_AGE
        except FileNotFoundError:
            continue
        if gone and path.is_file():
            found.append(path)
    return found


def start_up(root: str | os.PathLike[str]) -> dict[str, int]:
    """Remove leftover temp files and seal plain private files (once); the counts of both."""
    folder = memory_dir(root)
    if not folder.is_dir():
        return {"temp_removed": 0, "sealed": 0}
    with locked(folder):
        leftovers = leftover_temp_files(folder)
        for path in leftovers:
            path.unlink(missing_ok=True)
        sealed = 0
        if not (folder / SEALED_MARK).exists():
            sealed = seal_plain_files(path for glob in PRIVATE_FILES for path in folder.glob(glob))
            atomic_write(folder / SEALED_MARK, b"")
    return {"temp_removed": len(leftovers), "sealed": sealed}
