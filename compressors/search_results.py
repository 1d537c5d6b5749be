"""Search results (grep, glob, rg, find, ls): the top files with their first matches, the rest counted.

Lines are grouped by file: `path:line:…` / `path:…` match lines, OpenCode's grep blocks
(a `path:` header followed by indented `Line N:` lines), and bare paths (grouped by folder).
The numbered lines of a search over one file (`grep -n PATTERN FILE`) belong to no group:
the head and tail show them, and a context line such as `1085-    if self.required:` is
never taken for a file name.
"""

from __future__ import annotations

import re

import msgspec

from deepmem.markers import marker
from deepmem.text.fields import main_text, with_main_text
from deepmem.text.lines import Budget, by_tier, clip, shorten_part, worth_cutting
from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "search_results"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

BUDGETS = by_tier(
    Budget(head=3, tail=2, key=12, line_chars=240),
    Budget(head=3, tail=2, key=8, line_chars=200),
    Budget(head=2, tail=1, key=5, line_chars=160),
)
"""`head` lines always kept, `tail` lines always kept, `key` files shown with up to 3 matches."""
MATCHES_PER_FILE = 3
LISTED_FILES = 8
MATCH = re.compile(r"^([^\s:][^:]*?\.[\w-]+|[^\s:][^:]*?/[^:]*?):(\d+)?[:-]?")
HEADER = re.compile(r"^(\S+):$")
NUMBERED = re.compile(r"^\d+[:-]")
"""A line of a search over one file (`grep -n`: `12:match`, `13-context`): it names no file
unless a file name without spaces and a line number follow (`2024-notes.txt:3:…`)."""


def file_of(line: str, current: str | None) -> tuple[str | None, str | None]:
    """(group of this line, group for following indented lines)."""
    header = HEADER.match(line)
    if header:
        return header.group(1), header.group(1)
    if line[:1].isspace() and current is not None:
        return current, current
    match = MATCH.match(line)
    if NUMBERED.match(line) and not (match and match.group(2) and " " not in match.group(1)):
        return None, None
    if match:
        return match.group(1), None
    stripped = line.strip()
    if "/" in stripped and " " not in stripped:
        return stripped.rsplit("/", 1)[0] + "/", None
    return None, None


def group_lines(lines: list[str]) -> dict[str, list[int]]:
    """Line indices per file (or folder), in order of first appearance."""
    groups: dict[str, list[int]] = {}
    current: str | None = None
    for index, line in enumerate(lines):
        group, current = file_of(line, current)
        if group is not None:
            groups.setdefault(group, []).append(index)
    return groups


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep the first files' first matches, the head and tail lines; count what was cut. When
    every line stays (a search of a few lines as long as a minified file), clip the long ones."""
    text = main_text(part)
    if not text:
        return None
    budget = BUDGETS[ctx.tier]
    lines = text.split("\n")
    groups = group_lines(lines)
    kept = set(range(min(budget.head, len(lines)))) | set(range(max(len(lines) - budget.tail, 0), len(lines)))
    shown = list(groups)[: budget.key]
    for group in shown:
        kept.update(groups[group][: MATCHES_PER_FILE + (1 if HEADER.match(lines[groups[group][0]]) else 0)])
    cut = [i for i in range(len(lines)) if i not in kept]
    if not cut:
        return shorten_part(part, NAME, msgspec.structs.replace(budget, head=len(lines)), lambda _: ())
    key = cache_key(text, NAME)
    hidden = [(group, len(indices)) for group, indices in groups.items() if group not in shown]
    summary = marker(len(cut), len(lines), "lines", key)
    if hidden:
        listed = ", ".join(f"{group} ({count})" for group, count in hidden[:LISTED_FILES])
        more = f" and {len(hidden) - LISTED_FILES} more" if len(hidden) > LISTED_FILES else ""
        summary = f"{summary}\n[not shown: {listed}{more}]"
    tail_start = max(len(lines) - budget.tail, 0)
    body = [clip(line, budget.line_chars) for i, line in enumerate(lines) if i in kept and i < tail_start]
    tail = [clip(line, budget.line_chars) for line in lines[tail_start:]]
    shortened = "\n".join([*body, summary, *tail])
    if not worth_cutting(text, shortened):
        return None
    return Result(part=with_main_text(part, shortened), originals=(Original(key, text),))
