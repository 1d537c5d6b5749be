"""File reads (OpenCode `read`, shell `cat`/`nl`/`sed -n`): head, key lines, tail.

Key lines are, first, the lines named by later errors or greps (`Facts.named_lines`),
then definitions (def, class, function, …).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import lru_cache

from deepmem.text.lines import Budget, by_tier, shorten_part
from deepmem.text.patterns import DEFINITION, lines_matching
from deepmem.toolcalls.paths import by_file_name, file_name, same_file
from deepmem.toolcalls.touches import shows
from deepmem.types import Context, Facts, Part, Result

NAME = "file_reads"
READS_FACTS = True
"""Its result depends on the history (`ctx.facts`), so the pipeline never reuses it across batches."""

BUDGETS = by_tier(
    Budget(head=4, tail=1, key=8, line_chars=200),
    Budget(head=3, tail=1, key=6, line_chars=160),
    Budget(head=3, tail=1, key=4, line_chars=120),
)
NUMBERED = re.compile(r"^\s*(\d+)(?::\s|:$|\t|→)")
"""A line number as OpenCode (`12: `), `cat -n`/`nl` (`12<tab>`) or Claude Code (`   12→`) print it."""
CONTENT_START = frozenset({"<content>", "<output>"})


def file_line_numbers(lines: list[str], first: int) -> list[int | None]:
    """Per output line, the file line it shows: its `N: ` / `N<tab>` number or its position."""
    start = next((i + 1 for i, line in enumerate(lines[:4]) if line.strip() in CONTENT_START), 0)
    numbers: list[int | None] = []
    for index, line in enumerate(lines):
        match = NUMBERED.match(line)
        if match:
            numbers.append(int(match.group(1)))
        else:
            numbers.append(first + index - start if index >= start else None)
    return numbers


@lru_cache(maxsize=8)
def named_by_file_name(named_lines: frozenset[tuple[str, int]]) -> dict[str, tuple[tuple[str, int], ...]]:
    """Named (path, line) pairs grouped by file name, once per set of facts."""
    return by_file_name(named_lines)


def named_for(path: str, facts: Facts) -> set[int]:
    """Lines of `path` named by errors or greps in the old history."""
    candidates = named_by_file_name(facts.named_lines).get(file_name(path), ())
    return {line for named, line in candidates if same_file(named, path)}


def key_lines(lines: list[str], source: tuple[str, int] | None, facts: Facts) -> Iterator[int]:
    """Indices of lines named by later errors/greps first, then of definitions."""
    named: list[int] = []
    if source is not None:
        wanted = named_for(source[0], facts)
        if wanted:
            numbers = file_line_numbers(lines, source[1])
            named = [i for i, number in enumerate(numbers) if number in wanted]
    return itertools.chain(named, lines_matching(lines, DEFINITION))


def shorten_read(part: Part, ctx: Context, name: str, budget: Budget, prefix: str = "") -> Result | None:
    """Shorten a read's output to head + key lines + tail under a budget (shared with stale reads)."""
    source = shows(part)
    return shorten_part(part, name, budget, lambda lines: key_lines(lines, source, ctx.facts), prefix)


def compress(part: Part, ctx: Context) -> Result | None:
    """Head, named lines and definitions, tail."""
    return shorten_read(part, ctx, NAME, BUDGETS[ctx.tier])
