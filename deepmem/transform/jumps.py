"""When the boundary jumps: a priced decision, replayed from the messages alone.

A jump cuts the steps that became old since the last one. Everything after its first
cut part is new to the provider, so the jump's own request pays the cache-write price
for what a warm cache would have read for a tenth; every later request is smaller by
what the jump removed, at the cache-read price. A provider that reads a cached prefix
only up to a marked place (`PriceModel.cached_at_marks`: Anthropic, where OpenCode marks
the system prompt and the last two messages) finds no mark of OpenCode's before the change,
so there the jump writes every message again from deepmem's own mark on (the last text of
the answering model before the boundary, `deepmem.transform.cache_mark`; from the start without
one), the old steps after that mark too. The schedule jumps when

    Σ over the steps since the last jump of (what a jump would remove × read)  ≥  the jump request's extra cost

(prices relative to the write price): by then, not cutting has cost as much as cutting
would, so a jump's outlay is never more than what waiting already lost. It also jumps
when the whole request would otherwise reach the point where the host compacts the session
(`deepmem.transform.window`: the model's limits, as OpenCode reads them, over the provider's tokenizer
ratio) and the jump frees a good share of that point, and whenever the cache is
cold anyway: after a pause longer than its lifetime, or when the model changes, the
whole request is written again whatever we do, so a deep cut costs nothing extra.

Sizes are estimated tokens: the uncompressed history per step, and per message what
its compressors would leave of it (`probed`; a file view the jump keeps whole counts
whole, in place of its cut). Every decision reads only the history up to its own step,
so replaying the schedule at any later step, in the bridge or on an exported session,
finds the same jumps: the same messages, prices and settings give the same bytes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import msgspec

from deepmem.bill.prices import PriceModel
from deepmem.transform.window import RELIEF, ModelLimits, pressure_tokens
from deepmem.types import Message, Settings

log = logging.getLogger("deepmem.jumps")

class RequestFrame(msgspec.Struct, frozen=True):
    """Tokens every request of a session carries before its messages: the host's (its system
    prompt and tools, on both bills) and deepmem's additions (its tool schemas and stable block,
    fixed at the session's start, on its bill only); and the most a whole request may carry."""

    host: int = 0
    added: int = 0
    ceiling: int = 0
    """Estimated tokens of a whole request (frame and messages) past which it must jump, from the
    model's limits (`deepmem.transform.window.pressure_tokens`); 0: from the settings' window alone."""


NO_FRAME = RequestFrame()
"""No frame: bills of the messages alone."""


class Sizes(msgspec.Struct, frozen=True):
    """Per step k = 0…S: running totals of the history up to step k, and the cache's state."""

    tokens: tuple[int, ...]
    """Estimated tokens of the uncompressed messages of steps ≤ k."""
    probed: tuple[int, ...]
    """The same messages as their compressors would leave them, the views a jump to k keeps
    whole counted whole."""
    cold: tuple[bool, ...]
    """The request of step k finds no cached prefix (a pause past the lifetime, a new model)."""
    marked: tuple[int, ...] = ()
    """Per boundary k: the probed tokens before the cache mark a request places while k is the
    boundary (`deepmem.transform.cache_mark`), which a jump from k reads from the cache where the cache
    is read only at marks; none when empty (no mark)."""
    tail_steps: int = 0
    """A jump to k is made at step k + tail_steps (see `marked_read`)."""
    frame: RequestFrame = NO_FRAME
    """What every request carries before its messages, for the running bills (`Bills`)."""


class Bills(msgspec.Struct):
    """A session's running bills so far, whole requests in write-price units (`running_bills`):
    with deepmem, and the same requests sent as recorded, without deepmem's additions."""

    deepmem: float = 0.0
    none: float = 0.0

    def dollars(self, prices: PriceModel) -> tuple[float, float]:
        """Both bills in dollars at these prices (with deepmem, without)."""
        return prices.write_units_dollars(self.deepmem), prices.write_units_dollars(self.none)


