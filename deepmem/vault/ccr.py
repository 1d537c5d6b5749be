"""CCR (compress–cache–retrieve): every cut original, stored by key, restorable byte for byte.

Hot entries live in a bounded in-memory LRU. With a root, every entry is also written to
`.deep-memory/ccr/<2 hex>/<key>` (content-addressed, so concurrent writers are harmless);
the folder is kept under a byte cap by evicting the least recently used files. The disk
copy is the exact original, sealed (see `deepmem.vault.sealed`): it restores byte for byte after a
restart on this machine, and a copied `.deep-memory/` shows none of it. A file that cannot be
unsealed (no key, another key, altered bytes) raises SealError: the marker stays.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path

from deepmem.lru import LRU
from deepmem.markers import KEY_CHARS, SHOWN_KEY_CHARS
from deepmem.types import InputError, Original, Settings, UnknownKeyError
from deepmem.vault.sealed import SealError, read_sealed
from deepmem.vault.writer import write_private

HEX = re.compile(r"[0-9a-f]+")
log = logging.getLogger("deepmem.ccr")


class CCRStore:
    """Originals by key: an LRU in memory, backed by a size-capped folder on disk."""

    def __init__(self, folder: str | os.PathLike[str] | None, settings: Settings | None = None):
        """The store in `folder` (in memory only when None; a project's is `config.ccr_folder`),
        sized by `settings` (the defaults when None)."""
        self.folder = Path(folder) if folder is not None else None
        settings = settings or Settings()
        self.disk_bytes = settings.ccr_disk_bytes
        self._hot = LRU(settings.ccr_memory_entries)
        self._disk_total: int | None = None
        self._seal_problem = ""

    def put(self, key: str, text: str) -> None:
        """Keep an original under its key (a no-op when the key is already stored); when it
        cannot be sealed it stays in memory only, and the reason is logged."""
        self._hot.put(key, text)
        if self.folder is None:
            return
        path = self._path(key)
        if path.exists():
            return
        try:
            size = write_private(path, text.encode("utf-8", "surrogatepass"))
        except SealError as exc:
            if str(exc) != self._seal_problem:
                log.warning("CCR originals kept in memory only: %s", exc)
                self._seal_problem = str(exc)
            return
        if self._disk_total is not None:
            self._disk_total += size
        self._evict_if_needed()

    def put_all(self, originals: Iterable[Original]) -> None:
        """Store many originals."""
        for original in originals:
            self.put(original.key, original.text)

    def get(self, key: str) -> str:
        """The original stored under key, whole or as a marker shows it; UnknownKeyError when
        it is not (or no longer) kept."""
        key = self.resolve(key)
        return self._hot.get(key, lambda: self._read(key))

    def resolve(self, key: str) -> str:
        """The stored key that a key as written (`ccr:` optional, whole or its first
        `SHOWN_KEY_CHARS` digits or more) stands for; InputError when several start with it."""
        key = key.removeprefix("ccr:").strip().lower()
        if len(key) >= KEY_CHARS or len(key) < SHOWN_KEY_CHARS or not HEX.fullmatch(key):
            return key
        found = {known for known in self._hot.keys() if known.startswith(key)}
        if self.folder is not None:
            found.update(path.name for path in (self.folder / key[:2]).glob(f"{key}*"))
        if len(found) > 1:
            raise InputError(f"CCR key {key!r} is ambiguous: {len(found)} originals start with it; give more digits")
        return found.pop() if found else key

    def expand(self, key: str, lines: str | None = None) -> str:
        """The original stored under key, whole or only lines `A-B` (see `line_range`)."""
        text = self.get(key)
        return line_range(text, lines) if lines else text

    def __contains__(self, key: str) -> bool:
        key = self.resolve(key)
        return key in self._hot or (self.stored_key(key) and self._path(key).exists())

    def _read(self, key: str) -> str:
        """The original from disk (marked as just used); UnknownKeyError when it is not there,
        SealError when it cannot be unsealed."""
        if self.stored_key(key):
            path = self._path(key)
            try:
                text = read_sealed(path).decode("utf-8", "surrogatepass")
            except (FileNotFoundError, NotADirectoryError):
                pass
            else:
                os.utime(path)
                return text
        raise UnknownKeyError(f"unknown CCR key {key!r} (never stored here, or evicted)")

    def stored_key(self, key: str) -> bool:
        """Whether a key can name a file in the store: whole and hex only (never a path of its own)."""
        return self.folder is not None and len(key) == KEY_CHARS and HEX.fullmatch(key) is not None

    def _path(self, key: str) -> Path:
        assert self.folder is not None
        return self.folder / key[:2] / key

    def _files(self) -> list[tuple[float, int, Path]]:
        assert self.folder is not None
        found = []
        for sub in self.folder.glob("??"):
            for entry in os.scandir(sub):
                if entry.is_file() and not entry.name.startswith("."):
                    stat = entry.stat()
                    found.append((stat.st_mtime, stat.st_size, Path(entry.path)))
        return found

    def _evict_if_needed(self) -> None:
        if self._disk_total is None:
            self._disk_total = sum(size for _, size, _ in self._files())
        if self._disk_total <= self.disk_bytes:
            return
        target = self.disk_bytes * 9 // 10
        files = sorted(self._files(), key=lambda item: (item[0], item[2].name))
        total = sum(size for _, size, _ in files)
        for _, size, path in files:
            if total <= target:
                break
            path.unlink(missing_ok=True)
            total -= size
        self._disk_total = total


def line_range(text: str, spec: str) -> str:
    """Lines A–B (1-based, inclusive) of a text; `A-` runs to the end."""
    start_text, _, end_text = spec.partition("-")
    try:
        start = int(start_text)
        end = int(end_text) if end_text else None
    except ValueError:
        raise InputError(f"--lines: expected A-B, got {spec!r}") from None
    lines = text.splitlines(keepends=True)
    return "".join(lines[max(start, 1) - 1 : end])
