"""`deepmem memory cleanup` and `reindex`: what has outlived its use, and a fresh search index.

Cleanup proposes (and with `apply` archives, never deletes) entries that consolidation
would merge or supersede, gotchas, facts and notes not retrieved for `stale_days`, and
those never retrieved `unused_days` after they were stored. Constraints and decisions are
shown in every session's stable block, so they age out only by being superseded.
Hand-written entries (no time) are never proposed.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from typing import Any

from deepmem.memory.age import stored_at
from deepmem.memory.aside import check_utf8, set_aside
from deepmem.memory.consolidate import Change, consolidate
from deepmem.memory.files import read_memory_file, scope_dir, scopes_of, write_memory_file
from deepmem.memory.usage import read_usage
from deepmem.project.config import memory_dir
from deepmem.vault.disk import locked

AGING_TYPES = frozenset({"gotcha", "fact", "note"})
STALE_DAYS = 180
UNUSED_DAYS = 30


def _aged(entry: Any, usage: dict[str, Any], now: datetime, stale_days: int, unused_days: int) -> Change | None:
    """A stale or never-retrieved entry as an archive change, or None."""
    stored = stored_at(entry.time)
    if stored is None or entry.type not in AGING_TYPES:
        return None
    used = usage.get(entry.id) if isinstance(usage.get(entry.id), dict) else {}
    last = stored_at(str(used.get("last") or ""))
    if last is None and now - stored >= timedelta(days=unused_days):
        return Change("never retrieved", entry, "", f"stored {(now - stored).days} days ago, never retrieved")
    if now - (last or stored) >= timedelta(days=stale_days):
        return Change("stale", entry, "", f"not retrieved for {(now - (last or stored)).days} days")
    return None


def cleanup(root: str | os.PathLike[str], now: datetime, apply: bool = False,
            stale_days: int = STALE_DAYS, unused_days: int = UNUSED_DAYS) -> list[Change]:
    """What cleanup would move out of the project's MEMORY.md; with `apply`, move it."""
    folder = memory_dir(root)
    with locked(folder):
        state = read_memory_file(folder / "MEMORY.md", "project", verify=True)
        check_utf8(state.path, state.data)
        plan = consolidate(state.entries, len(state.entries) or 1)
        usage = read_usage(folder)
        aged = [change for entry in plan.kept if (change := _aged(entry, usage, now, stale_days, unused_days))]
        if apply and (plan.changes or aged):
            set_aside(folder, plan.changes + aged)
            old = {change.entry.id for change in aged}
            write_memory_file(state, [entry for entry in plan.kept if entry.id not in old])
    return plan.changes + aged


def reindex(root: str | os.PathLike[str], model: str) -> dict[str, Any]:
    """Drop the search caches of every scope and rebuild them with `model` (loaded first: a bad model changes nothing)."""
    from deepmem.memory.embed import load_model
    from deepmem.memory.index import forget_caches, search_index

    dim = load_model(model).dim
    files = []
    for scope in scopes_of("all"):
        folder = scope_dir(root, scope)
        for cache in (folder / "index").glob("vectors-*"):
            cache.unlink(missing_ok=True)
        (folder / "index" / "tokens.msgpack").unlink(missing_ok=True)
        files.append(read_memory_file(folder / "MEMORY.md", scope))
    forget_caches()
    index = search_index(files, model)
    return {"model": model, "dim": dim, "entries": len(index.entries)}
