"""Drop old reasoning parts whole: providers sign them, so they are never edited."""

from __future__ import annotations

from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "reasoning"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""


def compress(part: Part, ctx: Context) -> Result | None:
    """Empty the reasoning text and its provider metadata (signature); keep the id."""
    text = part.get("text")
    if not isinstance(text, str) or not text:
        return None
    key = cache_key(text, NAME)
    dropped = {k: v for k, v in part.items() if k not in ("metadata", "text")}
    dropped["text"] = ""
    return Result(part=dropped, originals=(Original(key, text),))