def running_totals(message_steps: Sequence[int], values: Sequence[int], steps: int) -> tuple[int, ...]:
    """Per step k = 0…steps: the sum of the values of messages whose step is ≤ k."""
    per_step = [0] * (steps + 1)
    for step, value in zip(message_steps, values, strict=True):
        per_step[step] += value
    total, totals = 0, []
    for value in per_step:
        total += value
        totals.append(total)
    return tuple(totals)


def message_time(message: Message) -> int:
    """The newest timestamp (ms) a message carries: created, completed, its tools' ends; 0 when none."""
    times = [0]
    stamps = message["info"].get("time")
    if isinstance(stamps, dict):
        times.extend(value for value in stamps.values() if isinstance(value, int) and not isinstance(value, bool))
    for part in message["parts"]:
        state = part.get("state") if part.get("type") == "tool" else None
        end = (state.get("time") or {}).get("end") if isinstance(state, dict) else None
        if isinstance(end, int) and not isinstance(end, bool):
            times.append(end)
    return max(times)


def request_model(message: Message) -> tuple[str, str] | None:
    """The (provider, model) a user message asks for, or None when it names none."""
    model = message["info"].get("model") if message["info"].get("role") == "user" else None
    if not isinstance(model, dict):
        return None
    return str(model.get("providerID", "")), str(model.get("modelID", ""))


def request_times(messages: list[Message], message_steps: Sequence[int], steps: int) -> tuple[int, ...]:
    """Per step k = 0…steps: when request k went out (ms), taken as the newest timestamp of its
    history; a clock running backwards keeps the time it had reached, no timestamp gives 0."""
    newest = [0] * (steps + 1)
    for message, step in zip(messages, message_steps, strict=True):
        newest[step] = max(newest[step], message_time(message))
    times, latest = [], 0
    for moment in newest:
        latest = max(latest, moment)
        times.append(latest)
    return tuple(times)


def request_pauses(times: Sequence[int]) -> tuple[int, ...]:
    """Per step: milliseconds since the previous request (0 for the first, or when a time is unknown)."""
    return tuple(
        now - before if step and before and now else 0
        for step, (before, now) in enumerate(zip((0, *times[:-1]), times, strict=True))
    )


def cold_steps(messages: list[Message], message_steps: Sequence[int], steps: int, prices: PriceModel) -> tuple[bool, ...]:
    """Per step k = 0…steps: whether request k finds the cache cold.

    The cache is cold for the first request (step 0), after a pause longer than its lifetime, and
    when the model asked for differs from the previous request's. Missing timestamps and
    clocks running backwards count as no pause (the cautious side: no free cut assumed).
    """
    models: list[tuple[str, str] | None] = [None] * (steps + 1)
    for message, step in zip(messages, message_steps, strict=True):
        models[step] = request_model(message) or models[step]
    pauses = request_pauses(request_times(messages, message_steps, steps))
    cold, model = [True] * (steps + 1), models[0]
    for step in range(1, steps + 1):
        now = models[step] or model
        cold[step] = prices.expired(pauses[step]) or (model is not None and now != model)
        model = now
    return tuple(cold)


def fixed_jumps(steps: int, settings: Settings) -> tuple[int, ...]:
    """The old schedule: boundaries 0, batch, 2·batch … up to floor((steps − tail) / batch) × batch."""
    last = max(steps - settings.tail_steps, 0) // settings.batch_steps * settings.batch_steps
    return tuple(range(0, last + 1, settings.batch_steps))


def request_tokens(sizes: Sizes, step: int, boundary: int) -> int:
    """Estimated tokens of request `step` when `boundary` is the boundary."""
    return sizes.probed[boundary] + sizes.tokens[step] - sizes.tokens[boundary]


def whole_request_tokens(sizes: Sizes, step: int, boundary: int) -> int:
    """Estimated tokens of request `step`, its frame included, when `boundary` is the boundary."""
    return sizes.frame.host + sizes.frame.added + request_tokens(sizes, step, boundary)


