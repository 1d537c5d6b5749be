"""Shorten old tool errors over the limit: the opening and the last line stay."""

from __future__ import annotations

from deepmem.markers import marker
from deepmem.text.fields import main_text, with_main_text
from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "tool_errors"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep the first `tool_error_chars` characters and the final line, mark the rest."""
    text = main_text(part)
    limit = ctx.settings.tool_error_chars
    if text is None or len(text) <= limit:
        return None
    head = text[:limit]
    lines = text.rstrip().splitlines()
    last = lines[-1].strip() if lines else ""
    tail = last if last and last not in head else ""
    kept = len(head) + len(tail)
    if kept >= len(text):
        return None
    key = cache_key(text, NAME)
    shortened = "\n".join(
        piece for piece in (head.rstrip(), marker(len(text) - kept, len(text), "chars", key), tail) if piece
    )
    return Result(part=with_main_text(part, shortened), originals=(Original(key, text),))
