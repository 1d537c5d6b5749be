"""Command output (bash and tools without a finer route): errors, exit status, failing tests, tail."""

from __future__ import annotations

from deepmem.text.lines import Budget, by_tier, shorten_part
from deepmem.text.patterns import command_key_lines
from deepmem.types import Context, Part, Result

NAME = "command_output"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

BUDGETS = by_tier(
    Budget(head=3, tail=5, key=12, line_chars=240),
    Budget(head=3, tail=4, key=10, line_chars=200),
    Budget(head=2, tail=3, key=10, line_chars=160),
)


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep the first lines (exit status), failing tests, error lines and the tail."""
    return shorten_part(part, NAME, BUDGETS[ctx.tier], command_key_lines)
