"""Memory as plain functions over dicts, for the bridge, the CLI and the checkpoint code.

`root` is the project dir holding `.deep-memory/`. Importing this module is cheap: numpy,
rank-bm25, jieba and model2vec load only when a search or an embedding actually runs.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import Any

import msgspec

from deepmem.memory import inject
from deepmem.memory.entries import CONTROL, MAX_ENTRY_CHARS, Entry
from deepmem.memory.episodes import (
    CHANGED,
    WORKED,
    changed_together,
    definitions,
    episodes_path,
    sessions_with,
    weighted,
)
from deepmem.memory.files import read_memory_file, scope_dir, scopes_of
from deepmem.memory.query import clean_query, file_names, query_words
from deepmem.memory.staleness import file_hash, marked, read_hashes
from deepmem.memory.store import add_notes, forget_ids, memory_path
from deepmem.memory.store import store as _store
from deepmem.memory.tokenize import cached_tokens
from deepmem.memory.usage import record_use
from deepmem.project.folder import Project
from deepmem.types import InputError

Root = str | os.PathLike[str]
FILE_WEIGHT = 2.0
FILE_REACH = 30
"""A hit among the first FILE_REACH that names a file the query names (its path, or its name without folder and
extension) gains FILE_WEIGHT: on claude-entire, an earlier session that edited the same files is then in the top 3
for 0.70 of sessions instead of 0.69, 0.64 of its later half instead of 0.61 (swe corpora unchanged)."""


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


def searched_files(root: Root, scope: str) -> list[Any]:
    """The memory files a search reads: each scope's MEMORY.md, and the project's episodes."""
    files = [read_memory_file(memory_path(root, name), name) for name in scopes_of(scope)]
    if "project" in scopes_of(scope):
        files.append(read_memory_file(episodes_path(root), "project"))
    return files


def ranked(root: Root, query: str, k: int = 5, scope: str = "all", explain: bool = False,
           bm25_weight: float | None = None) -> list[Any]:
    """Ranked `Hit`s over the named scopes (see deepmem.memory.search)."""
    from deepmem.memory.embed import model_name
    from deepmem.memory.index import search_index
    from deepmem.memory.search import BM25_WEIGHT, check_query, rank

    index = search_index(searched_files(root, scope), model_name(root))
    weight = BM25_WEIGHT if bm25_weight is None else bm25_weight
    query = check_query(query)
    query = clean_query(query) or query
    return naming_first(rank(index, query, max(k, FILE_REACH), weight, explain), query)[:k]


def naming_first(hits: list[Any], query: str) -> list[Any]:
    """The hits with FILE_WEIGHT added to those naming a file the query names, re-sorted (ties keep their order)."""
    words = query_words(query)
    scored = [(hit.score + (FILE_WEIGHT if file_names(hit.entry.text) & words else 0.0), hit) for hit in hits]
    return [hit for _, hit in sorted(scored, key=lambda pair: -pair[0])]


def search(root: Root, query: str, k: int = 5, scope: str = "all", explain: bool = False,
           track: bool = False) -> list[dict[str, Any]]:
    """Top k memories for a query: dicts with id, type, text, time, scope, score (+ explain).

    `track` records the hits as retrieved (the model's memory_search does; benchmarks do not)."""
    hits = current_hits(root, ranked(root, query, k, scope, explain), retire=False)
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


def together(root: Root, query: str, scope: str = "all") -> str:
    """What the project's history says changes together with the files a query names ('' when nothing
    does, or when the search is of the global scope only, which holds no project history)."""
    if "project" not in scopes_of(scope):
        return ""
    words = query_words(query)
    found = changed_together(root, lambda path: bool(file_names(f"`{path}`") & words))
    return inject.together_text(found)


def forget(root: Root, target: str, scope: str = "project", yes: bool = True) -> dict[str, Any]:
    """Forget by id, or the best match of a query; without `yes` only report what would go."""
    if not isinstance(target, str) or not target.strip():
        raise InputError("forget needs an id or a query")
    state = read_memory_file(memory_path(root, scope), scope)
    entry_id = target.strip().strip("[]")
    if entry_id in state.by_id:
        matches = [state.by_id[entry_id]]
    else:
        matches = [hit.entry for hit in ranked(root, target, 5, scope) if hit.entry.id in state.by_id][:1]
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
    """The project's commands, hot files and their roles, and its newest rules and decisions, ranked and capped."""
    known = marked(root, entries(root, "all"), retire=True)
    rules = [entry for entry in reversed(known) if entry.type == "constraint"]
    decisions = [entry for entry in reversed(known) if entry.type == "decision"]
    shown_rules, shown_decisions = rules[: inject.MAX_RULES], decisions[: inject.MAX_DECISIONS]
    left_out = len(rules) + len(decisions) - len(shown_rules) - len(shown_decisions)
    return inject.stable_text(project_commands(root), hot_files(root), shown_rules, shown_decisions, left_out)


def project_commands(root: Root) -> list[tuple[str, int]]:
    """The build, test and lint commands that worked in the most recent sessions, with how many."""
    counts = sessions_with(root, WORKED)
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[: inject.MAX_COMMANDS]


def hot_files(root: Root) -> list[tuple[str, list[str]]]:
    """The files recent sessions changed most (recent ones weigh more), each with names defined in it;
    a file known to be gone is left out."""
    counts, weights, roles = sessions_with(root, CHANGED), weighted(root, CHANGED), definitions(root)
    hashed = {path for files in read_hashes(root).values() for path in files}
    ranked_files = sorted((path for path, count in counts.items() if count >= inject.MIN_HOT_SESSIONS),
                          key=lambda path: (-round(weights[path], 6), path))
    present = [path for path in ranked_files if path not in hashed or file_hash(root, path) is not None]
    return [(path, roles.get(path, [])[: inject.MAX_ROLES]) for path in present[: inject.MAX_HOT_FILES]]


def whisper_hits(root: Project, query: str, min_score: float | None = None) -> list[Any]:
    """The whisper's hits for a user message: relevant by similarity or shared terms, and scoring at least
    `min_score` (default: `[memory] whisper_min_score` of the settings)."""
    query = (clean_query(query or "") or CONTROL.sub(" ", query or ""))[:MAX_ENTRY_CHARS].strip()
    if not query or not any(state.entries for state in searched_files(root, "all")):
        return []
    if min_score is None:
        min_score = root.config.memory.whisper_min_score
        min_score = float("-inf") if min_score is None else min_score
    terms = set(cached_tokens(query))
    chosen = []
    for hit in ranked(root, query, inject.WHISPER_HITS, "all"):
        coverage = len(terms & set(cached_tokens(hit.entry.text))) / len(terms) if terms else 0.0
        relevant = hit.similarity >= inject.WHISPER_MIN_SIMILARITY or (
            hit.bm25 > 0 and coverage >= inject.WHISPER_MIN_COVERAGE)
        if relevant and hit.score >= min_score:
            chosen.append(hit)
    return current_hits(root, chosen, retire=True)


def current_hits(root: Root, hits: list[Any], retire: bool) -> list[Any]:
    """The hits with their entries marked where a named file changed or is gone since (with `retire`, left out)."""
    shown = []
    for hit in hits:
        entry = marked(root, [hit.entry], retire)
        if entry:
            shown.append(msgspec.structs.replace(hit, entry=entry[0]))
    return shown


def whisper(root: Root, query: str, now: datetime | None = None, shown: str = "") -> str | None:
    """Top memories relevant to the newest user message that the session was not shown yet (their `[id]` is not
    in `shown`: the stable block and earlier whispers), or None when none is relevant enough. The first whisper of
    a session shows more than the later ones."""
    limit = inject.WHISPER_SHOWN if "<deep-memory-recall>" in shown else inject.WHISPER_SHOWN_FIRST
    chosen = [hit for hit in whisper_hits(root, query) if f"[{hit.entry.id}]" not in shown][:limit]
    now = now or datetime.now(UTC)
    _record(root, [hit.entry for hit in chosen], now)
    return inject.whisper_text([(hit.entry, hit.score) for hit in chosen], now, limit)


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
