"""Strip inline `<thinking>…</thinking>` (and `<think>`) from old assistant text."""

from __future__ import annotations

import re

from deepmem.compressors.text_fields import main_text, with_main_text
from deepmem.markers import removal_marker
from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "thinking"
TOOLS: tuple[str, ...] = ()

INLINE = re.compile(r"<(thinking|think)>.*?</\1>\s*", re.DOTALL)


def compress(part: Part, ctx: Context) -> Result | None:
    """Replace inline thinking with a marker; the thinking goes to CCR."""
    text = main_text(part)
    if not text or "<think" not in text:
        return None
    originals: list[Original] = []

    def replace(match: re.Match[str]) -> str:
        block = match.group(0)
        key = cache_key(block, NAME)
        originals.append(Original(key, block))
        return removal_marker("inline thinking", len(block), key) + "\n"

    shortened = INLINE.sub(replace, text)
    if not originals:
        return None
    return Result(part=with_main_text(part, shortened), originals=tuple(originals))
