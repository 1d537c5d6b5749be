"""The transform: old parts through their compressors, originals into CCR, edits out.

Pure except for the optional CCR store: the same messages and settings always give the
same bytes. A compressor that raises is counted and its part passes through unchanged.

`plan_transform` runs before every step, so its work is memoized: the outcome of each
message is kept in a bounded cache keyed by the message's digest, its step, the
fingerprint of the batch that froze its facts, the tier and the settings; the batches
are cached by a fingerprint of the old history; and the per-message results of each
history's latest plan are kept, so the next step recomputes only the messages after the
prefix the two share. A new step on a long history then costs one digest per message
(none when the caller already holds them), a comparison of message keys, and the work of
its new messages. All these memos belong to `CACHES`; `CACHES.clear()` makes the next plan
cold.
"""

from __future__ import annotations

import gc
import logging
from bisect import bisect_left
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import msgspec
import orjson
import xxhash

from deepmem.compressors import FACT_FREE, REGISTRY, capture_compressors, compressors_for
from deepmem.copied import CopiedLines, copied_lines
from deepmem.facts import FactsBuilder, WholeViews
from deepmem.history import (
    Layout,
    is_user_typed,
    layout,
    message_steps,
    tier_for,
    view_cap_tokens,
    visible_text,
    whole_view_tokens,
)
from deepmem.jumps import Sizes, cold_steps, fixed_jumps, priced_jumps, running_totals
from deepmem.lru import LRU
from deepmem.nudges import Signals, is_nudge, message_signals, nudge_parts
from deepmem.part_marks import CompressedMark, mark_metadata
from deepmem.prices import PriceModel, resolve_prices
from deepmem.releases import Releases
from deepmem.tokens import estimate_tokens
from deepmem.types import Context, Facts, Message, Original, Part, Settings, Tier, cache_key
from deepmem.working_set import WorkingSetBuilder

log = logging.getLogger("deepmem.pipeline")

PART_KEY = "part"
"""Compressor name under which whole original parts are stored, for session restore."""


class PartEdit(msgspec.Struct, frozen=True, gc=False):
    """Replace one part: addressed by position (files) and by ids (the bridge)."""

    message_index: int
    part_index: int
    message_id: str
    part_id: str
    part: Part


class KindStats(NamedTuple):
    """Parts, and characters and estimated tokens before and after, for one kind of part
    (a tuple: summed per message and per history on every plan)."""

    parts: int = 0
    compressed: int = 0
    chars_before: int = 0
    chars_after: int = 0
    tokens_before: int = 0
    tokens_after: int = 0

    def plus(self, other: KindStats) -> KindStats:
        """Both counts summed."""
        return KindStats(*map(sum, zip(self, other, strict=True)))


class TransformPlan(msgspec.Struct, frozen=True):
    """The outcome of one transform, built once (the nudges are computed before it)."""

    layout: Layout
    tier: Tier
    edits: list[PartEdit]
    originals: list[Original]
    stats: dict[str, KindStats]
    failures: int = 0
    tail_parts: list[Part] = []
    """Synthetic parts (nudges) to append to the last message, after everything else."""
    message_tokens: list[int] = []
    """Per message: estimated tokens of its uncompressed parts (appended nudges excluded)."""
    signals: list[Signals] = []
    """Per message: what the nudges look for (statements to remember, edits, compressed reads)."""


class PartOutcome(msgspec.Struct, frozen=True, gc=False):
    """What the transform does to one part: its replacement (or None), originals, sizes."""

    part: Part | None
    originals: tuple[Original, ...]
    failures: int
    chars: tuple[int, int]
    tokens: tuple[int, int]


