"""The search index over one or more memory files: BM25, an inverted index, and embedding rows.

Token lists and vectors are cached per entry text, in memory and under each scope's
`index/` folder, so a changed MEMORY.md only re-tokenises and re-embeds the entries
that changed. The index itself is rebuilt when any file's content hash changes.
"""

from __future__ import annotations

import io
import logging
import os
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import xxhash

from deepmem.memory.age import date_words, time_key
from deepmem.memory.embed import encode, model_fingerprint
from deepmem.memory.entries import Entry
from deepmem.memory.episodes import CHANGED, RECENT, field
from deepmem.memory.files import MemoryFile
from deepmem.memory.labels import Labels
from deepmem.memory.lexical import Lexical
from deepmem.memory.sessions import Sessions
from deepmem.memory.tokenize import TOKENIZER_VERSION, cached_tokens, known_tokens, text_digest, tokenize
from deepmem.memory.vectors import VectorTable
from deepmem.vault.sealed import SealError, read_sealed
from deepmem.vault.writer import write_given, write_private

log = logging.getLogger("deepmem.memory")
INDEX_VERSION = "1"
KEPT_INDEXES = 4
CONTEXT_REACH = 2
"""How many entries on each side can lend a search hit their context."""
RECENCY_HALF_LIFE = 10
"""Sessions after which a past episode's recency in search halves."""
CORE_SESSIONS = 2
CORE_FILES = 3
"""An episode's core work: how many of the files it changed (counting up to CORE_FILES) at least CORE_SESSIONS of the
newest episodes changed, as a share of CORE_FILES."""


class TokenCache(msgspec.Struct):
    """Token lists by text digest, as stored in `index/tokens.msgpack`."""

    version: str
    tokens: dict[str, list[str]]


class VectorRows(msgspec.Struct):
    """The text digests of the rows of `index/vectors-<model>.npy`, and the model that made them."""

    model: str
    digests: list[str]
    fingerprint: str = ""
    """Name, dimension and files of the model: a model changed in place makes the rows stale."""


def _save_cache(path: Path, data: bytes) -> None:
    """Write a cache file, sealed (the folder keeps itself out of git); a read-only folder or no key means no cache."""
    try:
        ignore = path.parent / ".gitignore"
        if not ignore.exists():
            write_given(ignore, b"*\n")
        write_private(path, data)
    except (OSError, SealError):
        pass


def _read_bytes(path: Path) -> bytes | None:
    """A cache file's bytes (unsealed), or None when missing or unreadable (it is rebuilt)."""
    try:
        return read_sealed(path)
    except (OSError, SealError):
        return None


_saved_tokens: dict[Path, set[str]] = {}
"""Per tokens.msgpack file, the digests it holds on disk."""


def entry_tokens(state: MemoryFile) -> list[list[str]]:
    """Token lists of a file's entries, using and refreshing `index/tokens.msgpack`."""
    path = state.path.parent / "index" / "tokens.msgpack"
    saved = _saved_tokens.get(path)
    if saved is None:
        saved = _saved_tokens[path] = set()
        raw = _read_bytes(path)
        try:
            stored = msgspec.msgpack.decode(raw, type=TokenCache) if raw else None
        except msgspec.DecodeError:
            stored = None
        if stored is not None and stored.version == TOKENIZER_VERSION + INDEX_VERSION:
            known_tokens.update(stored.tokens)
            saved.update(stored.tokens)
    digests = [text_digest(entry.text) for entry in state.entries]
    result = [cached_tokens(entry.text, digest) for entry, digest in zip(state.entries, digests, strict=True)]
    if not saved.issuperset(digests):
        table = dict(zip(digests, result, strict=True))
        _save_cache(path, msgspec.msgpack.encode(TokenCache(TOKENIZER_VERSION + INDEX_VERSION, table)))
        _saved_tokens[path] = set(table)
    return result


_vectors: dict[tuple[str, Path], tuple[dict[str, int], Any]] = {}


def _load_vectors(base: Path, model: str) -> tuple[dict[str, int], Any]:
    """Rows and matrix from `index/vectors-<model>.*`, or nothing when absent or stale."""
    rows_raw = _read_bytes(base.with_suffix(".rows"))
    matrix_raw = _read_bytes(base.with_suffix(".npy"))
    if rows_raw and matrix_raw:
        try:
            rows = msgspec.json.decode(rows_raw, type=VectorRows)
            matrix = np.load(io.BytesIO(matrix_raw), allow_pickle=False)
        except (msgspec.DecodeError, OSError, ValueError):
            return {}, None
        fits = matrix.ndim == 2 and matrix.shape[0] == len(rows.digests)
        if rows.model == model and rows.fingerprint == model_fingerprint(model) and fits:
            return {digest: index for index, digest in enumerate(rows.digests)}, matrix
        log.warning("%s: made by another embedding model (or an older one of the same name): rebuilding", base.name)
    return {}, None


