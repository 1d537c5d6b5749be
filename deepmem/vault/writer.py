"""The one way deepmem writes a file: shared files redacted whole, private files sealed.

- **Shared** files are read, committed and shared: MEMORY.md, notes.md, episodes, history,
  archive, checkpoints, skills, the compaction log, the bridge log and the small JSON state
  beside them (schedule, usage, file hashes, session stats). Their whole text passes the
  redactor here, after it is rendered, so a new field or line of any of them cannot carry a
  secret past it, whatever the code that rendered it did.
- **Private** files keep exact bytes for deepmem alone: CCR originals, raw transcripts, the
  request state a restarted engine reads back, the search index. They are sealed here
  (`deepmem.vault.sealed`), mode 0600.
- **Given** bytes are written as they are: a file the user names (`deepmem compress -o`),
  the plugin files `deepmem init` installs, and markers deepmem itself composes.

No other module opens a file for writing: `deepmem.vault.disk` holds the crash-safe primitives and
only this module (and `deepmem.vault.sealed`, for the key it makes outside every project) calls
them; tests/test_layers.py walks the package for any other writer.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from deepmem.vault.disk import GITIGNORE, PRIVATE, PUBLIC, append_capped, atomic_write
from deepmem.vault.redact import Redactor
from deepmem.vault.sealed import MAGIC, seal

BUILT_IN = Redactor()
"""The built-in rules, for writers that hold no project (its `[security]` settings add to them)."""


def write_shared(path: Path, text: str, redactor: Redactor = BUILT_IN, mode: int = PUBLIC) -> str:
    """Replace a shared file with `text` redacted whole; the text written."""
    clean = redactor.text(text)
    atomic_write(path, clean.encode("utf-8", "surrogatepass"), mode)
    return clean


def insert_shared(path: Path, data: bytes, at: int, text: str, redactor: Redactor = BUILT_IN,
                  mode: int = PUBLIC) -> bytes:
    """Replace a shared file whose bytes are `data` (written here before) with `text`, redacted whole, inserted
    at byte `at`; the new bytes (an append to a large file redacts only what is new)."""
    piece = redactor.text(text).encode("utf-8", "surrogatepass")
    new = b"".join((data[:at], piece, data[at:]))
    atomic_write(path, new, mode)
    return new


def shared_json(value: Any, redactor: Redactor = BUILT_IN, option: int = 0) -> bytes:
    """A JSON value as a shared file holds it: each string redacted, then the rendered text as a whole."""
    return redactor.text(orjson.dumps(redactor.json(value), option=option).decode()).encode()


def write_shared_json(path: Path, value: Any, redactor: Redactor = BUILT_IN, option: int = 0,
                      mode: int = PUBLIC) -> None:
    """Replace a shared JSON file with `value`, redacted (`shared_json`), ending in a newline."""
    atomic_write(path, shared_json(value, redactor, option) + b"\n", mode)


def append_shared_json(path: Path, value: Any, redactor: Redactor, cap_bytes: int) -> None:
    """Append one redacted JSON line to a shared log; past `cap_bytes` its oldest lines go."""
    append_capped(path, shared_json(value, redactor) + b"\n", cap_bytes)


def write_private(path: Path, data: bytes) -> int:
    """Seal `data` for `path` and replace the file (mode 0600); the bytes written."""
    blob = seal(data, path)
    atomic_write(path, blob, PRIVATE)
    return len(blob)


def seal_plain_files(paths: Iterable[Path]) -> int:
    """Seal each private file written before sealing existed, each by one atomic replace; how many.

    A kill part-way leaves every file either plain or sealed, both readable; the next call
    seals the rest.
    """
    sealed = 0
    for path in paths:
        try:
            with path.open("rb") as handle:
                if handle.read(len(MAGIC)) == MAGIC:
                    continue
            write_private(path, path.read_bytes())
        except FileNotFoundError:
            continue
        sealed += 1
    return sealed


def write_given(path: Path, data: bytes, mode: int = PUBLIC) -> None:
    """Replace a file with bytes the user asked for or deepmem composed itself (no session content)."""
    atomic_write(path, data, mode)


def ensure_gitignore(folder: Path) -> bool:
    """Write the memory folder's `.gitignore` when it is missing; True when written."""
    path = folder / ".gitignore"
    if path.exists():
        return False
    write_given(path, GITIGNORE.encode())
    return True


class RedactingFormatter(logging.Formatter):
    """A formatter whose lines (tracebacks included) have their secrets redacted."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__("%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        """The usual line, redacted."""
        return self.redactor.text(super().format(record))


def shared_log(path: Path, redactor: Redactor, max_bytes: int, backups: int) -> logging.Handler:
    """A rotating log file (private mode) whose every formatted line is redacted."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    os.chmod(path, PRIVATE)
    handler.setFormatter(RedactingFormatter(redactor))
    return handler
