"""Remove system-injected blocks (`<system-reminder>…</system-reminder>` and the like)."""

from __future__ import annotations

import re

from deepmem.compressors.text_fields import main_text, with_main_text
from deepmem.markers import removal_marker
from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "system_blocks"
TOOLS: tuple[str, ...] = ()

BLOCK = re.compile(r"<(system-reminder|system-notification|system-message)>.*?</\1>\n?", re.DOTALL)


def compress(part: Part, ctx: Context) -> Result | None:
    """Replace each injected block with a marker; the block goes to CCR."""
    text = main_text(part)
    if not text or "<system-" not in text:
        return None
    originals: list[Original] = []

    def replace(match: re.Match[str]) -> str:
        block = match.group(0)
        key = cache_key(block, NAME)
        originals.append(Original(key, block))
        return removal_marker(f"1 {match.group(1)} block", len(block), key)

    shortened = BLOCK.sub(replace, text)
    if not originals:
        return None
    return Result(part=with_main_text(part, shortened), originals=tuple(originals))
