"""Capture-time trimming: a new output over `capture_cap_tokens` is cut to fit, once and for all.

A pure function of the part and the cap, so every later step trims it identically.
"""

from __future__ import annotations

from deepmem.text.fields import main_text
from deepmem.text.lines import Budget, shorten_part
from deepmem.text.patterns import command_key_lines
from deepmem.tokens import estimate_tokens
from deepmem.types import Context, Part, Result

NAME = "capture"
TOOLS: tuple[str, ...] = ()

LINE_CHARS = 2_000
"""Kept lines are cut to this width (a 10 MB line becomes one short line and a marker)."""
CHARS_PER_TOKEN = 4
"""Rough size of a token, to turn the cap into line budgets."""


def lines_within(lengths: list[int], limit: int) -> int:
    """How many lines of the given lengths fit in `limit` characters (long lines count clipped)."""
    total = 0
    for count, length in enumerate(lengths):
        total += min(length, LINE_CHARS) + 1
        if total > limit:
            return count
    return len(lengths)


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep ~40% of the cap from the head, ~30% from the tail and ~20% of key lines."""
    text = main_text(part)
    cap = ctx.settings.capture_cap_tokens
    if not text or estimate_tokens(text) <= cap:
        return None
    lines = text.split("\n")
    lengths = [len(line) for line in lines]
    per_key = sum(min(n, LINE_CHARS) for n in lengths) // len(lines) + 1
    chars = cap * CHARS_PER_TOKEN
    budget = Budget(
        head=lines_within(lengths, chars * 4 // 10),
        tail=lines_within(lengths[::-1], chars * 3 // 10),
        key=chars * 2 // 10 // per_key,
        line_chars=LINE_CHARS,
    )
    return shorten_part(part, NAME, budget, command_key_lines)
