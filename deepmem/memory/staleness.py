"""Staleness: an entry that names a project file keeps the file's content hash from when it was written.

`hashes.json` beside MEMORY.md maps an entry (by a digest of its normalised text, so an
entry edited by hand starts afresh) to the hash of each file it names that existed then.
When a file has changed since, the entry says so wherever it is shown; when the file is
gone, the entry retires from the stable block and the whisper (search still finds it,
marked). An entry whose files were never seen (named before they existed, or a project
checked out elsewhere) is judged by nothing: it is shown as written. An episode tells what a past
session did, dated: that its files changed since goes without saying, and it only notes the files gone.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import xxhash

from deepmem.extractors.context import PATH
from deepmem.memory.entries import Entry, normalise
from deepmem.memory.files import scope_dir
from deepmem.vault.disk import locked
from deepmem.vault.writer import write_shared_json

HASHES = "hashes.json"
MAX_FILE_BYTES = 8 << 20
"""Larger files are not hashed (an entry naming only them is never judged)."""


def named_files(text: str) -> list[str]:
    """The file paths a text names, each once, without a leading `./`."""
    return list(dict.fromkeys(path.removeprefix("./") for path in PATH.findall(text)))


def file_hash(root: str | os.PathLike[str], path: str) -> str | None:
    """The content hash of a project file, None when it is missing, outside the project or too large."""
    base = Path(root).resolve()
    target = (base / path).resolve()
    if base not in target.parents:
        return None
    try:
        if target.stat().st_size > MAX_FILE_BYTES:
            return None
        return xxhash.xxh3_64_hexdigest(target.read_bytes())
    except OSError:
        return None


def entry_key(entry: Entry) -> str:
    """What hashes.json files an entry under: its normalised text's digest."""
    return xxhash.xxh3_64_hexdigest(normalise(entry.text).encode())


def read_hashes(root: str | os.PathLike[str]) -> dict[str, dict[str, str]]:
    """hashes.json, or nothing when it is missing or unreadable."""
    try:
        value = orjson.loads((scope_dir(root, "project") / HASHES).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return {key: files for key, files in value.items() if isinstance(files, dict)} if isinstance(value, dict) else {}


def remember_hashes(root: str | os.PathLike[str], entries: list[Entry]) -> None:
    """Record, for entries not yet recorded, the hash of each named file that exists now."""
    folder = scope_dir(root, "project")
    with locked(folder):
        known = read_hashes(root)
        added = False
        for entry in entries:
            key = entry_key(entry)
            if key in known:
                continue
            hashes = {path: digest for path in named_files(entry.text) if (digest := file_hash(root, path))}
            if hashes:
                known[key] = hashes
                added = True
        if added:
            write_shared_json(folder / HASHES, known, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)


def staleness(root: str | os.PathLike[str], entry: Entry, known: dict[str, dict[str, str]]) -> tuple[list[str], list[str]]:
    """The files an entry names that changed since it was written, and those that are gone."""
    changed, gone = [], []
    for path, digest in known.get(entry_key(entry), {}).items():
        now = file_hash(root, path)
        if now is None:
            gone.append(path)
        elif now != digest:
            changed.append(path)
    return changed, gone


def marked(root: str | os.PathLike[str], entries: list[Entry], retire: bool) -> list[Entry]:
    """The entries with a note on files changed or gone since; with `retire`, those naming a gone file left out."""
    known = read_hashes(root) if entries else {}
    if not known:
        return entries
    shown = []
    for entry in entries:
        changed, gone = staleness(root, entry, known) if entry.scope == "project" else ([], [])
        if entry.type == "episode":
            changed, retire_this = [], False
        else:
            retire_this = retire
        if gone and retire_this:
            continue
        notes = [f"`{path}` changed since" for path in changed] + [f"`{path}` is gone" for path in gone]
        shown.append(Entry(entry.id, entry.type, f"{entry.text} [stale: {'; '.join(notes)}]", entry.time, entry.scope)
                     if notes else entry)
    return shown