class Caches:
    """Every memo of the transform, owned in one place: after `clear()` the next plan is cold."""

    def __init__(self) -> None:
        self.messages = LRU(32_768)
        """MessageOutcome by message key (see `Accumulated.keys`)."""
        self.sizes = LRU(32_768)
        """MessageSizes by message digest."""
        self.batches = LRU(16)
        """Frozen batches by the fingerprint of the old history."""
        self.histories = LRU(64)
        """Accumulated results by (settings, tier, digest of the first message): one per live history."""
        self.probes = LRU(32_768)
        """Probed tokens (what a message would keep once old) by (digest, tier, settings)."""
        self.copied = LRU(64)
        """CopiedLines by the digest of the first message: one per live history."""
        self.whole = LRU(64)
        """WholeViews by (digest of the first message, settings, prices): one per live history."""
        self.parts = LRU(65_536)
        """Outcome of a part whose compressors read no facts, by (message digest, part index,
        compressors, tier, settings, copied lines): the probe and the plan share it."""

    def all(self) -> tuple[LRU, ...]:
        """Each memo."""
        return (self.messages, self.sizes, self.batches, self.histories, self.probes, self.copied, self.whole, self.parts)

    def __len__(self) -> int:
        """How many entries all memos keep."""
        return sum(len(cache) for cache in self.all())

    def clear(self) -> None:
        """Forget everything memoized."""
        for cache in self.all():
            cache.clear()


CACHES = Caches()


def stats_kind(message: Message, part: Part) -> str:
    """The row a part is counted under in `--stats`."""
    if is_user_typed(message, part):
        return "user text"
    if part.get("type") == "tool":
        return f"tool:{part.get('tool')}"
    return str(part.get("type"))


def message_digest(message: Message) -> bytes | None:
    """A digest of the whole message, or None when it cannot be encoded (lone surrogates)."""
    try:
        return xxhash.xxh3_128_digest(orjson.dumps(message))
    except TypeError:
        return None


def compress_part(
    part: Part, ctx: Context, names: tuple[str, ...]
) -> tuple[Part, list[Original], list[str], int]:
    """Run a part through the named compressors in order; return (part, originals, names, failures)."""
    current, originals, used, failures = part, [], [], 0
    for name in names:
        try:
            result = REGISTRY[name].compress(current, ctx)
        except Exception:  # noqa: BLE001 — fail open: the part passes through this compressor
            log.warning("compressor %s failed on part %s", name, part.get("id"), exc_info=True)
            failures += 1
            continue
        if result is not None:
            current = result.part
            originals.extend(result.originals)
            used.append(name)
    return current, originals, used, failures


def mark_restorable(original: Part, compressed: Part, names: list[str]) -> tuple[Part, Original]:
    """Record in `metadata.deepmem` the CCR key of the whole original part."""
    text = orjson.dumps(original).decode()
    key = cache_key(text, PART_KEY)
    return {**compressed, "metadata": mark_metadata(compressed, CompressedMark(key, names))}, Original(key, text)


def sizes(part: Part) -> tuple[int, int]:
    """(characters, estimated tokens) of what the model sees of a part."""
    text = visible_text(part)
    return len(text), estimate_tokens(text)


def outcome_for(part: Part, ctx: Context, names: tuple[str, ...], before: tuple[int, int]) -> PartOutcome:
    """Compress one part of `before` (characters, tokens) size (fail open: any error leaves it as it was)."""
    chars, tokens = before
    if not names:
        return PartOutcome(None, (), 0, (chars, chars), (tokens, tokens))
    try:
        new, cut, used, failures = compress_part(part, ctx, names)
        if not used:
            return PartOutcome(None, (), failures, (chars, chars), (tokens, tokens))
        new, whole = mark_restorable(part, new, used)
        after_chars, after_tokens = sizes(new)
    except Exception:  # noqa: BLE001 — a malformed part passes through unchanged
        log.warning("part %s passed through: it could not be compressed", part.get("id"), exc_info=True)
        return PartOutcome(None, (), 1, (chars, chars), (tokens, tokens))
    return PartOutcome(new, (*cut, whole), failures, (chars, after_chars), (tokens, after_tokens))


