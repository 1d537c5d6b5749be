"""Markdown sections fitted to a token cap: each `## ` section keeps its first lines within a share of the cap
that grows with its weight, and what a section does not need goes to the others.

Shares are in tokens, not lines: a section of long lines (errors, files with their code names) cannot push out
one of short lines (commands), and the cap holds by construction (`tokens_for_cap` of the whole text is checked
for every share tried).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping

from deepmem.tokens import tokens_for_cap

LINE_CHARS = 300
"""A line longer than this is cut in a section that does not fit its share whole, but a quoted request line
(`> `): the checkpoint chose which request lines to quote within its own budget already."""
QUOTE = "> "


def fit_sections(markdown: str, room: int, weights: Mapping[str, float], around: str = "",
                 whole: Collection[str] = ()) -> str:
    """The markdown as it is when it fits `room` tokens with `around` (text the caller adds to it); else each
    section cut to its share, the largest shares that fit. A section not in `weights` weighs 1; one in `whole` is
    kept as it is (its lines were chosen within a budget of their own) and the others share what it leaves."""
    if tokens_for_cap(around + markdown) <= room:
        return markdown
    head, sections = split_sections(markdown)
    weighted = [(title, math.inf if title[3:] in whole else weights.get(title[3:], 1.0), lines)
                for title, lines in sections]
    low, high = 0, room
    while low < high:
        level = (low + high + 1) // 2
        if tokens_for_cap(around + shared_out(head, weighted, level)) <= room:
            low = level
        else:
            high = level - 1
    return clip_lines(shared_out(head, weighted, low), room - tokens_for_cap(around))


def section_chosen(markdown: str, title: str, choose: Callable[[list[str]], list[str]]) -> str:
    """The markdown with the lines of the section `title` replaced by what `choose` keeps of them."""
    head, sections = split_sections(markdown)
    out = list(head)
    for name, lines in sections:
        out += [name, *(choose(lines) if name[3:] == title else lines), ""]
    return "\n".join(out) + "\n"


def split_sections(markdown: str) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The lines before the first `## ` title, and each section's title with its lines (blank lines left out)."""
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    for line in markdown.splitlines():
        if line.startswith("## "):
            sections.append((line, []))
        elif sections:
            sections[-1][1].extend([line] if line.strip() else [])
        else:
            head.append(line)
    return head, sections


def shortened(line: str) -> str:
    """A line cut to LINE_CHARS, but a quoted request line."""
    return line if len(line) <= LINE_CHARS or line.startswith(QUOTE) else line[: LINE_CHARS - 1] + "…"


def shared_out(head: list[str], sections: list[tuple[str, float, list[str]]], level: int) -> str:
    """The text with each section's lines kept within its weight times `level` tokens: whole when they fit, else
    each cut to LINE_CHARS and the first line that does not fit cut to what is left of the share."""
    out = list(head)
    for title, weight, lines in sections:
        out.append(title)
        left = weight if weight == math.inf else int(weight * level)
        whole = tokens_for_cap("\n".join(lines) + "\n") <= left
        for line in lines if whole else map(shortened, lines):
            cost = tokens_for_cap(line + "\n")
            if cost > left:
                out += [cut] if (cut := cut_to(line, left)) else []
                break
            out.append(line)
            left -= cost
        out.append("")
    return "\n".join(out) + "\n"


def cut_to(line: str, budget: int) -> str:
    """The line's words from the start while they fit `budget` tokens, marked as cut ('' when none fit)."""
    words = line.split(" ")
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if tokens_for_cap(" ".join(words[:middle]) + " …") <= budget:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + " …" if low > 1 else ""


def clip_lines(text: str, room: int) -> str:
    """Whole lines from the start while they fit `room` tokens: the last resort when even the titles do not."""
    lines: list[str] = []
    for line in text.splitlines():
        if tokens_for_cap("\n".join([*lines, line]) + "\n") > room:
            break
        lines.append(line)
    return "\n".join(lines) + "\n"
