"""Remove system-injected blocks (`<system-reminder>…</system-reminder>` and the like)."""

from __future__ import annotations

import re

from deepmem.text.fields import cut_blocks, main_text
from deepmem.types import Context, Part, Result

NAME = "system_blocks"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

BLOCK = re.compile(r"<(system-reminder|system-notification|system-message)>.*?</\1>\n?", re.DOTALL)


def compress(part: Part, ctx: Context) -> Result | None:
    """Replace each injected block with a marker; the block goes to CCR."""
    text = main_text(part)
    if not text or "<system-" not in text:
        return None
    return cut_blocks(part, text, BLOCK, NAME, lambda match: f"1 {match.group(1)} block")