def part_outcome(
    part: Part, ctx: Context, names: tuple[str, ...], before: tuple[int, int], where: tuple[bytes | None, int]
) -> PartOutcome:
    """`outcome_for`, memoized on the part's place (message digest, index) when no compressor
    that applies reads the facts: such an outcome depends only on the part, tier, settings and
    the lines its message copied."""
    if where[0] is None or not names or not FACT_FREE.issuperset(names):
        return outcome_for(part, ctx, names, before)
    return CACHES.parts.get(
        (*where, names, ctx.tier, ctx.settings, ctx.copied), lambda: outcome_for(part, ctx, names, before)
    )


class Batch(msgspec.Struct, frozen=True):
    """The old history as it stood when one batch of steps became old: what its parts may know.

    A part is compressed with the facts and tier of the boundary that first made it old,
    so later jumps never rewrite it: at a jump only the newly old steps change, which keeps
    the provider's cached prefix valid up to the previous boundary (where the cache is read
    only at marks, nothing of it survives a jump, so every jump re-cuts: `rebase_boundary`).
    """

    boundary: int
    fingerprint: int
    tier: Tier
    facts: Facts


def first_boundary(step: int, jumps: tuple[int, ...]) -> int:
    """The boundary at which a message of this step first becomes old: the first jump reaching it."""
    return jumps[bisect_left(jumps, step)]


def batch_ends(shape: Layout, messages: list[Message]) -> dict[int, int]:
    """Each boundary jumped to (0 … the current one) → index of the first message still new then."""
    ends: dict[int, int] = {}
    jumps = iter(shape.jumps)
    boundary = next(jumps)
    for index, message in enumerate(messages[: shape.first_young]):
        while message["info"]["role"] == "assistant" and shape.message_steps[index] > boundary:
            ends[boundary] = index
            boundary = next(jumps)
    ends[shape.boundary] = shape.first_young
    return ends


class MessageSizes(msgspec.Struct, frozen=True, gc=False):
    """A message's size as the model would see it uncompressed."""

    parts: tuple[tuple[int, int], ...]
    """(characters, estimated tokens) of each part."""
    tokens: int
    """Estimated tokens of the whole message, appended nudges left out."""


def measure_message(message: Message) -> MessageSizes:
    """The sizes of one message's parts and their token total."""
    parts = tuple(sizes(part) for part in message["parts"])
    tokens = sum(size[1] for part, size in zip(message["parts"], parts, strict=True) if not is_nudge(part))
    return MessageSizes(parts, tokens)


def message_sizes(message: Message, digest: bytes | None) -> MessageSizes:
    """The sizes of a message, memoized on its digest."""
    return measure_message(message) if digest is None else CACHES.sizes.get(digest, lambda: measure_message(message))


class Frozen(msgspec.Struct, frozen=True):
    """The batches of a history, and the working-set outputs cut after they left the set."""

    batches: dict[int, Batch]
    """Boundary → its Batch, for every boundary up to the current one."""
    releases: dict[int, tuple[tuple[str, int], ...]]
    """Message index → (part id, boundary) for each of its parts that was in the working set
    when it became old, left it later, and is cut at that boundary's jump (`deepmem.releases`)."""


