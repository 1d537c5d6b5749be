"""Memory as plain functions over dicts, for the bridge, the CLI and the checkpoint code.

`root` is the project dir holding `.deep-memory/`. Importing this module is cheap: numpy,
rank-bm25, jieba and model2vec load only when a search or an embedding actually runs.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

from deepmem.memory import inject
from deepmem.memory.entries import CONTROL, MAX_ENTRY_CHARS, Entry
from deepmem.memory.files import read_memory_file, scope_dir, scopes_of
from deepmem.memory.store import add_notes, forget_ids, memory_path
from deepmem.memory.store import store as _store
from deepmem.memory.tokenize import cached_tokens
from deepmem.memory.usage import record_use
from deepmem.project import project_of
from deepmem.types import InputError

Root = str | os.PathLike[str]


def entry_dict(entry: Entry) -> dict[str, Any]:
    """An entry as the dict every API answer uses."""
    return {"id": entry.id, "type": entry.type, "text": entry.text, "time": entry.time, "scope": entry.scope}


def entries(root: Root, scope: str = "all") -> list[Entry]:
    """Every entry of the named scopes, in file order (project first)."""
    return [entry for name in scopes_of(scope) for entry in read_memory_file(memory_path(root, name), name).entries]


def store(root: Root, text: str, type: str = "note", scope: str = "project") -> dict[str, Any]:
    """Store a memory: `{"status": stored|merged|refused, "id", "message", "entry"}`."""
    outcome = _store(root, text, type, scope)
    return {"status": outcome.status, "id": outcome.entry.id, "message": outcome.message,
            "entry": entry_dict(outcome.entry)}


def ranked(root: Root, query: str, k: int = 5, scope: str = "all", explain: bool = False,
           bm25_weight: float | None = None) -> list[Any]:
    """Ranked `Hit`s over the named scopes (see deepmem.memory.search)."""
    from deepmem.memory.embed import model_name
    from deepmem.memory.index import search_index
    from deepmem.memory.search import BM25_WEIGHT, rank

    files = [read_memory_file(memory_path(root, name), name) for name in scopes_of(scope)]
    index = search_index(files, model_name(root))
    weight = BM25_WEIGHT if bm25_weight is None else bm25_weight
    return rank(index, query, k, weight, explain)


def search(root: Root, query: str, k: int = 5, scope: str = "all", explain: bool = False,
           track: bool = False) -> list[dict[str, Any]]:
    """Top k memories for a query: dicts with id, type, text, time, scope, score (+ explain).

    `track` records the hits as retrieved (the model's memory_search does; benchmarks do not)."""
    hits = ranked(root, query, k, scope, explain)
    if track:
        _record(root, [hit.entry for hit in hits], datetime.now(UTC))
    results = []
    for hit in hits:
        result = {**entry_dict(hit.entry), "score": hit.score}
        if explain:
            result["explain"] = {"bm25": hit.bm25, "bm25_rank": hit.bm25_rank, "terms": hit.terms,
                                 "similarity": hit.similarity, "similarity_rank": hit.similarity_rank}
        results.append(result)
    return results


def forget(root: Root, target: str, scope: str = "project", yes: bool = True) -> dict[str, Any]:
    """Forget by id, or the best match of a query; without `yes` only report what would go."""
    if not isinstance(target, str) or not target.strip():
        raise InputError("forget needs an id or a query")
    state = read_memory_file(memory_path(root, scope), scope)
    entry_id = target.strip().strip("[]")
    if entry_id in state.by_id:
        matches = [state.by_id[entry_id]]
    else:
        matches = [hit.entry for hit in ranked(root, target, 1, scope)]
    if not matches:
        return {"status": "none", "forgotten": [], "matches": [], "message": "nothing matches"}
    if not yes:
        return {"status": "confirm", "forgotten": [], "matches": [entry_dict(entry) for entry in matches],
                "message": "confirm to forget " + ", ".join(f"[{entry.id}]" for entry in matches)}
    gone = forget_ids(root, [entry.id for entry in matches], scope)
    return {"status": "forgotten" if gone else "none", "forgotten": [entry.id for entry in gone],
            "matches": [entry_dict(entry) for entry in gone],
            "message": "forgot " + ", ".join(f"[{entry.id}]" for entry in gone) if gone else "nothing matches"}


def stable_block(root: Root) -> str:
    """Constraints and key decisions (project, then global) plus the tool hint, under a token budget."""
    known = entries(root, "all")
    constraints = [entry for entry in known if entry.type == "constraint"]
    decisions = [entry for entry in known if entry.type == "decision"]
    return inject.stable_text(constraints, decisions)


def whisper_hits(root: Root, query: str, min_score: float | None = None) -> list[Any]:
    """The whisper's hits for a user message: relevant by similarity or shared terms, and scoring at least
    `min_score` (default: `[memory] whisper_min_score` of the settings)."""
    query = CONTROL.sub(" ", query or "")[:MAX_ENTRY_CHARS].strip()
    if not query or not any(read_memory_file(memory_path(root, name), name).entries for name in scopes_of("all")):
        return []
    if min_score is None:
        min_score = project_of(root).config.memory.whisper_min_score
        min_score = float("-inf") if min_score is None else min_score
    terms = set(cached_tokens(query))
    chosen = []
    for hit in ranked(root, query, inject.WHISPER_HITS, "all"):
        coverage = len(terms & set(cached_tokens(hit.entry.text))) / len(terms) if terms else 0.0
        relevant = hit.similarity >= inject.WHISPER_MIN_SIMILARITY or (
            hit.bm25 > 0 and coverage >= inject.WHISPER_MIN_COVERAGE)
        if relevant and hit.score >= min_score:
            chosen.append(hit)
    return chosen


def whisper(root: Root, query: str, now: datetime | None = None) -> str | None:
    """Top memories relevant to the newest user message, or None when none is relevant enough."""
    chosen = whisper_hits(root, query)
    now = now or datetime.now(UTC)
    _record(root, [hit.entry for hit in chosen], now)
    return inject.whisper_text([(hit.entry, hit.score) for hit in chosen], now)


def _record(root: Root, hits: list[Entry], now: datetime) -> None:
    """Count the entries as retrieved at `now`, in their own scope's usage file."""
    for name in scopes_of("all"):
        record_use(scope_dir(root, name), [entry.id for entry in hits if entry.scope == name], now)


def format_hits(hits: list[dict[str, Any]], now: datetime | None = None) -> str:
    """Search results as compact text for the model (the memory_search tool result)."""
    return inject.format_hits(hits, now or datetime.now(UTC))


def add_note(root: Root, text: str, source: str, type: str = "note") -> None:
    """Append an automatic capture to the project's notes.md (exact repeats are skipped)."""
    add_notes(root, [(type, text)], source)


def notes(root: Root) -> list[dict[str, Any]]:
    """The automatic captures waiting in notes.md (time holds `time · source`)."""
    path = scope_dir(root, "project") / "notes.md"
    return [entry_dict(entry) for entry in read_memory_file(path, "project").entries]
