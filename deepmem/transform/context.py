"""What a provider sees: the visible context of a history, serialized deterministically.

A context is a list of units, one per visible part, in message order: text and reasoning
as they are, a tool call as its name, compact JSON input and output (or error). Parts the
model never sees (step-start, step-finish, patch, snapshot, …) and emptied parts add
nothing. Joined with newlines, the units are the serialized context whose characters the
prefix-stability figure counts; token counts are summed per unit (a provider tokenizes
each content block on its own).
"""

from __future__ import annotations

from deepmem.history import visible_text
from deepmem.transform.cache_mark import carries_mark
from deepmem.types import Message, Part

VISIBLE_TYPES = frozenset({"text", "reasoning", "tool"})


def part_unit(role: str, part: Part) -> str:
    """One part as the provider receives it, prefixed by who said it; '' when invisible."""
    kind = part.get("type")
    if kind not in VISIBLE_TYPES:
        return ""
    body = visible_text(part)
    if not body:
        return ""
    label = f"{role} tool {part.get('tool')}" if kind == "tool" else f"{role} {kind}"
    return f"[{label}]\n{body}"


def context_units(messages: list[Message]) -> list[str]:
    """The visible units of a history, in order."""
    return request_units(messages)[0]


def request_units(messages: list[Message]) -> tuple[list[str], tuple[int, ...]]:
    """The visible units of a history, and where a provider that reads its cache only at
    marks may read up to, as unit counts: the ends of its last two messages that show
    anything (OpenCode marks the last two messages of a request to Anthropic), and the end
    of any part that carries a mark of its own (`deepmem.transform.cache_mark`)."""
    units: list[str] = []
    ends: list[int] = []
    marked: list[int] = []
    for message in messages:
        role = message["info"]["role"]
        before = len(units)
        for part in message["parts"]:
            if unit := part_unit(role, part):
                units.append(unit)
                if carries_mark(part):
                    marked.append(len(units))
        if len(units) > before:
            ends.append(len(units))
    return units, tuple(sorted({*marked, *ends[-2:]}))