def freeze_batches(
    messages: list[Message], digests: list[bytes | None], shape: Layout, settings: Settings, prices: PriceModel
) -> Frozen:
    """The Batch of every boundary up to the current one, and the releases, from one pass over the old messages."""
    ends = batch_ends(shape, messages)
    hasher = xxhash.xxh3_128(repr(settings).encode())
    stops: dict[int, tuple[int, int]] = {}
    tokens = 0
    start = 0
    for boundary, end in sorted(ends.items()):
        for message, digest in zip(messages[start:end], digests[start:end], strict=True):
            hasher.update(b"?" if digest is None else digest)
            tokens += message_sizes(message, digest).tokens
        start = end
        stops[boundary] = (hasher.intdigest(), tokens)

    def build() -> Frozen:
        builder, done, batches = FactsBuilder(), 0, {}
        ahead, read = FactsBuilder(working_set_builder(settings, prices)), 0
        sizes = MessageTokens(messages, digests, shape.message_steps, settings)
        releases = Releases(sizes.saving, sizes.between, settings.tail_steps, prices)
        for boundary, end in sorted(ends.items()):
            for message in messages[done:end]:
                builder.add(message)
            jumped = jump_end(shape.message_steps, boundary + settings.tail_steps, end)
            for message in messages[read:jumped]:
                ahead.add(message)
            read = jumped
            ahead.working.snapshot()
            facts = builder.snapshot()
            facts = msgspec.structs.replace(facts, whole_views=ahead.working.whole & facts.working_set)
            if boundary == shape.rebased:
                releases.forget()
            releases.release(boundary, done, ahead.working.left, facts.working_set, facts.whole_views)
            first = 0 if boundary == shape.rebased else done
            releases.hold(facts.working_set, facts.whole_views, builder.working.where, first, end)
            done = end
            fingerprint, tokens = stops[boundary]
            batches[boundary] = Batch(boundary, fingerprint, tier_for(tokens, settings), facts)
        return Frozen(batches, releases.frozen())

    seen = jump_end(shape.message_steps, shape.boundary + settings.tail_steps, shape.first_young)
    young = xxhash.xxh3_64_intdigest(b"".join(b"?" if digest is None else digest for digest in digests[shape.first_young : seen]))
    return CACHES.batches.get((stops[shape.boundary][0], young, shape.jumps, shape.rebased, prices), build)


def jump_end(message_steps: tuple[int, ...], step: int, start: int) -> int:
    """Index of the first message after `start` whose step is past `step` (the history's end when none)."""
    return next((index for index in range(start, len(message_steps)) if message_steps[index] > step), len(message_steps))


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


NEW_PARTS = Batch(0, 0, "low", Facts())
"""Stand-in batch for parts that are not old (capture-time trimming reads no facts)."""
PROBES: dict[Tier, Batch] = {tier: Batch(0, 0, tier, Facts()) for tier in ("low", "medium", "high")}
"""Stand-in batches for estimating what a message would keep once old, before any facts."""


class MessageKey(NamedTuple):
    """All one message's outcome depends on (a tuple: compared and hashed for every message of every plan)."""

    digest: bytes | None
    step: int
    batch: int
    tier: Tier
    settings: str
    releases: tuple[tuple[str, int], ...]
    """(part id, fingerprint of the batch it is released at) per working-set view released."""
    copied: frozenset[str]


class MessageOutcome(msgspec.Struct, frozen=True, gc=False):
    """What the transform does to one message: replaced parts, originals, stats, nudge signals."""

    replaced: tuple[tuple[int, Part], ...]
    originals: tuple[Original, ...]
    failures: int
    rows: tuple[tuple[str, KindStats], ...]
    """Per stats kind: its counts in this message."""
    tokens: int
    signals: Signals
    part_tokens: tuple[int, ...]
    """Per part: its estimated tokens once compressed (as it is when left alone)."""


def names_for(message: Message, part: Part, ctx: Context) -> tuple[str, ...]:
    """The compressors for one part: none for user text, nudges and parts already compressed."""
    if is_user_typed(message, part) or is_nudge(part) or "deepmem" in (part.get("metadata") or {}):
        return ()
    return compressors_for(part, ctx) if not ctx.captured else capture_compressors(part)


