"""What the schedule weighs, and where it puts the boundary: one layout per plan.

`schedule_layout` is the one entry: it numbers the steps, finds the cold ones (a pause past
the cache's lifetime, a new model) once, asks `deepmem.transform.jumps` for the jumps the settings
name (priced on `step_sizes`: per step, the history's tokens uncompressed and as its
compressors would leave it, the views a jump keeps whole counted whole), and places the
boundary. Probes and whole views are memoized in `deepmem.transform.outcomes.CACHES`, so a new step
weighs only its new messages.
"""

from __future__ import annotations

import msgspec

from deepmem.bill.prices import PriceModel, resolve_prices, warn_once
from deepmem.history import Layout, layout, message_steps, tier_for, view_cap_tokens
from deepmem.transform.cache_mark import MarkPlaces
from deepmem.transform.facts import WholeViews
from deepmem.transform.jumps import (
    NO_FRAME,
    Bills,
    RequestFrame,
    Sizes,
    boundary_at,
    cold_steps,
    fixed_jumps,
    priced_jumps,
    running_bills,
    running_totals,
)
from deepmem.transform.outcomes import CACHES, Batch, message_digest, message_sizes, part_outcomes
from deepmem.transform.working_set import sized_builder
from deepmem.types import Facts, Message, Settings, Tier

PROBES: dict[Tier, Batch] = {tier: Batch(0, 0, tier, Facts()) for tier in ("low", "medium", "high")}
"""Stand-in batches for estimating what a message would keep once old, before any facts."""


def probe_tokens(
    message: Message, digest: bytes | None, step: int, tier: Tier, settings: Settings, settings_key: str
) -> tuple[int, ...]:
    """Estimated tokens of each part of a message once old: its compressors at `tier` with no facts (memoized).

    Taking every file read for one the agent still works on (as the working set often does)
    was measured too: it made the schedule so late that it cost more than the fixed one.
    """

    def probe() -> tuple[int, ...]:
        return tuple(outcome.tokens[1] for outcome in part_outcomes(message, digest, step, PROBES[tier], None, settings, {}))

    return probe() if digest is None else CACHES.probes.get((digest, tier, settings_key), probe)


class MessageTokens:
    """Estimated tokens of a history's messages as recorded and as probed once old (for the
    schedule and the releases)."""

    def __init__(
        self, messages: list[Message], digests: list[bytes | None], steps: tuple[int, ...], settings: Settings
    ) -> None:
        self.messages, self.digests, self.steps, self.settings = messages, digests, steps, settings
        self.settings_key = repr(settings)
        self.tokens = [message_sizes(message, digest).tokens for message, digest in zip(messages, digests, strict=True)]
        self.totals = running_totals(steps, self.tokens, steps[-1] if steps else 0)
        self.sums = [0]
        """Probes summed over the first k messages, extended as far as asked."""
        self.savings: dict[int, int] = {}

    def probe(self, index: int) -> int:
        """The message's probe (its compressors at its tier, no facts)."""
        return sum(self.part_probes(index))

    def part_probes(self, index: int) -> tuple[int, ...]:
        """Per part of the message: its tokens as probed."""
        step = self.steps[index]
        tier = tier_for(self.totals[step], self.settings)
        return probe_tokens(self.messages[index], self.digests[index], step, tier, self.settings, self.settings_key)

    def whole_extra(self, index: int, part_id: str, cap: int) -> int:
        """Tokens a part kept whole (up to `cap` tokens) adds to its message's probe: its own probe
        is already counted there."""
        message = self.messages[index]
        part_index = next(i for i, part in enumerate(message["parts"]) if str(part.get("id", "")) == part_id)
        whole = message_sizes(message, self.digests[index]).parts[part_index][1]
        return max(min(whole, cap) - self.part_probes(index)[part_index], 0)

    def saving(self, index: int) -> int:
        """Tokens a cut of the message saves on every later request (its probe against its whole text)."""
        saving = self.savings.get(index)
        if saving is None:
            saving = self.savings[index] = max(self.tokens[index] - self.probe(index), 0)
        return saving

    def between(self, index: int, end: int) -> int:
        """Tokens of the old messages after the message, up to `end` (what a cut of it rewrites besides a jump's own)."""
        while len(self.sums) <= end:
            self.sums.append(self.sums[-1] + self.probe(len(self.sums) - 1))
        return self.sums[end] - self.sums[min(index + 1, end)]


def whole_views(
    messages: list[Message], digests: list[bytes | None], steps: tuple[int, ...], settings: Settings, prices: PriceModel
) -> WholeViews:
    """The views kept whole at each step of this history, extending the fold of its latest plan."""
    key = (digests[0] if digests else None, settings, prices)
    folded = CACHES.whole.peek(key) if key[0] is not None else None
    if folded is None or not folded.matches(digests):
        folded = WholeViews(sized_builder(settings, prices), settings.tail_steps)
    for index in range(len(folded.digests), len(messages)):
        folded.fold(messages[index], digests[index], steps[index])
    if key[0] is not None:
        CACHES.whole.put(key, folded)
    return folded


def mark_places(messages: list[Message], steps: tuple[int, ...], settings: Settings, prices: PriceModel) -> MarkPlaces | None:
    """Where deepmem's own cache mark can sit, when the provider reads its cache only at marks
    and the settings allow the mark; None otherwise."""
    return MarkPlaces(messages, steps) if settings.cache_mark and prices.marks_pay else None


