"""Duplicate calls: an older call repeated later with the same input and output becomes a pointer."""

from __future__ import annotations

from deepmem.markers import removal_marker
from deepmem.text.fields import main_text, with_main_text
from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "duplicates"
READS_FACTS = True
"""Its result depends on the history (`ctx.facts`), so the pipeline never reuses it across batches."""


def compress(part: Part, ctx: Context) -> Result | None:
    """Replace the output of a superseded call with a pointer to its newest copy."""
    newer = ctx.facts.newer_call.get(str(part.get("id", "")))
    text = main_text(part)
    if newer is None or not text:
        return None
    key = cache_key(text, NAME)
    pointer = removal_marker(f"output repeated verbatim by the later call {newer}", len(text), key)
    if len(pointer) >= len(text):
        return None
    return Result(part=with_main_text(part, pointer), originals=(Original(key, text),))