def compute_message(
    message: Message,
    digest: bytes | None,
    step: int,
    batch: Batch,
    tier: Tier | None,
    settings: Settings,
    released: dict[str, Batch],
    copied: frozenset[str] = frozenset(),
    probing: bool = False,
) -> MessageOutcome:
    """Compress the parts of one message (old: by route; new: capture-time trimming only).

    A part is compressed with the facts of its batch, or of the boundary at whose jump it
    is released from the working set (`released`); `tier` overrides the batches' own
    tiers; `copied` are the lines its inputs copy from earlier outputs that stay. A probe
    (`probing`: its sizes are all the schedule reads) leaves out what the nudges look for.
    """
    contexts: dict[int, Context] = {}

    def context(frozen: Batch) -> Context:
        known = contexts.get(frozen.boundary)
        if known is None:
            known = contexts[frozen.boundary] = Context(
                age=frozen.boundary - step,
                step=step,
                tier=tier or frozen.tier,
                settings=settings,
                facts=frozen.facts,
                captured=frozen is NEW_PARTS,
                copied=copied,
            )
        return known

    replaced, originals, failures, tokens, part_tokens = [], [], 0, 0, []
    rows: dict[str, KindStats] = {}
    part_sizes = message_sizes(message, digest).parts
    for part_index, part in enumerate(message["parts"]):
        ctx = context(released.get(str(part.get("id", "")), batch) if released else batch)
        outcome = part_outcome(part, ctx, names_for(message, part, ctx), part_sizes[part_index], (digest, part_index))
        kind = stats_kind(message, part)
        counts = KindStats(1, int(outcome.part is not None), *outcome.chars, *outcome.tokens)
        rows[kind] = rows[kind].plus(counts) if kind in rows else counts
        failures += outcome.failures
        tokens += 0 if is_nudge(part) else outcome.tokens[0]
        part_tokens.append(outcome.tokens[1])
        if outcome.part is not None:
            replaced.append((part_index, outcome.part))
            originals.extend(outcome.originals)
    signals = Signals() if probing else message_signals(message, dict(replaced))
    return MessageOutcome(tuple(replaced), tuple(originals), failures, tuple(rows.items()), tokens, signals, tuple(part_tokens))


def message_outcome(
    message: Message,
    digest: bytes | None,
    key: MessageKey,
    batch: Batch,
    tier: Tier | None,
    settings: Settings,
    released: dict[str, Batch],
) -> MessageOutcome:
    """The outcome of one message, memoized on its key (digest, step, batch fingerprint, tier,
    settings, releases, copied lines)."""
    step, copied = key.step, key.copied
    if digest is None:
        return compute_message(message, digest, step, batch, tier, settings, released, copied)
    return CACHES.messages.get(
        key, lambda: compute_message(message, digest, step, batch, tier, settings, released, copied)
    )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Suspend the cyclic garbage collector for a while (restored as it was).

    A plan allocates many short-lived, acyclic objects next to a large live history; each
    collection they trigger would walk that whole history (a fifth of a cold 1M-token plan).
    Reference counting still frees everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Accumulated(msgspec.Struct, gc=False):
    """Per-message results of the latest plan of one history, kept so that the plan one step
    later recomputes only the messages after the prefix the two histories share."""

    keys: list[MessageKey] = []
    edit_ends: list[int] = []
    original_ends: list[int] = []
    failures: list[int] = []
    """Per message: running counts of edits, originals and failures up to it."""
    totals: list[dict[str, KindStats]] = []
    """Per message: each stats kind's counts summed up to it."""
    edits: list[PartEdit] = []
    originals: list[Original] = []
    message_tokens: list[int] = []
    signals: list[Signals] = []

    def prefix(self, count: int) -> Accumulated:
        """A copy holding the first `count` messages' results."""
        if count == 0:
            return Accumulated()
        return Accumulated(
            self.keys[:count],
            self.edit_ends[:count],
            self.original_ends[:count],
            self.failures[:count],
            self.totals[:count],
            self.edits[: self.edit_ends[count - 1]],
            self.originals[: self.original_ends[count - 1]],
            self.message_tokens[:count],
            self.signals[:count],
        )

    def add(self, index: int, message: Message, key: MessageKey, outcome: MessageOutcome) -> None:
        """Append one message's outcome."""
        if outcome.replaced:
            message_id = str(message["info"].get("id", ""))
            parts = message["parts"]
            self.edits.extend(
                PartEdit(index, part_index, message_id, str(parts[part_index].get("id", "")), part)
                for part_index, part in outcome.replaced
            )
            self.originals.extend(outcome.originals)
        totals = dict(self.totals[-1]) if self.totals else {}
        for kind, counts in outcome.rows:
            totals[kind] = totals[kind].plus(counts) if kind in totals else counts
        self.keys.append(key)
        self.edit_ends.append(len(self.edits))
        self.original_ends.append(len(self.originals))
        self.failures.append((self.failures[-1] if self.failures else 0) + outcome.failures)
        self.totals.append(totals)
        self.message_tokens.append(outcome.tokens)
        self.signals.append(outcome.signals)


