"""Working-set outputs: what the agent is still working on keeps its text, or far more of it.

A view of a file being worked on (`Facts.whole_views`) stays whole at every tier, as the
agent first saw it (a view over the capture cap keeps its capture-time trim, so it reads
the same young and old). Any
other working-set output (see `deepmem.transform.working_set`) up to `WHOLE_TOKENS` stays whole; a
larger one keeps as many head lines as fit in `HEAD_TOKENS`, its key lines
(definitions and lines named by errors for a read; errors and failing tests for a
command) and its tail.
"""

from __future__ import annotations

from deepmem.compressors import capture
from deepmem.compressors.file_reads import key_lines
from deepmem.text.fields import main_text
from deepmem.text.lines import Budget, shorten_part
from deepmem.text.patterns import command_key_lines
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.touches import shows
from deepmem.types import Context, Part, Result

NAME = "working_outputs"
READS_FACTS = True
"""Its result depends on the history (`ctx.facts`), so the pipeline never reuses it across batches."""

WHOLE_TOKENS = 2_000
"""Outputs up to this size stay whole."""
HEAD_TOKENS = 1_000
"""A larger output keeps its head lines up to this size."""
KEY_LINES = 20
TAIL_LINES = 10
LINE_CHARS = 400


def head_within(lines: list[str], tokens: int) -> int:
    """How many leading lines fit in `tokens` (estimated)."""
    used = 0
    for count, line in enumerate(lines):
        used += estimate_tokens(line) + 1
        if used > tokens:
            return count
    return len(lines)


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep a working-set output whole up to its size, else a long head, key lines, tail."""
    text = main_text(part)
    if str(part.get("id", "")) in ctx.facts.whole_views:
        return capture.compress(part, ctx)
    if not text or estimate_tokens(text) <= WHOLE_TOKENS:
        return None
    budget = Budget(head=head_within(text.split("\n"), HEAD_TOKENS), tail=TAIL_LINES, key=KEY_LINES, line_chars=LINE_CHARS)
    source = shows(part)
    if source is not None:
        return shorten_part(part, NAME, budget, lambda lines: key_lines(lines, source, ctx.facts))
    return shorten_part(part, NAME, budget, command_key_lines)
