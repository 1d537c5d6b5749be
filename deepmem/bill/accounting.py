"""Per-step accounting: tokens, prefix stability and cache-aware cost of successive requests (shared by `deepmem audit` and the benchmarks).

A meter keeps, per request, its tokens, the tokens that repeat the previous request's
prefix and the pause before it, so one replay is priced afterwards under any price
model: the repeated prefix at its cache-read price unless the pause outlived the cache,
the rest at its cache-write price. For a provider that reads its cache only at marks
(`PriceModel.cached_at_marks`) the repeated prefix counts only up to the last of the
previous request's marks it reaches: the ends of its last two messages, and a part that
carries a mark of its own (`deepmem.transform.cache_mark`).

The provider bills the whole request, not only its messages: before them come the system
prompt and the tool definitions (`deepmem.bill.frame`), which sit before the system mark, so
they are written when the cache is cold and read at every other request. A meter keeps
each request's frame apart, so a figure is given for the whole request and, beside it,
for the messages alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from statistics import median

import msgspec

from deepmem.bill.prices import FAMILIES, PriceModel, with_lifetime

DEFAULT_PRICES = FAMILIES["anthropic"]
"""The price model a figure is given in when none is named: Anthropic's (read 0.1×, write 1.25×)."""


class Meter(msgspec.Struct):
    """Totals over the steps of one session for one contender."""

    steps: int = 0
    tokens: int = 0
    """o200k tokens summed over every step's request."""
    final_tokens: int = 0
    """Tokens of the last step's request."""
    cached_tokens: float = 0.0
    """Tokens that repeat the previous request's prefix, summed over steps."""
    prefix_chars: int = 0
    """Characters of each previous request that the next one starts with, summed."""
    previous_chars: int = 0
    """Characters of each previous request (steps after the first), summed."""
    quoted: int = 0
    """Lines the steps' tool inputs quote from earlier tool output, summed (next-step support)."""
    quoted_visible: int = 0
    """Of those, the lines visible in the request the step was produced from."""
    quoting_steps: int = 0
    """Steps that quote at least one line."""
    supported_steps: int = 0
    """Quoting steps whose request showed every quoted line."""
    request_tokens: list[int] = []
    """Per request: its tokens."""
    request_cached: list[float] = []
    """Per request: its tokens that repeat the previous request's prefix."""
    request_marked: list[float] = []
    """Per request: its tokens up to the last mark of the previous request that it repeats whole."""
    request_pauses: list[int] = []
    """Per request: milliseconds since the previous request (0 when unknown)."""
    request_frame: list[int] = []
    """Per request: tokens of what it carries before its messages (system prompt, tool definitions)."""
    request_frame_read: list[int] = []
    """Per request: those of them the previous request carried the same (readable from the cache)."""
    one_hour: bool = False
    """The session's requests write 1-hour cache entries: billed at that price and lifetime where
    the prices have them (`deepmem.bill.prices.with_lifetime`)."""
    request_one_hour: list[bool] = []
    """Per request: whether it writes 1-hour entries."""
    frame_tokens: int = 0
    """Frame tokens summed over every step's request."""
    final_frame: int = 0
    """Frame tokens of the last step's request."""
    recovery_tokens: int = 0
    """Tokens of the outputs that steps quoting lines out of view would have read again."""
    previous_units: list[str] = []
    previous_length: int = 0
    previous_marks: tuple[int, ...] = ()
    previous_frame: int = 0

    def add(
        self,
        units: list[str],
        counts: list[int],
        quoted: int = 0,
        visible: int = 0,
        pause_ms: int = 0,
        recovery: int = 0,
        marks: tuple[int, ...] | None = None,
        frame: int = 0,
    ) -> None:
        """Account for one request given as visible units, their token counts, the lines that
        the step produced from it quotes and those of them it shows (`deepmem.replay.support`), the pause before it, what re-reading the quoted
        lines it does not show would cost (tokens), its cache marks (unit counts; by
        default its end alone, see `deepmem.transform.context.request_units`) and the tokens of its
        frame (`deepmem.bill.frame`)."""
        if quoted:
            self.quoted += quoted
            self.quoted_visible += visible
            self.quoting_steps += 1
            self.supported_steps += visible == quoted
        total = sum(counts)
        shared, chars, partial = common_prefix_chars(self.previous_units, units)
        cached = float(sum(counts[:shared]))
        if partial:
            cached += counts[shared] * partial / len(units[shared])
        reached = max((mark for mark in self.previous_marks if mark <= shared), default=0)
        if self.steps:
            self.prefix_chars += chars
            self.previous_chars += self.previous_length
        self.steps += 1
        self.tokens += total
        self.final_tokens = total
        self.cached_tokens += cached
        self.request_tokens.append(total)
        self.request_cached.append(cached)
        self.request_marked.append(float(sum(counts[:reached])))
        self.request_pauses.append(pause_ms)
        self.request_one_hour.append(self.one_hour)
        self.request_frame.append(frame)
        self.request_frame_read.append(frame if self.steps > 1 and self.previous_frame == frame else 0)
        self.frame_tokens += frame
        self.final_frame = frame
        self.previous_frame = frame
        self.recovery_tokens += recovery
        self.previous_units = units
        self.previous_marks = (len(units),) if marks is None else marks
        self.previous_length = sum(map(len, units)) + max(len(units) - 1, 0)

    def cost(self, prices: PriceModel = DEFAULT_PRICES, whole: bool = True) -> float:
        """Cost with a prompt cache kept warm between requests closer than its lifetime: of the
        whole request, or (`whole` false) of its messages alone."""
        frames = zip(self.request_frame, self.request_frame_read, strict=True) if whole else repeat((0, 0))
        lifetimes = {False: prices, True: with_lifetime(prices, True)}
        requests = zip(
            self.request_tokens, self.request_cached, self.request_marked, self.request_pauses, frames, self.request_one_hour,
            strict=False,
        )
        return sum(
            (lifetimes[hour].request_dollars(tokens + frame, cached + read, marked + read, pause)
             for tokens, cached, marked, pause, (frame, read), hour in requests),
            0.0,
        )

    def recovered_cost(self, prices: PriceModel = DEFAULT_PRICES, whole: bool = True) -> float:
        """`cost` plus re-reading, at the write price, every output a step quoted out of view."""
        return self.cost(prices, whole) + prices.dollars(self.recovery_tokens, 0.0)

    def cold_cost(self, prices: PriceModel = DEFAULT_PRICES, whole: bool = True) -> float:
        """Cost without a prompt cache: every token at the input price."""
        return prices.dollars_uncached(self.tokens + (self.frame_tokens if whole else 0))

    def merge(self, other: Meter) -> None:
        """Add another session's totals into this one (final tokens are summed too)."""
        self.steps += other.steps
        self.tokens += other.tokens
        self.final_tokens += other.final_tokens
        self.cached_tokens += other.cached_tokens
        self.prefix_chars += other.prefix_chars
        self.previous_chars += other.previous_chars
        self.quoted += other.quoted
        self.quoted_visible += other.quoted_visible
        self.quoting_steps += other.quoting_steps
        self.supported_steps += other.supported_steps
        self.request_tokens = [*self.request_tokens, *other.request_tokens]
        self.request_cached = [*self.request_cached, *other.request_cached]
        self.request_marked = [*self.request_marked, *other.request_marked]
        self.request_pauses = [*self.request_pauses, *other.request_pauses]
        self.request_one_hour = [*self.request_one_hour, *other.request_one_hour]
        self.request_frame = [*self.request_frame, *other.request_frame]
        self.request_frame_read = [*self.request_frame_read, *other.request_frame_read]
        self.frame_tokens += other.frame_tokens
        self.final_frame += other.final_frame
        self.recovery_tokens += other.recovery_tokens


