"""When memories were last retrieved (search and whisper hits), for `deepmem memory cleanup`.

Kept per scope in `index/usage.json`, with the other caches: losing it only makes cleanup
think memories were never retrieved, and cleanup never deletes, it archives.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import orjson

from deepmem.vault.disk import locked
from deepmem.vault.writer import write_shared_json

USAGE = Path("index") / "usage.json"


def read_usage(folder: Path) -> dict[str, dict[str, object]]:
    """{id: {"count", "last"}} of a scope folder; empty when missing or unreadable."""
    try:
        value = orjson.loads((folder / USAGE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def record_use(folder: Path, ids: list[str], now: datetime) -> None:
    """Count one retrieval of each id at `now`; a failed write is ignored (usage is advisory)."""
    if not ids:
        return
    stamp = now.strftime("%Y-%m-%dT%H:%MZ")
    try:
        with locked(folder):
            usage = read_usage(folder)
            for entry_id in ids:
                seen = usage.get(entry_id) if isinstance(usage.get(entry_id), dict) else {}
                count = seen.get("count") if isinstance(seen.get("count"), int) else 0
                usage[entry_id] = {"count": count + 1, "last": stamp}
            write_shared_json(folder / USAGE, usage, option=orjson.OPT_SORT_KEYS)
    except OSError:
        pass
