"""Reading and replacing the one text field a compressor edits (text, tool output, error)."""

from __future__ import annotations

import re
from collections.abc import Callable

from deepmem.markers import removal_marker
from deepmem.types import Original, Part, Result, cache_key


def main_text(part: Part) -> str | None:
    """The part's main text: `text` for text/reasoning, `state.output` or `state.error` for tools."""
    if part.get("type") == "tool":
        state = part.get("state") or {}
        value = state.get("error") if state.get("status") == "error" else state.get("output")
    else:
        value = part.get("text")
    return value if isinstance(value, str) else None


def with_main_text(part: Part, text: str) -> Part:
    """A copy of the part whose main text is replaced."""
    if part.get("type") != "tool":
        return {**part, "text": text}
    state = dict(part["state"])
    state["error" if state.get("status") == "error" else "output"] = text
    return {**part, "state": state}


def cut_blocks(
    part: Part,
    needle: str,
    pattern: re.Pattern[str],
    name: str,
    describe: Callable[[re.Match[str]], str],
    after: str = "",
) -> Result | None:
    """Replace each match of `pattern` in the main text (if it holds `needle`) by a removal marker (+ `after`); blocks go to CCR."""
    text = main_text(part)
    if not text or needle not in text:
        return None
    originals: list[Original] = []

    def replace(match: re.Match[str]) -> str:
        block = match.group(0)
        key = cache_key(block, name)
        originals.append(Original(key, block))
        return removal_marker(describe(match), len(block), key) + after

    shortened = pattern.sub(replace, text)
    if not originals:
        return None
    return Result(part=with_main_text(part, shortened), originals=tuple(originals))