def entry_vectors(state: MemoryFile, model: str) -> Any:
    """Embedding rows of a file's entries, using and refreshing `index/vectors-<model>.npy`."""
    base = state.path.parent / "index" / f"vectors-{xxhash.xxh3_64_hexdigest(model.encode())}"
    positions, matrix = _vectors.get((model, base)) or _load_vectors(base, model)
    digests = [text_digest(entry.text) for entry in state.entries]
    todo = {digest: entry.text for digest, entry in zip(digests, state.entries, strict=True) if digest not in positions}
    if todo or matrix is None:
        fresh = encode(model, list(todo.values()))
        matrix = fresh if matrix is None else np.concatenate([matrix, fresh])
        positions = {**positions, **{digest: len(positions) + n for n, digest in enumerate(todo)}}
        used = sorted(set(digests), key=positions.__getitem__)
        matrix = matrix[[positions[digest] for digest in used]]
        positions = {digest: index for index, digest in enumerate(used)}
        _save_cache(base.with_suffix(".rows"), msgspec.json.encode(VectorRows(model, used, model_fingerprint(model))))
        _save_npy(base.with_suffix(".npy"), matrix)
    _vectors[(model, base)] = (positions, matrix)
    return matrix[[positions[digest] for digest in digests]]


def _save_npy(path: Path, matrix: Any) -> None:
    """Write a matrix as .npy through the writer."""
    buffer = io.BytesIO()
    np.save(buffer, matrix, allow_pickle=False)
    _save_cache(path, buffer.getvalue())


@lru_cache(maxsize=4_096)
def time_tokens(time: str) -> tuple[str, ...]:
    """Search tokens of an entry's time field, so a query naming a date or month finds what was stored then."""
    return tuple(tokenize(date_words(time))) if time else ()


class SearchIndex:
    """BM25 over entry tokens (text and time fields), the entries' sessions and leading names, and one embedding row per entry."""

    def __init__(self, files: list[MemoryFile], model: str) -> None:
        self.model = model
        self.entries: list[Entry] = [entry for state in files for entry in state.entries]
        self.tokens: list[list[str]] = [
            [*tokens, *time_tokens(entry.time)]
            for state in files for entry, tokens in zip(state.entries, entry_tokens(state), strict=True)
        ]
        self.lexical = Lexical(self.tokens)
        parts = [entry_vectors(state, model) for state in files if state.entries]
        vectors = np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)
        self.vectors = VectorTable(vectors)
        self.context = context_links(self.entries)
        self.recency = episode_recency(self.entries)
        self.core = core_work(self.entries)
        self.sessions = Sessions(self.entries, self.tokens, vectors)
        self.labels = Labels(self.entries)


def core_work(entries: list[Entry]) -> np.ndarray:
    """Per entry, the share of an episode's changed files the project's recent sessions keep changing (see
    CORE_FILES); 0 for every entry that is not an episode."""
    core = np.zeros(len(entries))
    rows = [row for _, row in sorted((time_key(entry.time), row) for row, entry in enumerate(entries)
                                     if entry.type == "episode")]
    changed = {row: set(field(entries[row].text, CHANGED)) for row in rows}
    counts = Counter(name for row in rows[-RECENT:] for name in changed[row])
    for row in rows:
        core[row] = min(1.0, sum(counts[name] >= CORE_SESSIONS for name in changed[row]) / CORE_FILES)
    return core


def episode_recency(entries: list[Entry]) -> np.ndarray:
    """Per entry, how recent an episode it is: 1 for the newest session, halving every RECENCY_HALF_LIFE sessions
    before it; 0 for every entry that is not an episode."""
    recency = np.zeros(len(entries))
    order = sorted((time_key(entry.time), row) for row, entry in enumerate(entries) if entry.type == "episode")
    for age, (_, row) in enumerate(reversed(order)):
        recency[row] = 0.5 ** (age / RECENCY_HALF_LIFE)
    return recency


def context_links(entries: list[Entry]) -> list[np.ndarray]:
    """Per distance d (1 to CONTEXT_REACH): whether entry i and entry i + d were stored together.

    Entries next to each other in a file with the same non-empty time and scope were stored
    at the same moment (the turns of one conversation, the notes of one checkpoint).
    """
    times = np.asarray([f"{entry.scope}\x00{entry.time}" if entry.time else "" for entry in entries], dtype=object)
    links = []
    for distance in range(1, CONTEXT_REACH + 1):
        ahead = times[distance:]
        links.append((times[:-distance] == ahead) & (ahead != "") if len(times) > distance else np.zeros(0, bool))
    return links


_indexes: dict[tuple[str, tuple[tuple[str, str], ...]], SearchIndex] = {}


def forget_caches() -> None:
    """Drop every in-process index, token list and vector table (the next search rebuilds them)."""
    _indexes.clear()
    _vectors.clear()
    _saved_tokens.clear()
    known_tokens.clear()


def search_index(files: list[MemoryFile], model: str) -> SearchIndex:
    """The index for these files' current contents, built once per content hash."""
    key = (model, tuple((os.fspath(state.path), state.digest) for state in files))
    index = _indexes.get(key)
    if index is None:
        index = SearchIndex(files, model)
        while len(_indexes) >= KEPT_INDEXES:
            _indexes.pop(next(iter(_indexes)))
        _indexes[key] = index
    return index