def ratios(meter: Meter, baseline: Meter, prices: PriceModel = DEFAULT_PRICES) -> dict[str, float]:
    """A contender against no compression under the same billing, plus its prefix stability:
    the whole request first, the messages alone under `…_messages`."""
    return {
        "raw": _ratio(meter.tokens + meter.frame_tokens, baseline.tokens + baseline.frame_tokens),
        "final": _ratio(meter.final_tokens + meter.final_frame, baseline.final_tokens + baseline.final_frame),
        "cost_warm": _ratio(meter.cost(prices), baseline.cost(prices)),
        "cost_recovered": _ratio(meter.recovered_cost(prices), baseline.recovered_cost(prices)),
        "cost_cold": _ratio(meter.cold_cost(prices), baseline.cold_cost(prices)),
        "raw_messages": _ratio(meter.tokens, baseline.tokens),
        "final_messages": _ratio(meter.final_tokens, baseline.final_tokens),
        "cost_messages": _ratio(meter.cost(prices, whole=False), baseline.cost(prices, whole=False)),
        "prefix_stability": _ratio(meter.prefix_chars, meter.previous_chars),
        "support": _ratio(meter.quoted_visible, meter.quoted),
        "steps_supported": _ratio(meter.supported_steps, meter.quoting_steps),
    }


class Spread(msgspec.Struct, frozen=True):
    """How the sessions of a set fare one by one against no compression, beside the pooled ratio:
    the median session, how many cost more than none, and the worst."""

    sessions: int = 0
    median: float = 1.0
    costlier: int = 0
    """Sessions whose ratio is above 1 (dearer with the contender than without)."""
    worst: float = 1.0

    @property
    def costlier_share(self) -> float:
        """Share of the sessions costlier than none (0 when there are none)."""
        return self.costlier / self.sessions if self.sessions else 0.0

    def describe(self) -> str:
        """'median 0.93×, 2 of 7 costlier than none, worst 1.14×'."""
        return f"median {self.median:.3f}×, {self.costlier} of {self.sessions} costlier than none, worst {self.worst:.3f}×"


def session_spread(ratios: Sequence[float]) -> Spread:
    """The spread of per-session cost ratios (each against no compression, billed the same way)."""
    if not ratios:
        return Spread()
    return Spread(len(ratios), median(ratios), sum(ratio > 1.0 for ratio in ratios), max(ratios))


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 1.0


def common_prefix_chars(previous: list[str], current: list[str]) -> tuple[int, int, int]:
    """(whole units shared, characters shared, characters of the partly shared unit).

    Characters count the newline-joined serialization, so the figure is the length of the
    longest exact prefix of `previous` that `current` starts with.
    """
    shared = 0
    chars = 0
    for old, new in zip(previous, current, strict=False):
        if old != new:
            partial = _prefix_length(old, new)
            return shared, chars + partial, partial
        shared += 1
        chars += len(old) + 1
    if shared == len(previous):
        chars -= 1 if previous else 0
    return shared, chars, 0


def _prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings (binary search on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
