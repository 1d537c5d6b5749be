"""Long tool inputs (heredocs in commands, edit strings, written contents): head, tail and copied lines.

Every string field of the input (and of the dicts in its lists, e.g. multiedit's `edits`)
longer than the tier's limit is shortened with a gap marker; the input keeps its keys.
The lines it copies from earlier outputs (`deepmem.transform.copied`) stay too, up to `COPIED_KEEP`:
project code the agent pasted into a script, which its next scripts paste again long after
the output it came from was cut.

Old inputs go through it at their tier. A new shell command goes through it when first
seen, at the low tier's budget, if it is over `capture_input_cap_tokens` (a long heredoc
script): trimming it then rewrites no cached prefix, and the lines the agent wrote itself
it can write again.
"""

from __future__ import annotations

from typing import Any

from deepmem.text.lines import Budget, by_tier, shorten_string
from deepmem.tokens import estimate_tokens
from deepmem.types import Context, Original, Part, Result

NAME = "long_inputs"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

COPIED_KEEP = 20
"""Lines copied from earlier outputs (`ctx.copied`) kept besides head and tail, first ones first:
the agent quotes them again in its next scripts (20 kept as many quoted lines on both corpora
as no bound, for less).
"""
BUDGETS = by_tier(
    Budget(head=3, tail=1, key=COPIED_KEEP, line_chars=200),
    Budget(head=2, tail=1, key=COPIED_KEEP, line_chars=160),
    Budget(head=2, tail=1, key=COPIED_KEEP, line_chars=120),
)
MIN_CHARS = {"low": 240, "medium": 200, "high": 160}
"""Strings shorter than this stay whole."""


def shorten_value(value: Any, budget: Budget, limit: int, copied: frozenset[str], originals: list[Original]) -> Any:
    """The value with every long string shortened (dicts and lists walked one level deep)."""
    if isinstance(value, str):
        if len(value) < limit:
            return value
        keys = [index for index, line in enumerate(value.split("\n")) if line.strip() in copied]
        shortened = shorten_string(value, NAME, budget, keys)
        if shortened is None:
            return value
        originals.append(shortened[1])
        return shortened[0]
    if isinstance(value, dict):
        return {name: shorten_value(item, budget, limit, copied, originals) for name, item in value.items()}
    if isinstance(value, list):
        return [shorten_value(item, budget, limit, copied, originals) for item in value]
    return value


def compress(part: Part, ctx: Context) -> Result | None:
    """Shorten the long strings of a tool call's input."""
    state = part.get("state") or {}
    inputs = state.get("input")
    if not isinstance(inputs, dict):
        return None
    if ctx.captured and estimate_tokens(str(inputs.get("command", ""))) <= ctx.settings.capture_input_cap_tokens:
        return None
    originals: list[Original] = []
    shortened = shorten_value(inputs, BUDGETS[ctx.tier], MIN_CHARS[ctx.tier], ctx.copied, originals)
    if not originals:
        return None
    return Result(part={**part, "state": {**state, "input": shortened}}, originals=tuple(originals))