def pressure_ceiling(sizes: Sizes, settings: Settings) -> int:
    """The estimated tokens a whole request may carry before it must jump: the frame's ceiling (the
    model's limits), else that of a model known only by its window (`context_window`: no input or
    output limit, a tokenizer never measured); 0 when neither is known (the host never compacts)."""
    return sizes.frame.ceiling or pressure_tokens(ModelLimits(settings.context_window), "")


def window_presses(sizes: Sizes, step: int, boundary: int, target: int, settings: Settings) -> bool:
    """Whether request `step` must jump from `boundary` to `target` for the window: it would pass the
    pressure point, and the jump removes at least `RELIEF` of it. A jump that frees less would be
    forced again a step or two later, each time writing the whole history again."""
    ceiling = pressure_ceiling(sizes, settings)
    if not ceiling or whole_request_tokens(sizes, step, boundary) <= ceiling:
        return False
    return removed_tokens(sizes, boundary, target) >= ceiling * RELIEF


def rewritten_tokens(sizes: Sizes, step: int, boundary: int, target: int) -> int:
    """Tokens request `step` writes from the first newly cut part on when it jumps from `boundary` to `target`."""
    return sizes.probed[target] - sizes.probed[boundary] + sizes.tokens[step] - sizes.tokens[target]


def stay_cost(sizes: Sizes, step: int, boundary: int, prices: PriceModel) -> float:
    """Estimated cost (write-price units) of request `step` keeping `boundary`: the previous request
    read from the cache and the newest step written, or all of it written when the cache is cold."""
    if sizes.cold[step]:
        return request_tokens(sizes, step, boundary)
    return prices.rent(request_tokens(sizes, step - 1, boundary)) + sizes.tokens[step] - sizes.tokens[step - 1]


def jump_cost(sizes: Sizes, step: int, boundary: int, target: int, prices: PriceModel) -> float:
    """Estimated cost (write-price units) of request `step` jumping from `boundary` to `target`.

    Everything from the first newly cut part on is written; before it, the cache is read up
    to the boundary (with a cache read only at marks, only up to our mark before it: the old
    steps after the mark are written too); a cold cache writes the whole request.
    """
    if sizes.cold[step]:
        return request_tokens(sizes, step, target)
    return prices.kept_prefix(sizes.probed[boundary], marked_read(sizes, step, boundary)) + rewritten_tokens(
        sizes, step, boundary, target
    )


def marked_read(sizes: Sizes, step: int, boundary: int) -> int:
    """Tokens request `step` reads up to our mark when it changes what follows `boundary`: the mark
    the previous request carried. That is the one for `boundary` only if `boundary` was in force
    before the previous request too; a jump made at the previous request moved the mark there,
    and no entry is written at the new place until that request, so nothing is read."""
    if not len(sizes.marked):
        return 0
    return sizes.marked[boundary] * (boundary + sizes.tail_steps < step - 1)


def step_cost(sizes: Sizes, step: int, boundary: int, target: int, prices: PriceModel) -> float:
    """Estimated cost (write-price units) of request `step` moving from `boundary` to `target` (equal: no jump)."""
    return stay_cost(sizes, step, boundary, prices) if target == boundary else jump_cost(sizes, step, boundary, target, prices)


def jump_premium(sizes: Sizes, step: int, boundary: int, target: int, prices: PriceModel) -> float:
    """What request `step` costs more (write-price units) when it jumps from `boundary` to `target`."""
    return jump_cost(sizes, step, boundary, target, prices) - stay_cost(sizes, step, boundary, prices)


def uncompressed_cost(sizes: Sizes, step: int, prices: PriceModel) -> float:
    """Estimated cost (write-price units) of request `step` sent as recorded: the previous request
    read from the cache and the newest step written, or all of it written when the cache is cold."""
    if sizes.cold[step]:
        return sizes.tokens[step]
    return prices.rent(sizes.tokens[step - 1]) + sizes.tokens[step] - sizes.tokens[step - 1]