def marked_tokens(places: MarkPlaces | None, cut: tuple[int, ...], probed: tuple[int, ...]) -> tuple[int, ...]:
    """Per boundary k: the tokens before the mark placed while k is the boundary, for the model the
    newest request asks for: the messages before the mark's own as their compressors leave them
    (`cut`; a view kept whole there counts cut, and the mark's message counts as written), never
    more than the old history at k (`probed`); () without marks."""
    if places is None:
        return ()
    step = len(probed) - 1
    found = [places.place(boundary, step) for boundary in range(step + 1)]
    return tuple(min(cut[place[0] - 1], probed[boundary]) if place else 0 for boundary, place in enumerate(found))


def step_sizes(
    sizes: MessageTokens,
    prices: PriceModel,
    cold: tuple[bool, ...],
    places: MarkPlaces | None = None,
    frame: RequestFrame = NO_FRAME,
) -> Sizes:
    """What the schedule weighs: running token totals per step, uncompressed and probed, the
    cold steps, what a jump reads up to deepmem's cache mark (`places`) and what every request
    carries before its messages (`frame`)."""
    messages, digests, steps, settings = sizes.messages, sizes.digests, sizes.steps, sizes.settings
    count = steps[-1] if steps else 0
    probed = [sizes.probe(index) for index in range(len(messages))]
    cap = view_cap_tokens(settings)
    folded = whole_views(messages, digests, steps, settings, prices)
    whole = folded.per_step(count, lambda index, part_id: sizes.whole_extra(index, part_id, cap))
    old = running_totals(steps, probed, count)
    totals = tuple(cut + kept for cut, kept in zip(old, whole, strict=True))
    return Sizes(sizes.totals, totals, cold, marked_tokens(places, old, totals), settings.tail_steps, frame)


def session_sizes(
    messages: list[Message], settings: Settings, prices: PriceModel, frame: RequestFrame = NO_FRAME
) -> Sizes:
    """What the schedule weighs over a whole history, for a caller that holds only its messages."""
    digests = [message_digest(message) for message in messages]
    steps = message_steps(messages)
    cold = cold_steps(messages, steps, steps[-1] if steps else 0, prices)
    places = mark_places(messages, steps, settings, prices)
    return step_sizes(MessageTokens(messages, digests, steps, settings), prices, cold, places, frame)


def rebases(
    jumps: tuple[int, ...], cold: tuple[bool, ...], settings: Settings, prices: PriceModel, places: MarkPlaces | None
) -> tuple[tuple[int, int], ...]:
    """(read step, boundary) of each jump made at a request that writes every message after a point anyway.

    Such a request writes what follows that point whatever it holds, so its jump cuts deep
    there at no cache cost: every old part after it is compressed again with the newest
    facts and tier (stale reads, repeated calls, outputs that left the working set), not
    only the newly old steps. A request after a pause past the cache's lifetime or a model
    switch writes everything (read step 0); where the cache is read only at marks, every
    jump writes what follows deepmem's mark (`deepmem.transform.cache_mark`; everything without one).
    A rebase that reaches as far back as an earlier one replaces it.
    """
    found: list[tuple[int, int]] = []
    for previous, boundary in zip(jumps, jumps[1:], strict=False):
        made = boundary + settings.tail_steps
        if made < len(cold) and cold[made]:
            read = 0
        elif prices.jumps_write_everything:
            settled = previous + settings.tail_steps < made - 1  # the previous request carried its mark too
            place = places.place(previous, made) if places and settled else None
            read = place[0] if place else 0
        else:
            continue
        found = [(step, target) for step, target in found if step < read] + [(read, boundary)]
    return tuple(found)


def mark_at(places: MarkPlaces | None, shape: Layout, settings: Settings) -> tuple[int, int] | None:
    """(message index, part index) of the part the current request marks for the cache: the last
    text of its model at or before the boundary the previous request had; None when none."""
    if places is None or shape.step == 0:
        return None
    previous = boundary_at(shape.jumps, settings, shape.step - 1)
    place = places.place(previous, shape.step)
    return (place[1], place[2]) if place else None


class Schedule(msgspec.Struct, frozen=True):
    """Where a history's boundary stands, the price model that put it there, the history's
    message sizes (which the plan's releases weigh too), the part that carries deepmem's cache
    mark, and the session's running bills (none when the jumps were imposed)."""

    layout: Layout
    prices: PriceModel
    sizes: MessageTokens
    mark: tuple[int, int] | None = None
    bills: Bills | None = None


def schedule_layout(
    messages: list[Message],
    digests: list[bytes | None],
    settings: Settings,
    prices: PriceModel | None = None,
    jumps: tuple[int, ...] | None = None,
    frame: RequestFrame = NO_FRAME,
) -> Schedule:
    """The history laid out once: its steps, its cold steps, its prices (the family the messages
    name when None, noted once in the log), its jumps (`jumps` imposes them instead), its boundary
    and its running bills (`frame`: what every request carries before its messages)."""
    steps = message_steps(messages)
    if prices is None:
        prices = resolve_prices(messages)
        warn_once(f"no price model given: the jumps are weighed at the {prices.name} family's prices")
    count = steps[-1] if steps else 0
    cold = cold_steps(messages, steps, count, prices)
    places = mark_places(messages, steps, settings, prices)
    tokens = MessageTokens(messages, digests, steps, settings)
    bills = None
    if jumps is None:
        sizes = step_sizes(tokens, prices, cold, places, frame)
        jumps = fixed_jumps(count, settings) if settings.schedule == "fixed" else priced_jumps(sizes, settings, prices)
        bills = running_bills(sizes, jumps, settings, prices)
    shape = layout(messages, jumps, steps, rebases(jumps, cold, settings, prices, places))
    return Schedule(shape, prices, tokens, mark_at(places, shape, settings), bills)
