"""Subagent (`task`) output: headers, key lines (paths, errors, decisions), tail."""

from __future__ import annotations

import re
from collections.abc import Iterator

from deepmem.phrasing import REPORT_FINDING
from deepmem.text.lines import Budget, by_tier, shorten_part
from deepmem.text.patterns import ERROR_LINE, HEADER, PATH, lines_matching
from deepmem.types import Context, Part, Result

NAME = "subagent"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

BUDGETS = by_tier(
    Budget(head=4, tail=10, key=30, line_chars=300),
    Budget(head=3, tail=6, key=20, line_chars=240),
    Budget(head=2, tail=4, key=12, line_chars=200),
)
TAGS = re.compile(r"^\s*</?task_(?:result|id)|^task_id:")
KEY_PATTERNS = (TAGS, HEADER, ERROR_LINE, REPORT_FINDING, PATH)


def key_lines(lines: list[str]) -> Iterator[int]:
    """Task tags and headers first, then errors, decisions and paths."""
    return lines_matching(lines, *KEY_PATTERNS)


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep the task tags and headers, then paths, errors and decisions, and the tail."""
    return shorten_part(part, NAME, BUDGETS[ctx.tier], key_lines)
