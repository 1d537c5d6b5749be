"""The vocabulary of DESIGN.md "Words": steps, the protected tail, the boundary."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import orjson

from deepmem.tokens import estimate_tokens
from deepmem.types import Message, Part, Settings, Tier


class Layout(msgspec.Struct, frozen=True):
    """Where each message sits: its step, and which messages are old."""

    step: int
    """The current step: the number of assistant messages in the history."""
    boundary: int
    """Messages before the first assistant message with a step above this are old."""
    message_steps: tuple[int, ...]
    """Per message: its assistant index (1-based), or for a user message the index of the
    assistant message before it (0 when none)."""
    first_young: int
    """Index of the first message that is not old."""
    jumps: tuple[int, ...] = (0,)
    """Every boundary the history has jumped to, in order, from 0 up to `boundary`."""
    rebases: tuple[tuple[int, int], ...] = ()
    """(read step, boundary) of the jumps whose request wrote everything after a point anyway:
    a cold request (read step 0) and, where the cache is read only at marks, every jump (read
    step: the step of the mark it read up to, 0 when none). Each old message after its read
    step is compressed again with that boundary's facts and tier; a later rebase that reaches
    further back replaces an earlier one."""

    @property
    def rebased(self) -> int:
        """The last boundary that compressed every old message again (0 when none)."""
        return max((boundary for read, boundary in self.rebases if read == 0), default=0)

    def rebase_of(self, step: int) -> int:
        """The last boundary that compressed a message of this step again (0 when none)."""
        return max((boundary for read, boundary in self.rebases if read < step or read == 0), default=0)


def message_steps(messages: list[Message]) -> tuple[int, ...]:
    """Per message: its assistant index (1-based), or for a user message the one before it."""
    steps: list[int] = []
    count = 0
    for message in messages:
        if message["info"]["role"] == "assistant":
            count += 1
        steps.append(count)
    return tuple(steps)


def layout(
    messages: list[Message],
    jumps: tuple[int, ...],
    steps: tuple[int, ...] | None = None,
    rebases: tuple[tuple[int, int], ...] = (),
) -> Layout:
    """Number the steps of a history and place its boundary at the last of `jumps`."""
    steps = message_steps(messages) if steps is None else steps
    count = steps[-1] if steps else 0
    boundary = jumps[-1]
    first_young = next(
        (i for i, m in enumerate(messages) if m["info"]["role"] == "assistant" and steps[i] > boundary),
        len(messages),
    )
    return Layout(count, boundary, steps, first_young, jumps, rebases)


def step_indexes(messages: list[Message]) -> Iterator[int]:
    """Index of each assistant message: the history the model saw at that step is messages[:index]."""
    for index, message in enumerate(messages):
        if message["info"]["role"] == "assistant":
            yield index


def is_user_typed(message: Message, part: Part) -> bool:
    """User-typed text: a text part of a user message that OpenCode did not synthesise."""
    return (
        message["info"]["role"] == "user"
        and part.get("type") == "text"
        and not part.get("synthetic", False)
    )


def visible_text(part: Part) -> str:
    """The text of a part that reaches the model (tool input and output, text, reasoning)."""
    kind = part.get("type")
    if kind in ("text", "reasoning"):
        if part.get("ignored"):
            return ""
        text = part.get("text")
        return text if isinstance(text, str) else ""
    if kind == "tool":
        state = part.get("state") or {}
        pieces = [_json_text(state.get("input"))]
        for field in ("output", "error"):
            value = state.get(field)
            if isinstance(value, str):
                pieces.append(value)
        return "\n".join(pieces)
    if kind == "file":
        return str(part.get("filename") or part.get("url") or "")
    return ""


def _json_text(value: Any) -> str:
    """Compact JSON of a tool input, as providers receive it."""
    if value is None:
        return ""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def history_tokens(messages: list[Message]) -> int:
    """Estimated tokens of everything the model would see in this (uncompressed) history."""
    return sum(
        estimate_tokens(visible_text(part)) for message in messages for part in message["parts"]
    )


WHOLE_VIEWS_SHARE = 4
"""File views kept whole take at most this fraction (1/N) of the context window together."""


def whole_view_tokens(settings: Settings) -> int:
    """Tokens the file views kept whole may take together (`deepmem.transform.working_set`): a share of
    the window, or when it is unknown, of the history size at which pressure is highest."""
    return (settings.context_window or settings.tier_high_tokens) // WHOLE_VIEWS_SHARE


def view_cap_tokens(settings: Settings) -> int:
    """The capture cap of a new file view: `capture_cap_tokens`, or the whole views' budget when 0."""
    return settings.capture_cap_tokens or whole_view_tokens(settings)


def tier_for(tokens: int, settings: Settings) -> Tier:
    """The pressure tier for a history size, thresholds lowered for small context windows."""
    medium, high = settings.tier_medium_tokens, settings.tier_high_tokens
    if settings.context_window > 0:
        medium = min(medium, settings.context_window * 25 // 100)
        high = min(high, settings.context_window * 60 // 100)
    if tokens >= high:
        return "high"
    if tokens >= medium:
        return "medium"
    return "low"
