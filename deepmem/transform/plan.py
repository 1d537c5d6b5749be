"""The plan of one transform and its application: old parts frozen in batches, edits out.

Pure except for the optional CCR store: the same messages and settings always give the
same bytes. `plan_transform` lays the history out once (`deepmem.transform.schedule`), freezes what
the parts of each batch may know (the history as it stood when they became old), takes
each message's outcome (`deepmem.transform.outcomes`) and gathers the edits, originals, stats and
nudges. The batches are cached by a fingerprint of the old history, and the per-message
results of each history's latest plan are kept, so the next step recomputes only the
messages after the prefix the two share. A new step on a long history then costs one digest
per message (none when the caller already holds them), a comparison of message keys, and
the work of its new messages. `apply_transform` puts the edits and the trailing nudges in
place.

The module reads in the order a request is handled: `plan_transform`, the one entry, lays
the history out once (the schedule hands back its layout, prices and message sizes, so
nothing here calls back into it), then `plan_history` freezes the batches, assigns each
message its batch, takes the outcomes and the nudges; the helpers follow in the order it
calls them, and the application comes last.
"""

from __future__ import annotations

import gc
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from contextlib import contextmanager

import msgspec
import xxhash

from deepmem.bill.prices import PriceModel
from deepmem.history import Layout, tier_for
from deepmem.transform.cache_mark import MARK_NAME, opening_parts, with_mark
from deepmem.transform.copied import CopiedLines, copied_lines
from deepmem.transform.facts import FactsBuilder, WorkingFold
from deepmem.transform.jumps import NO_FRAME, Bills, RequestFrame
from deepmem.transform.nudges import Signals, nudge_parts
from deepmem.transform.outcomes import (
    CACHES,
    NEW_PARTS,
    Batch,
    KindStats,
    MessageKey,
    MessageOutcome,
    mark_restorable,
    message_digest,
    message_outcome,
    message_sizes,
    tally,
)
from deepmem.transform.releases import Releases
from deepmem.transform.schedule import MessageTokens, Schedule, schedule_layout
from deepmem.transform.working_set import sized_builder
from deepmem.types import Message, Original, Part, Settings, Tier


class PartEdit(msgspec.Struct, frozen=True, gc=False):
    """Replace one part: addressed by position (files) and by ids (the bridge)."""

    message_index: int
    part_index: int
    message_id: str
    part_id: str
    part: Part


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
    mark: tuple[int, int] | None = None
    """(message index, part index) of the part that carries deepmem's cache mark, if any."""
    bills: Bills | None = None
    """The session's running bills at this step, with deepmem and without (`deepmem.transform.jumps.Bills`)."""


def plan_transform(
    messages: list[Message],
    settings: Settings,
    tier: Tier | None = None,
    digests: list[bytes | None] | None = None,
    prices: PriceModel | None = None,
    jumps: tuple[int, ...] | None = None,
    frame: RequestFrame = NO_FRAME,
) -> TransformPlan:
    """Decide every edit for a history seen at its last step.

    `digests` (one per message: bytes that change whenever the message does) spare the
    hashing of a history the caller already holds digests for, as the bridge does.
    `prices` price the jumps (the family the messages name when None); `jumps` imposes a
    schedule instead (the benchmarks' hindsight optimum); `frame` is what every request of the
    session carries before its messages, for its running bills.
    """
    with collector_paused():
        if digests is None:
            digests = [message_digest(message) for message in messages]
        schedule = schedule_layout(messages, digests, settings, prices, jumps, frame)
        plan = plan_history(messages, settings, tier, digests, schedule)
        plan = msgspec.structs.replace(plan, bills=schedule.bills)
        return with_cache_mark(plan, messages, schedule.mark) if schedule.mark else plan


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


def plan_history(
    messages: list[Message],
    settings: Settings,
    tier: Tier | None,
    digests: list[bytes | None],
    schedule: Schedule,
) -> TransformPlan:
    """The plan itself (see `plan_transform`), on the layout, prices and sizes the schedule laid out."""
    shape, prices = schedule.layout, schedule.prices
    # Tier and facts come from the history up to the boundary that first made a part old,
    # so old content only changes when the boundary jumps, and then only the newly old
    # steps (prompt-cache stability).
    frozen = freeze_batches(messages, digests, shape, settings, prices, schedule.sizes)
    batches = frozen.batches
    first = digests[0] if digests else None
    copied = copied_lines(messages, digests, CACHES.copied.peek(first) if first is not None else None)
    if first is not None:
        CACHES.copied.put(first, copied)
    settings_key = repr(settings)  # hashed once per plan, not once per message
    first_batches = [
        batches[first_boundary(step, shape.jumps)] if index < shape.first_young else NEW_PARTS
        for index, step in enumerate(shape.message_steps)
    ]
    message_batches = [
        batches[max(batch.boundary, shape.rebase_of(step))] if index < shape.first_young else NEW_PARTS
        for index, (batch, step) in enumerate(zip(first_batches, shape.message_steps, strict=True))
    ]
    # A rebase moves the messages after its read point into a new batch; one before it keeps the
    # copied lines of the batch its jump first made, or it would change under deepmem's mark.
    kept = [
        now if batch is not first else before
        for now, before, batch, first in zip(
            kept_copies(copied, message_batches, shape.first_young),
            kept_copies(copied, first_batches, shape.first_young),
            message_batches,
            first_batches,
            strict=True,
        )
    ]
    # A working-set view released at a jump is compressed with the facts of that boundary:
    # the jump rewrites it with the newly old steps.
    released: dict[int, dict[str, Batch]] = {}
    for index, pairs in frozen.releases.items():
        for part_id, boundary in pairs:
            if index < shape.first_young and boundary > message_batches[index].boundary:
                released.setdefault(index, {})[part_id] = batches[boundary]
    # The opening keeps the form it was first sent in, so every jump reads it from the cache.
    opening, kept_whole = opening_parts(messages)
    if opening < shape.first_young and kept_whole:
        released.setdefault(opening, {}).update(dict.fromkeys(sorted(kept_whole), NEW_PARTS))
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


