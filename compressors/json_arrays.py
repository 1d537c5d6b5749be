"""JSON arrays: head items, the distinct middle items, tail items; nested arrays over 30 too.

The result stays valid JSON: each cut becomes one marker string inside the array.
Output that looks like a JSON array but does not parse (an array cut off, one array per
line as `jq -c` prints) is left to the next compressor of the route, which cuts it as text.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from deepmem.markers import marker
from deepmem.text.fields import main_text, with_main_text
from deepmem.text.lines import worth_cutting
from deepmem.types import Context, Original, Part, Result, Tier, cache_key

NAME = "json_arrays"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

NESTED_LIMIT = 30
"""Arrays with more items than this are crushed."""
WRAPPED = re.compile(r"\A(.*?<output>\s*)(\[.*?)(\s*</output>\s*)\Z", re.DOTALL)
BARE = re.compile(r"\A(\s*)(\[.*?)(\s*)\Z", re.DOTALL)
OPENING = re.compile(r"<output>\s*\[")
LOOKS_LIKE_ARRAY = re.compile(r'\[\s*(?:[{\["\]]|-?\d+(?:\.\d+)?\s*[,\]]|true\b|false\b|null\b)')
DEPTH_LIMIT = 100
"""Values nested deeper are left as they are: crushing walks them recursively and orjson writes
at most 254 levels back (JSON that deep is a curiosity, not data an agent reads)."""
KEEP: dict[Tier, tuple[int, int, int]] = {"low": (5, 3, 6), "medium": (4, 2, 4), "high": (3, 1, 2)}
"""Per tier: (head items, tail items, distinct middle items)."""


def json_body(text: str) -> tuple[str, str, str] | None:
    """(before, JSON text, after) when the output is an array, bare or inside `<output>` tags."""
    # What each pattern needs, checked first: most outputs are neither, and say so quickly.
    wrapped = text.rstrip().endswith("</output>") and OPENING.search(text) is not None
    if not wrapped and not text.lstrip().startswith("["):
        return None
    match = (WRAPPED.match(text) if wrapped else None) or BARE.match(text)
    if match is None or not LOOKS_LIKE_ARRAY.match(match.group(2)):
        return None
    return match.group(1), match.group(2), match.group(3)


def nested_deeper(value: Any, limit: int) -> bool:
    """True when arrays or objects nest more than `limit` levels deep (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            stack.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return False


def shape(item: Any) -> Any:
    """What makes an item distinct from its neighbours: its keys and value types."""
    if isinstance(item, dict):
        return tuple(sorted((k, type(v).__name__) for k, v in item.items()))
    return type(item).__name__


def crush(value: Any, keep: tuple[int, int, int], key: str) -> tuple[Any, int]:
    """The value with every array over NESTED_LIMIT items crushed; also how many items were cut."""
    if isinstance(value, dict):
        out, cut = {}, 0
        for name, item in value.items():
            out[name], inner = crush(item, keep, key)
            cut += inner
        return out, cut
    if not isinstance(value, list):
        return value, 0
    items, cut = [], 0
    for item in value:
        crushed, inner = crush(item, keep, key)
        items.append(crushed)
        cut += inner
    head, tail, middle = keep
    if len(items) <= NESTED_LIMIT:
        return items, cut
    seen = {shape(item) for item in items[:head] + items[len(items) - tail :]}
    distinct = []
    for item in items[head : len(items) - tail]:
        if len(distinct) < middle and shape(item) not in seen:
            seen.add(shape(item))
            distinct.append(item)
    dropped = len(items) - head - tail - len(distinct)
    note = marker(dropped, len(items), "items", key)
    return [*items[:head], *distinct, note, *items[len(items) - tail :]], cut + dropped


def compress(part: Part, ctx: Context) -> Result | None:
    """Crush the arrays of a JSON output; None when it is not one (it does not parse)."""
    text = main_text(part)
    found = json_body(text) if text else None
    if found is None:
        return None
    before, body, after = found
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if nested_deeper(value, DEPTH_LIMIT):
        return None
    key = cache_key(text, NAME)
    crushed, cut = crush(value, KEEP[ctx.tier], key)
    if not cut:
        return None
    shortened = before + orjson.dumps(crushed).decode() + after
    if not worth_cutting(text, shortened):
        return None
    return Result(part=with_main_text(part, shortened), originals=(Original(key, text),))