def frame_cost(sizes: Sizes, step: int, tokens: int, prices: PriceModel) -> float:
    """Estimated cost (write-price units) of `tokens` of the frame of request `step`: written when
    the cache is cold, read from it otherwise."""
    return tokens if sizes.cold[step] else prices.rent(tokens)


def bill_request(bills: Bills, sizes: Sizes, step: int, jumps: Sequence[int], settings: Settings, prices: PriceModel) -> None:
    """Add request `step` to both bills: as the schedule weighs it (`step_cost`; the first one
    written whole) with its frame, and as recorded with the host's frame alone."""
    host = frame_cost(sizes, step, sizes.frame.host, prices)
    if step:
        boundary = boundary_at(jumps, settings, step - 1)
        messages = step_cost(sizes, step, boundary, boundary_at(jumps, settings, step), prices)
        bills.none += uncompressed_cost(sizes, step, prices) + host
    else:
        messages = sizes.tokens[0]
        bills.none += messages + host
    bills.deepmem += messages + host + frame_cost(sizes, step, sizes.frame.added, prices)


def running_bills(sizes: Sizes, jumps: Sequence[int], settings: Settings, prices: PriceModel) -> Bills:
    """Both bills of a history whose boundary jumps to `jumps`, up to its last step (`bill_request`)."""
    bills = Bills()
    for step in range(len(sizes.tokens)):
        bill_request(bills, sizes, step, jumps, settings, prices)
    return bills


def removed_tokens(sizes: Sizes, boundary: int, target: int) -> int:
    """Tokens every later request is smaller by after a jump from `boundary` to `target`."""
    return sizes.tokens[target] - sizes.tokens[boundary] - (sizes.probed[target] - sizes.probed[boundary])


def jump_reason(sizes: Sizes, step: int, boundary: int, waited: float, settings: Settings, prices: PriceModel) -> str:
    """Why request `step` jumps from `boundary` to its deepest target ('' when it does not).

    `waited` is what the steps since the last jump paid for not jumping (see `priced_jumps`).
    """
    target = step - settings.tail_steps
    if target <= boundary:
        return ""
    if sizes.cold[step]:
        return "cold"
    if window_presses(sizes, step, boundary, target, settings):
        return "window"
    if removed_tokens(sizes, boundary, target) > 0 and waited >= jump_premium(sizes, step, boundary, target, prices):
        return "pays"
    return ""


def priced_jumps(sizes: Sizes, settings: Settings, prices: PriceModel) -> tuple[int, ...]:
    """The boundaries the priced schedule jumps to, from 0 up to the current one.

    Each step that does not jump pays, at the cache-read price, for what the jump would
    have removed; once those payments reach what jumping costs now, it jumps (renting
    until the rent equals the price of buying: whatever the session's length, never
    twice the cost of the best choice in hindsight, and no guess of how long it runs).
    """
    jumps, waited = [0], 0.0
    for step in range(1, len(sizes.tokens)):
        boundary = jumps[-1]
        target = step - settings.tail_steps
        if target <= boundary:
            continue
        waited += prices.rent(max(removed_tokens(sizes, boundary, target), 0))
        if jump_reason(sizes, step, boundary, waited, settings, prices):
            jumps.append(target)
            waited = 0.0
    return tuple(jumps)


def release_pays(saving: int, carried: int, between: int, prices: PriceModel) -> bool:
    """Whether a jump should also cut a working-set output that has left the set.

    Kept whole, the output costs `saving` tokens at the read price on every request; cut
    at this jump, it makes the jump rewrite the `between` old tokens after it too, at the
    write price instead of the read price. Like a jump, the cut is bought once renting
    has cost as much: after `carried` requests since the output left the set.
    """
    return prices.rent(saving) * max(carried, 0) >= prices.rewrite_premium(between) and saving > 0


def boundary_at(jumps: Sequence[int], settings: Settings, step: int) -> int:
    """The boundary in force at `step`: the last jump whose target a step ≤ `step` could reach."""
    reachable = step - settings.tail_steps
    return max((jump for jump in jumps if jump <= reachable), default=0)
