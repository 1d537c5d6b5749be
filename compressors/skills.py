"""Skill output: the frontmatter, MUST/NEVER/ALWAYS rules and headers; the body is cut."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from deepmem.text.lines import Budget, by_tier, shorten_part
from deepmem.text.patterns import HEADER, lines_matching
from deepmem.types import Context, Part, Result

NAME = "skills"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

BUDGETS = by_tier(
    Budget(head=3, tail=1, key=60, line_chars=300),
    Budget(head=3, tail=1, key=40, line_chars=240),
    Budget(head=2, tail=0, key=25, line_chars=200),
)
RULE = re.compile(r"\b(?:MUST(?: NOT)?|NEVER|ALWAYS|REQUIRED|IMPORTANT|DO NOT|SHOULD NOT)\b")


def frontmatter(lines: list[str]) -> list[int]:
    """Indices of the `---` frontmatter block (the first one, within the first lines)."""
    fences = [i for i, line in enumerate(lines[:40]) if line.strip() == "---"]
    return list(range(fences[0], fences[1] + 1)) if len(fences) >= 2 else []


def key_lines(lines: list[str]) -> Iterator[int]:
    """Frontmatter first, then rules, then headers."""
    return itertools.chain(frontmatter(lines), lines_matching(lines, RULE, HEADER))


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep the frontmatter, the rules and the headers of a skill."""
    return shorten_part(part, NAME, BUDGETS[ctx.tier], key_lines)
