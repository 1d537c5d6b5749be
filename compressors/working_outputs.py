"""Working-set outputs: what the agent is still working on keeps its text, or far more of it.

A working-set output (see `deepmem.working_set`) under its tier's size stays whole; a
larger one keeps a long head, its key lines and tail. A read of a file edited after it is
kept the same way, with a note naming the step of the edit.
"""

from __future__ import annotations

from deepmem.compressors.file_reads import key_lines, read_source
from deepmem.compressors.lines import Budget, by_tier, shorten_part
from deepmem.compressors.patterns import command_key_lines
from deepmem.compressors.stale_reads import edited_after
from deepmem.compressors.text_fields import main_text, with_main_text
from deepmem.markers import note
from deepmem.tokens import estimate_tokens
from deepmem.types import Context, Part, Result
from deepmem.working_set import read_view

NAME = "working_outputs"
TOOLS: tuple[str, ...] = ("read", "bash")

WHOLE_TOKENS = {"low": 1_000, "medium": 750, "high": 500}
"""Outputs up to this size stay whole."""
BUDGETS = by_tier(
    Budget(head=30, tail=10, key=20, line_chars=400),
    Budget(head=22, tail=8, key=15, line_chars=300),
    Budget(head=15, tail=6, key=12, line_chars=240),
)
"""About five times what a read outside the working set keeps, and longer lines."""


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep a working-set output whole under its tier's size, else a long head, key lines, tail."""
    text = main_text(part)
    if not text:
        return None
    source = read_source(part) if read_view(part) is not None else None
    edited = edited_after(part, ctx) if source is not None else None
    prefix = note(f"this file was edited at step {edited} after this read") if edited is not None else ""
    if estimate_tokens(text) <= WHOLE_TOKENS[ctx.tier]:
        return Result(part=with_main_text(part, f"{prefix}\n{text}")) if prefix else None
    if source is not None:
        return shorten_part(part, NAME, BUDGETS[ctx.tier], lambda lines: key_lines(lines, source, ctx.facts), prefix)
    return shorten_part(part, NAME, BUDGETS[ctx.tier], command_key_lines, prefix)