def shared_prefix(old: list[MessageKey], new: list[MessageKey]) -> int:
    """How many leading message keys two plans share (a message without a digest ends it)."""
    count = 0
    for before, now in zip(old, new, strict=False):
        if before != now or now.digest is None:
            break
        count += 1
    return count


def plan_transform(
    messages: list[Message],
    settings: Settings,
    tier: Tier | None = None,
    digests: list[bytes | None] | None = None,
    prices: PriceModel | None = None,
    jumps: tuple[int, ...] | None = None,
) -> TransformPlan:
    """Decide every edit for a history seen at its last step.

    `digests` (one per message: bytes that change whenever the message does) spare the
    hashing of a history the caller already holds digests for, as the bridge does.
    `prices` price the jumps (the family the messages name when None); `jumps` imposes a
    schedule instead (the benchmarks' hindsight optimum).
    """
    with collector_paused():
        if digests is None:
            digests = [message_digest(message) for message in messages]
        steps = message_steps(messages)
        prices = prices or resolve_prices(messages)
        cold = cold_steps(messages, steps, steps[-1] if steps else 0, prices)
        if jumps is None:
            jumps = schedule(messages, digests, steps, settings, prices, cold)
        rebased = rebase_boundary(jumps, cold, settings, prices)
        return plan_history(messages, settings, tier, digests, layout(messages, jumps, steps, rebased), prices)


def rebase_boundary(jumps: tuple[int, ...], cold: tuple[bool, ...], settings: Settings, prices: PriceModel) -> int:
    """The last boundary jumped to at a request that writes every message again anyway (0 when none).

    Such a request is written whole whatever it holds, so its jump cuts deep at no cache
    cost: every old part is compressed again with the newest facts and tier (stale reads,
    repeated calls, outputs that left the working set), not only the newly old steps. It
    is the request after a pause past the cache's lifetime or a model switch, and, where
    the cache is read only at marks, every jump's (`PriceModel.cached_at_marks`).
    """
    if prices.jumps_write_everything:
        return jumps[-1]
    made = [boundary + settings.tail_steps for boundary in jumps if boundary > 0]
    return max((step - settings.tail_steps for step in made if step < len(cold) and cold[step]), default=0)


def schedule(
    messages: list[Message],
    digests: list[bytes | None],
    steps: tuple[int, ...],
    settings: Settings,
    prices: PriceModel,
    cold: tuple[bool, ...],
) -> tuple[int, ...]:
    """The boundaries this history has jumped to, by the schedule the settings name."""
    count = steps[-1] if steps else 0
    if settings.schedule == "fixed":
        return fixed_jumps(count, settings)
    return priced_jumps(step_sizes(messages, digests, steps, settings, prices, cold), settings, prices)


