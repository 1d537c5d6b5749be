"""Long old tool inputs (heredocs in commands, edit strings, written contents): head and tail lines.

Every string field of the input (and of the dicts in its lists, e.g. multiedit's `edits`)
longer than the tier's limit is shortened with a gap marker; the input keeps its keys.
"""

from __future__ import annotations

from typing import Any

from deepmem.text.lines import Budget, by_tier, shorten_string
from deepmem.toolcalls.touches import FILE_TOOLS, SHELL_TOOLS
from deepmem.types import Context, Original, Part, Result

NAME = "long_inputs"
TOOLS: tuple[str, ...] = tuple(sorted(SHELL_TOOLS | FILE_TOOLS))

BUDGETS = by_tier(
    Budget(head=3, tail=1, key=0, line_chars=200),
    Budget(head=2, tail=1, key=0, line_chars=160),
    Budget(head=2, tail=1, key=0, line_chars=120),
)
MIN_CHARS = {"low": 240, "medium": 200, "high": 160}
"""Strings shorter than this stay whole."""


def shorten_value(value: Any, budget: Budget, limit: int, originals: list[Original]) -> Any:
    """The value with every long string shortened (dicts and lists walked one level deep)."""
    if isinstance(value, str):
        if len(value) < limit:
            return value
        shortened = shorten_string(value, NAME, budget)
        if shortened is None:
            return value
        originals.append(shortened[1])
        return shortened[0]
    if isinstance(value, dict):
        return {name: shorten_value(item, budget, limit, originals) for name, item in value.items()}
    if isinstance(value, list):
        return [shorten_value(item, budget, limit, originals) for item in value]
    return value


def compress(part: Part, ctx: Context) -> Result | None:
    """Shorten the long strings of a tool call's input."""
    state = part.get("state") or {}
    inputs = state.get("input")
    if not isinstance(inputs, dict):
        return None
    originals: list[Original] = []
    shortened = shorten_value(inputs, BUDGETS[ctx.tier], MIN_CHARS[ctx.tier], originals)
    if not originals:
        return None
    return Result(part={**part, "state": {**state, "input": shortened}}, originals=tuple(originals))
