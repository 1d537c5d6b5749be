"""The one bounded in-memory cache: a mapping that forgets its least recently used entry.

The transform's memos (`deepmem.transform.outcomes.Caches`) and CCR's hot originals both use it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

MISSING = object()


class LRU:
    """A bounded mapping that forgets the least recently used entry."""

    def __init__(self, size: int):
        self.size = size
        self.entries: OrderedDict[Any, Any] = OrderedDict()

    def __len__(self) -> int:
        """How many entries are kept."""
        return len(self.entries)

    def __contains__(self, key: Any) -> bool:
        """True when key is kept (its place in the order unchanged)."""
        return key in self.entries

    def keys(self) -> list[Any]:
        """The keys kept, least recently used first (the order unchanged)."""
        return list(self.entries)

    def peek(self, key: Any) -> Any:
        """The cached value for key, or None (its place in the order unchanged)."""
        return self.entries.get(key)

    def put(self, key: Any, value: Any) -> None:
        """Store a value under key, as the most recently used."""
        self.entries[key] = value
        self.entries.move_to_end(key)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        """The cached value for key (now the most recently used), computing and storing it when absent.

        An exception raised by `compute` stores nothing.
        """
        value = self.entries.get(key, MISSING)
        if value is not MISSING:
            self.entries.move_to_end(key)
            return value
        value = compute()
        self.put(key, value)
        return value

    def clear(self) -> None:
        """Forget every entry."""
        self.entries.clear()