def step_sizes(
    messages: list[Message],
    digests: list[bytes | None],
    steps: tuple[int, ...],
    settings: Settings,
    prices: PriceModel,
    cold: tuple[bool, ...] | None = None,
) -> Sizes:
    """What the schedule weighs: running token totals per step, uncompressed and probed, and
    cold steps (`cold`, when the caller has them already)."""
    count = steps[-1] if steps else 0
    sizes = MessageTokens(messages, digests, steps, settings)
    probed = [sizes.probe(index) for index in range(len(messages))]
    if cold is None:
        cold = cold_steps(messages, steps, count, prices)
    cap = view_cap_tokens(settings)
    folded = whole_views(messages, digests, steps, settings, prices)
    whole = folded.per_step(count, lambda index, part_id: sizes.whole_extra(index, part_id, cap))
    old = running_totals(steps, probed, count)
    return Sizes(sizes.totals, tuple(cut + kept for cut, kept in zip(old, whole, strict=True)), cold)


def working_set_builder(settings: Settings, prices: PriceModel) -> WorkingSetBuilder:
    """The working set as these settings and prices size it."""
    return WorkingSetBuilder(hot=prices.rent_steps, fresh=settings.tail_steps, whole=whole_view_tokens(settings))


def whole_views(
    messages: list[Message], digests: list[bytes | None], steps: tuple[int, ...], settings: Settings, prices: PriceModel
) -> WholeViews:
    """The views kept whole at each step of this history, extending the fold of its latest plan."""
    key = (digests[0] if digests else None, settings, prices)
    folded = CACHES.whole.peek(key) if key[0] is not None else None
    if folded is None or not folded.matches(digests):
        folded = WholeViews(working_set_builder(settings, prices), settings.tail_steps)
    for index in range(len(folded.digests), len(messages)):
        folded.fold(messages[index], digests[index], steps[index])
    if key[0] is not None:
        CACHES.whole.put(key, folded)
    return folded


def probe_tokens(
    message: Message, digest: bytes | None, step: int, tier: Tier, settings: Settings, settings_key: str
) -> tuple[int, ...]:
    """Estimated tokens of each part of a message once old: its compressors at `tier` with no facts (memoized).

    Taking every file read for one the agent still works on (as the working set often does)
    was measured too: it made the schedule so late that it cost more than the fixed one.
    """

    def probe() -> tuple[int, ...]:
        return compute_message(message, digest, step, PROBES[tier], None, settings, {}, probing=True).part_tokens

    return probe() if digest is None else CACHES.probes.get((digest, tier, settings_key), probe)


def kept_copies(copied: CopiedLines, batches: list[Batch], first_young: int) -> list[frozenset[str]]:
    """Per message: the lines it copied that no later message of its batch copies again, so the
    batch shows each once (a new message: every line it copied, for its capture-time trim)."""
    kept: list[frozenset[str]] = []
    start = 0
    while start < first_young:
        end = start + 1
        while end < first_young and batches[end] is batches[start]:
            end += 1
        kept.extend(copied.kept(start, end))
        start = end
    return kept + list(copied.copied[first_young : len(batches)])


