"""Strip inline `<thinking>…</thinking>` (and `<think>`) from old assistant text."""

from __future__ import annotations

import re

from deepmem.text.fields import cut_blocks
from deepmem.types import Context, Part, Result

NAME = "thinking"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

INLINE = re.compile(r"<(thinking|think)>.*?</\1>\s*", re.DOTALL)


def compress(part: Part, ctx: Context) -> Result | None:
    """Replace inline thinking with a marker; the thinking goes to CCR."""
    return cut_blocks(part, "<think", INLINE, NAME, lambda match: "inline thinking", "\n")
