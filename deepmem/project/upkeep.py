"""Once per engine start, under the memory folder's lock: clear what killed writers left, seal old private files."""

from __future__ import annotations

import os
import time
from pathlib import Path

from deepmem.project.config import memory_dir
from deepmem.vault.disk import SEALED_MARK, TEMP_SUFFIX, locked
from deepmem.vault.sealed import PRIVATE_FILES
from deepmem.vault.writer import seal_plain_files, write_given

UNCHECKED_TEMP_AGE = 60.0
"""A temp file whose writer cannot be checked (no pid in its name: older releases; or Windows, where
probing a pid would signal it) is left over once it is this old, in seconds."""


def writer_pid(name: str) -> int | None:
    """The pid in a temp file's name (`.<target>.<pid>.<random>.tmp`), None when it holds none."""
    pieces = name.removesuffix(TEMP_SUFFIX).rsplit(".", 2)
    return int(pieces[1]) if len(pieces) == 3 and pieces[1].isdigit() else None


def is_alive(pid: int) -> bool:
    """True while a process with that id runs (ours included); POSIX only."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def writer_is_gone(path: Path, now: float) -> bool:
    """The temp file's writer no longer runs (by its pid), or, when that cannot be checked, the file is old."""
    pid = writer_pid(path.name)
    if pid is not None and os.name == "posix":
        return not is_alive(pid)
    return now - path.stat().st_mtime > UNCHECKED_TEMP_AGE


def leftover_temp_files(folder: Path) -> list[Path]:
    """Temp files of `atomic_write` under the folder whose writer is gone."""
    found = []
    now = time.time()
    for path in folder.rglob(f".*{TEMP_SUFFIX}"):
        try:
            if path.is_file() and writer_is_gone(path, now):
                found.append(path)
        except FileNotFoundError:
            continue
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
            write_given(folder / SEALED_MARK, b"")
    return {"temp_removed": len(leftovers), "sealed": sealed}
