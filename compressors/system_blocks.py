"""Remove system-injected blocks (`<system-reminder>…</system-reminder>` and the like)."""

from __future__ import annotations

import re

from deepmem.text.fields import cut_blocks
from deepmem.types import Context, Part, Result

NAME = "system_blocks"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

BLOCK = re.compile(r"<(system-reminder|system-notification|system-message)>.*?</\1>\n?", re.DOTALL)


def compress(part: Part, ctx: Context) -> Result | None:
    """Replace each injected block with a marker; the block goes to CCR."""
    return cut_blocks(part, "<system-", BLOCK, NAME, lambda match: f"1 {match.group(1)} block")
