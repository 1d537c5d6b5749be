"""What a part or a message becomes: its compressors run, its originals kept, its sizes counted.

Pure: the same part, context and settings always give the same bytes. A compressor that
raises is counted and its part passes through unchanged.

The transform runs before every step, so its work is memoized: the outcome of each message
is kept in a bounded cache keyed by the message's digest, its step, the fingerprint of the
batch that froze its facts, the tier and the settings (`MessageKey`); the outcome of a part
whose compressors read no facts is shared by every batch and by the schedule's probes. All
the transform's memos, those of the schedule (`deepmem.transform.schedule`) and of the plan
(`deepmem.transform.plan`) too, belong to `CACHES`; `CACHES.clear()` makes the next plan cold.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

import msgspec
import orjson
import xxhash

from deepmem.compressors import FACT_FREE, REGISTRY, capture_compressors, compressors_for
from deepmem.history import is_user_typed, visible_text
from deepmem.lru import LRU
from deepmem.part_marks import CompressedMark, mark_metadata
from deepmem.tokens import estimate_tokens
from deepmem.transform.nudges import Signals, is_nudge, message_signals
from deepmem.types import Context, Facts, Message, Original, Part, Settings, Tier, cache_key

log = logging.getLogger("deepmem.outcomes")

PART_KEY = "part"
"""Compressor name under which whole original parts are stored, for session restore."""


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


def tally(rows: dict[str, KindStats], kind: str, counts: KindStats) -> None:
    """Add one kind's counts to a table of counts by kind."""
    rows[kind] = rows[kind].plus(counts) if kind in rows else counts


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


class PartOutcome(msgspec.Struct, frozen=True, gc=False):
    """What the transform does to one part: its replacement (or None), originals, sizes."""

    part: Part | None
    originals: tuple[Original, ...]
    failures: int
    chars: tuple[int, int]
    tokens: tuple[int, int]


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


NEW_PARTS = Batch(0, 0, "low", Facts())
"""Stand-in batch for parts that are not old (capture-time trimming reads no facts)."""


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


def names_for(message: Message, part: Part, ctx: Context) -> tuple[str, ...]:
    """The compressors for one part: none for user text, nudges and parts already compressed."""
    if is_user_typed(message, part) or is_nudge(part) or "deepmem" in (part.get("metadata") or {}):
        return ()
    return compressors_for(part, ctx) if not ctx.captured else capture_compressors(part)


def part_outcomes(
    message: Message,
    digest: bytes | None,
    step: int,
    batch: Batch,
    tier: Tier | None,
    settings: Settings,
    released: dict[str, Batch],
    copied: frozenset[str] = frozenset(),
) -> list[PartOutcome]:
    """The outcome of each part of one message (old: by route; new: capture-time trimming only).

    A part is compressed with the facts of its batch, or of the boundary at whose jump it
    is released from the working set (`released`); `tier` overrides the batches' own
    tiers; `copied` are the lines its inputs copy from earlier outputs that stay.
    """
    contexts: dict[tuple[int, bool], Context] = {}

    def context(frozen: Batch) -> Context:
        key = (frozen.boundary, frozen is NEW_PARTS)
        known = contexts.get(key)
        if known is None:
            known = contexts[key] = Context(
                age=frozen.boundary - step,
                step=step,
                tier=tier or frozen.tier,
                settings=settings,
                facts=frozen.facts,
                captured=frozen is NEW_PARTS,
                copied=copied,
            )
        return known

    part_sizes = message_sizes(message, digest).parts
    outcomes = []
    for part_index, part in enumerate(message["parts"]):
        ctx = context(released.get(str(part.get("id", "")), batch) if released else batch)
        outcomes.append(part_outcome(part, ctx, names_for(message, part, ctx), part_sizes[part_index], (digest, part_index)))
    return outcomes


def gathered(message: Message, outcomes: list[PartOutcome]) -> MessageOutcome:
    """What the transform does to one message: its parts' outcomes gathered, counted by kind,
    and read for what the nudges look for."""
    replaced, originals, failures, tokens = [], [], 0, 0
    rows: dict[str, KindStats] = {}
    for part_index, (part, outcome) in enumerate(zip(message["parts"], outcomes, strict=True)):
        counts = KindStats(1, int(outcome.part is not None), *outcome.chars, *outcome.tokens)
        tally(rows, stats_kind(message, part), counts)
        failures += outcome.failures
        tokens += 0 if is_nudge(part) else outcome.tokens[0]
        if outcome.part is not None:
            replaced.append((part_index, outcome.part))
            originals.extend(outcome.originals)
    signals = message_signals(message, dict(replaced))
    return MessageOutcome(tuple(replaced), tuple(originals), failures, tuple(rows.items()), tokens, signals)


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

    def compute() -> MessageOutcome:
        return gathered(message, part_outcomes(message, digest, key.step, batch, tier, settings, released, key.copied))

    return compute() if digest is None else CACHES.messages.get(key, compute)
