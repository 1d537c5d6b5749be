"""Stale reads: a read of a file edited after it is marked stale and shortened hard."""

from __future__ import annotations

from deepmem.compressors.file_reads import shorten_read
from deepmem.markers import note
from deepmem.text.lines import Budget, by_tier
from deepmem.toolcalls.paths import file_name, same_file
from deepmem.toolcalls.touches import shows
from deepmem.types import Context, Part, Result

NAME = "stale_reads"
READS_FACTS = True
"""Its result depends on the history (`ctx.facts`), so the pipeline never reuses it across batches."""

BUDGETS = by_tier(
    Budget(head=3, tail=1, key=3, line_chars=120),
    Budget(head=3, tail=1, key=2, line_chars=100),
    Budget(head=3, tail=1, key=1, line_chars=100),
)


def edited_after(part: Part, ctx: Context) -> int | None:
    """The step that last edited the read file, when it is after the read's own step."""
    source = shows(part)
    if source is None:
        return None
    edits = ctx.facts.edit_steps.get(file_name(source[0]), ())
    steps = [step for path, step in edits if same_file(path, source[0])]
    latest = max(steps, default=0)
    return latest if latest > ctx.step else None


def compress(part: Part, ctx: Context) -> Result | None:
    """Mark the read stale (naming the step of the edit) and keep only a few lines."""
    step = edited_after(part, ctx)
    if step is None:
        return None
    prefix = note(f"stale read: this file was edited at step {step}; read it again for current content")
    return shorten_read(part, ctx, NAME, BUDGETS[ctx.tier], prefix)