def plan_history(
    messages: list[Message],
    settings: Settings,
    tier: Tier | None,
    digests: list[bytes | None],
    shape: Layout,
    prices: PriceModel,
) -> TransformPlan:
    """The plan itself (see `plan_transform`)."""
    # Tier and facts come from the history up to the boundary that first made a part old,
    # so old content only changes when the boundary jumps, and then only the newly old
    # steps (prompt-cache stability).
    frozen = freeze_batches(messages, digests, shape, settings, prices)
    batches = frozen.batches
    first = digests[0] if digests else None
    copied = copied_lines(messages, digests, CACHES.copied.peek(first) if first is not None else None)
    if first is not None:
        CACHES.copied.put(first, copied)
    settings_key = repr(settings)  # hashed once per plan, not once per message
    message_batches = [
        batches[max(first_boundary(step, shape.jumps), shape.rebased)] if index < shape.first_young else NEW_PARTS
        for index, step in enumerate(shape.message_steps)
    ]
    kept = kept_copies(copied, message_batches, shape.first_young)
    # A working-set view released at a jump is compressed with the facts of that boundary:
    # the jump rewrites it with the newly old steps.
    released: dict[int, dict[str, Batch]] = {}
    for index, pairs in frozen.releases.items():
        for part_id, boundary in pairs:
            if index < shape.first_young and boundary > message_batches[index].boundary:
                released.setdefault(index, {})[part_id] = batches[boundary]
    keys = [
        MessageKey(
            digest,
            step,
            batch.fingerprint,
            tier or batch.tier,
            settings_key,
            tuple((part_id, batch.fingerprint) for part_id, batch in released[index].items()) if index in released else (),
            kept[index],
        )
        for index, (digest, step, batch) in enumerate(zip(digests, shape.message_steps, message_batches, strict=True))
    ]
    history = (settings_key, tier, digests[0] if digests else None)
    previous = CACHES.histories.peek(history)
    kept = shared_prefix(previous.keys, keys) if previous is not None else 0
    done = previous.prefix(kept) if previous is not None else Accumulated()
    for index in range(kept, len(messages)):
        outcome = message_outcome(
            messages[index], digests[index], keys[index], message_batches[index], tier, settings, released.get(index, {})
        )
        done.add(index, messages[index], keys[index], outcome)
    CACHES.histories.put(history, done)
    stats = dict(done.totals[-1]) if done.totals else {}
    saved = sum(kind.tokens_before - kind.tokens_after for kind in stats.values())
    return TransformPlan(
        shape,
        tier or batches[shape.boundary].tier,
        list(done.edits),
        list(done.originals),
        stats,
        failures=done.failures[-1] if done.failures else 0,
        tail_parts=nudge_parts(messages, shape, done.message_tokens, done.signals, settings, prices.rent(saved)),
        message_tokens=list(done.message_tokens),
        signals=list(done.signals),
    )


def apply_edits(messages: list[Message], edits: list[PartEdit]) -> list[Message]:
    """New messages with each edited part replaced (inputs are not mutated)."""
    by_message: dict[int, dict[int, Part]] = {}
    for edit in edits:
        by_message.setdefault(edit.message_index, {})[edit.part_index] = edit.part
    result = list(messages)
    for index, replaced in by_message.items():
        message = messages[index]
        parts = [replaced.get(i, part) for i, part in enumerate(message["parts"])]
        result[index] = {**message, "parts": parts}
    return result


TRAILING_PREFIX = "msg_deepmem_"
TRAILING_INFO = ("time", "agent", "model")
"""What a trailing message takes from the info of the message it follows."""
"""Id prefix of the synthetic user message that carries the tail parts."""


def trailing_message(last: Message, tail_parts: list[Part]) -> Message:
    """A synthetic user message after `last` holding the tail parts.

    OpenCode sends an assistant message's text before its tool results: a nudge appended
    to the last message would sit before them, and when it moves on at the next step the
    provider's cached prefix would break there. After the last message it breaks nowhere.
    """
    info = last["info"]
    message_id = f"{TRAILING_PREFIX}{tail_parts[0].get('id')}"
    user = {"id": message_id, "sessionID": info.get("sessionID", ""), "role": "user"}
    user.update({key: info[key] for key in TRAILING_INFO if key in info})
    return {"info": user, "parts": [{**part, "messageID": message_id} for part in tail_parts]}


def append_tail_parts(messages: list[Message], tail_parts: list[Part]) -> list[Message]:
    """New messages ending with the tail parts in a trailing synthetic message (once: a history
    that already ends with it is returned as it is)."""
    if not messages or not tail_parts:
        return messages
    if str(messages[-1]["info"].get("id", "")).startswith(TRAILING_PREFIX):
        return messages
    return [*messages, trailing_message(messages[-1], tail_parts)]


def apply_transform(messages: list[Message], plan: TransformPlan) -> list[Message]:
    """The messages as the model should see them after this plan: edits, then tail parts."""
    return append_tail_parts(apply_edits(messages, plan.edits), plan.tail_parts)
