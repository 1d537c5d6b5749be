"""Releases: working-set views kept whole when they became old, cut once that pays.

A view the agent was still working on stays whole when its step becomes old. When it
leaves the working set later (its range read again, or newer views filled its file's
budget), or stops being kept whole (its file untouched for a while), keeping it costs what its cut would save, at the read price, on every request;
cutting it makes the next jump rewrite the old steps after it too. It is cut at the
first jump where the requests since it left have paid for that rewrite
(`deepmem.transform.jumps.release_pays`). Everything is decided from the history up to each
boundary, so replaying any later step finds the same releases.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from deepmem.bill.prices import PriceModel
from deepmem.transform.jumps import release_pays


class Releases:
    """The views held whole and the ones released so far, boundary by boundary."""

    def __init__(
        self, saving: Callable[[int], int], between: Callable[[int, int], int], tail_steps: int, prices: PriceModel
    ) -> None:
        self.saving, self.between = saving, between
        """Tokens a message's cut saves per request; old tokens after a message up to an index."""
        self.tail_steps, self.prices = tail_steps, prices
        self.held: dict[str, tuple[int, bool]] = {}
        """Part id → (message index, kept whole) of each working-set view when it became old,
        not yet released."""
        self.released: dict[int, list[tuple[str, int]]] = {}

    def forget(self, first: int = 0) -> None:
        """A jump that writes every message from `first` on re-cuts them with its own facts: no view
        held there counts any more, and none before it is released (that would rewrite what the
        jump reads from the cache)."""
        self.held = {part_id: held for part_id, held in self.held.items() if held[0] < first}

    def release(
        self, boundary: int, done: int, left: Mapping[str, int], working_set: frozenset[str], whole: frozenset[str]
    ) -> None:
        """Release at this boundary's jump each held view whose form changed (it left the set, or
        was kept whole and no longer is) and whose cut pays (`done`: index of the first
        message this jump makes old)."""
        for part_id in sorted(self.held):
            since = left.get(part_id)
            index, was_whole = self.held[part_id]
            if since is None or part_id in whole or (part_id in working_set and not was_whole):
                continue
            waited = boundary + self.tail_steps - since
            if release_pays(self.saving(index), waited, self.between(index, done), self.prices):
                self.released.setdefault(index, []).append((part_id, boundary))
                del self.held[part_id]

    def hold(
        self, working_set: frozenset[str], whole: frozenset[str], where: Mapping[str, int], first: int, end: int
    ) -> None:
        """Hold the working-set views of messages `first` … `end` − 1, which become old now."""
        for part_id in sorted(working_set):
            if first <= where.get(part_id, -1) < end:
                self.held[part_id] = (where[part_id], part_id in whole)

    def frozen(self) -> dict[int, tuple[tuple[str, int], ...]]:
        """Message index → (part id, boundary) of each view released so far."""
        return {index: tuple(pairs) for index, pairs in self.released.items()}
