"""Keeping some lines of a text and marking each run of cut lines (shared by compressors).

Each run of cut lines becomes `[… lines A-B cut]` (numbered in the original, for
`deep_expand` line ranges) and the text ends with one marker counting every cut line and
naming the CCR key of the original. A run is cut only when that saves tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from deepmem.markers import chars_marker, gap_marker, marker
from deepmem.text.fields import main_text, with_main_text
from deepmem.tokens import estimate_tokens, tokens_at_least
from deepmem.types import Original, Part, Result, Tier, cache_key

SAVING = 4
"""Tokens a cut must save beyond its marker."""


class Budget(msgspec.Struct, frozen=True):
    """How much of a text survives: lines from the head and tail, key lines, line width."""

    head: int
    tail: int
    key: int
    line_chars: int = 600


def kept_indices(count: int, budget: Budget, key_lines: Iterable[int]) -> set[int]:
    """Head, tail and the first `budget.key` distinct key lines (in the priority given)."""
    kept = set(range(min(budget.head, count)))
    kept.update(range(max(count - budget.tail, 0), count))
    chosen = 0
    for index in key_lines:
        if chosen >= budget.key:
            break
        if 0 <= index < count and index not in kept:
            kept.add(index)
            chosen += 1
    return kept


def worth_cutting(cut: str, mark: str) -> bool:
    """True when replacing `cut` by `mark` saves at least SAVING tokens."""
    needed = estimate_tokens(mark) + SAVING
    return tokens_at_least(cut) > needed or estimate_tokens(cut) > needed


def clip(line: str, width: int) -> str:
    """A line cut to `width` characters with a count of the rest, when that saves tokens."""
    if len(line) <= width + 40:
        return line
    mark = chars_marker(len(line) - width)
    return line[:width] + " " + mark if worth_cutting(line[width:], mark) else line


def render(lines: list[str], kept: set[int], width: int) -> tuple[list[str], int]:
    """Kept lines (clipped) with a gap marker for every run worth cutting; also lines cut."""
    out: list[str] = []
    index, count, cut = 0, len(lines), 0
    while index < count:
        if index in kept:
            out.append(clip(lines[index], width))
            index += 1
            continue
        end = index
        while end < count and end not in kept:
            end += 1
        mark = gap_marker(index + 1, end)
        if worth_cutting("\n".join(lines[index:end]), mark):
            out.append(mark)
            cut += end - index
        else:
            out.extend(clip(line, width) for line in lines[index:end])
        index = end
    return out, cut


def shorten_string(
    text: str, name: str, budget: Budget, key_lines: Iterable[int] = (), prefix: str = ""
) -> tuple[str, Original] | None:
    """Keep head, tail and key lines of a text; None when that would not save tokens."""
    lines = text.split("\n")
    out, cut = render(lines, kept_indices(len(lines), budget, key_lines), budget.line_chars)
    key = cache_key(text, name)
    if prefix:
        out.insert(0, prefix)
    body = "\n".join(out)
    # Only long lines clipped: the count that says what went is characters, not "0 of N lines".
    counted = marker(cut, len(lines), "lines", key) if cut else marker(len(text) - len(body), len(text), "chars", key)
    shortened = f"{body}\n{counted}"
    if not worth_cutting(text, shortened):
        return None
    return shortened, Original(key, text)


def shorten_part(
    part: Part,
    name: str,
    budget: Budget,
    key_lines: Callable[[list[str]], Iterable[int]],
    prefix: str = "",
) -> Result | None:
    """Keep head, tail and key lines of the part's main text; None when nothing would be cut."""
    text = main_text(part)
    if not text:
        return None
    shortened = shorten_string(text, name, budget, key_lines(text.split("\n")), prefix)
    if shortened is None:
        return None
    return Result(part=with_main_text(part, shortened[0]), originals=(shortened[1],))


def by_tier(low: Budget, medium: Budget, high: Budget) -> dict[Tier, Budget]:
    """A budget per tier (higher tiers keep fewer lines)."""
    return {"low": low, "medium": medium, "high": high}
