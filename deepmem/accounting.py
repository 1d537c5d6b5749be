"""Per-step accounting: tokens, prefix stability and cache-aware cost of successive requests (shared by `deepmem audit` and the benchmarks)."""

from __future__ import annotations

import msgspec

from deepmem.context import common_prefix_chars
from deepmem.support import visible_count

CACHED_RATE = 0.1
"""Price of input tokens that repeat the previous request's prefix (cache read)."""
UNCACHED_RATE = 1.25
"""Price of every other input token (cache write)."""


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
    previous_units: list[str] = []
    previous_length: int = 0

    def add(self, units: list[str], counts: list[int], quoted: list[str] = ()) -> None:
        """Account for one request given as visible units, their token counts, and the lines
        that the step produced from it quotes."""
        if quoted:
            visible = visible_count(quoted, "\n".join(units))
            self.quoted += len(quoted)
            self.quoted_visible += visible
            self.quoting_steps += 1
            self.supported_steps += visible == len(quoted)
        total = sum(counts)
        shared, chars, partial = common_prefix_chars(self.previous_units, units)
        cached = float(sum(counts[:shared]))
        if partial:
            cached += counts[shared] * partial / len(units[shared])
        if self.steps:
            self.prefix_chars += chars
            self.previous_chars += self.previous_length
        self.steps += 1
        self.tokens += total
        self.final_tokens = total
        self.cached_tokens += cached
        self.previous_units = units
        self.previous_length = sum(map(len, units)) + max(len(units) - 1, 0)

    @property
    def warm_cost(self) -> float:
        """Cost with a warm prompt cache: repeated prefix at 0.1×, the rest at 1.25×."""
        return CACHED_RATE * self.cached_tokens + UNCACHED_RATE * (self.tokens - self.cached_tokens)

    @property
    def cold_cost(self) -> float:
        """Cost without a prompt cache: every token at 1.0×."""
        return float(self.tokens)

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


def ratios(meter: Meter, baseline: Meter) -> dict[str, float]:
    """A contender against no compression under the same billing, plus its prefix stability."""
    return {
        "raw": _ratio(meter.tokens, baseline.tokens),
        "final": _ratio(meter.final_tokens, baseline.final_tokens),
        "cost_warm": _ratio(meter.warm_cost, baseline.warm_cost),
        "cost_cold": _ratio(meter.cold_cost, baseline.cold_cost),
        "prefix_stability": _ratio(meter.prefix_chars, meter.previous_chars),
        "support": _ratio(meter.quoted_visible, meter.quoted),
        "steps_supported": _ratio(meter.supported_steps, meter.quoting_steps),
    }


def _ratio(part: float, whole: float) -> float:
    return part / whole if whole else 1.0