class Frozen(msgspec.Struct, frozen=True):
    """The batches of a history, and the working-set outputs cut after they left the set."""

    batches: dict[int, Batch]
    """Boundary → its Batch, for every boundary up to the current one."""
    releases: dict[int, tuple[tuple[str, int], ...]]
    """Message index → (part id, boundary) for each of its parts that was in the working set
    when it became old, left it later, and is cut at that boundary's jump (`deepmem.transform.releases`)."""


def freeze_batches(
    messages: list[Message], digests: list[bytes | None], shape: Layout, settings: Settings, prices: PriceModel,
    sizes: MessageTokens,
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

    rebased_from = {boundary: first_after(shape.message_steps, read) for read, boundary in shape.rebases}

    def build() -> Frozen:
        builder, done, batches = FactsBuilder(), 0, {}
        ahead, read = WorkingFold(sized_builder(settings, prices)), 0
        releases = Releases(sizes.saving, sizes.between, settings.tail_steps, prices)
        for boundary, end in sorted(ends.items()):
            for message in messages[done:end]:
                builder.add(message)
            jumped = jump_end(shape.message_steps, boundary + settings.tail_steps, end)
            for message in messages[read:jumped]:
                ahead.add(message)
            read = jumped
            ahead.working.settle()
            facts = builder.snapshot()
            # The views kept whole are those of the boundary's own working set, and the pages read within the young
            # steps' span before it that `keep_whole` counts whole: a later read pushed such a page past its file's
            # budget, out of the set, but the agent paging through a file quotes every page in the edits that follow.
            # Keeping every page `keep_whole` counts (`facts.working_set | ahead.working.whole`) was measured and
            # left out: quoted lines in view +0.2 to +1.4 points, pooled cost +2% to +5% (claude-entire 0.670 -> 0.703).
            young = ahead.working.whole_read_since(done, end, shape.message_steps, boundary - settings.tail_steps)
            working_set = (facts.working_set | young) - ahead.working.idle
            facts = msgspec.structs.replace(facts, working_set=working_set, whole_views=ahead.working.whole & working_set)
            first = rebased_from.get(boundary, done)
            if boundary in rebased_from:
                releases.forget(first)
            else:
                releases.release(boundary, done, ahead.working.left, facts.working_set, facts.whole_views)
            releases.hold(facts.working_set, facts.whole_views, builder.working.where, first, end)
            done = end
            fingerprint, tokens = stops[boundary]
            batches[boundary] = Batch(boundary, fingerprint, tier_for(tokens, settings), facts)
        return Frozen(batches, releases.frozen())

    seen = jump_end(shape.message_steps, shape.boundary + settings.tail_steps, shape.first_young)
    young = xxhash.xxh3_64_intdigest(b"".join(b"?" if digest is None else digest for digest in digests[shape.first_young : seen]))
    return CACHES.batches.get((stops[shape.boundary][0], young, shape.jumps, shape.rebases, prices), build)


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


def first_after(message_steps: tuple[int, ...], step: int) -> int:
    """Index of the first message whose step is past `step` (0 for step 0: every message)."""
    return bisect_right(message_steps, step) if step else 0


def jump_end(message_steps: tuple[int, ...], step: int, start: int) -> int:
    """Index of the first message after `start` whose step is past `step` (the history's end when none)."""
    return next((index for index in range(start, len(message_steps)) if message_steps[index] > step), len(message_steps))


def first_boundary(step: int, jumps: tuple[int, ...]) -> int:
    """The boundary at which a message of this step first becomes old: the first jump reaching it."""
    return jumps[bisect_left(jumps, step)]


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
            tally(totals, kind, counts)
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


def with_cache_mark(plan: TransformPlan, messages: list[Message], mark: tuple[int, int]) -> TransformPlan:
    """The plan with deepmem's cache mark on the part at `mark` (message index, part index): on its
    edit when it has one, else on an edit of its own whose original goes to CCR like any other."""
    message_index, part_index = mark
    edits, originals = list(plan.edits), plan.originals
    at = bisect_left(edits, mark, key=lambda edit: (edit.message_index, edit.part_index))
    if at < len(edits) and (edits[at].message_index, edits[at].part_index) == mark:
        edits[at] = msgspec.structs.replace(edits[at], part=with_mark(edits[at].part))
    else:
        message = messages[message_index]
        original = message["parts"][part_index]
        part, kept = mark_restorable(original, with_mark(original), [MARK_NAME])
        edit = PartEdit(message_index, part_index, str(message["info"].get("id", "")), str(original.get("id", "")), part)
        edits.insert(at, edit)
        originals = [*originals, kept]
    return msgspec.structs.replace(plan, edits=edits, originals=originals, mark=mark)


def apply_transform(messages: list[Message], plan: TransformPlan) -> list[Message]:
    """The messages as the model should see them after this plan: edits, then tail parts."""
    return append_tail_parts(apply_edits(messages, plan.edits), plan.tail_parts)


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
"""Id prefix of the synthetic user message that carries the tail parts."""
TRAILING_INFO = ("time", "agent", "model")
"""What a trailing message takes from the info of the message it follows."""


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
