"""Anthropic's context editing (`clear_tool_uses_20250919`) at its defaults, as a contender.

The rule, from Anthropic's documentation of the strategy: the API edits each request on
its own, before the model sees it, while the client keeps sending the whole history. When
the request's input tokens pass the trigger (100,000), the oldest tool results are
cleared, in order, until only the newest `keep` (3) remain; the tool calls' inputs stay
(`clear_tool_inputs` false), no tool is excluded (`exclude_tools` empty) and there is no
minimum to clear (`clear_at_least` unset). A cleared result is replaced by a short
placeholder; the documentation does not give its text, so `CLEARED` stands in for it.

The input tokens are counted as every request here is billed: the host's frame plus the
history as recorded (the edit is made on what the client sends), in o200k tokens. The
edited request is what the cache sees: clearing one more result rewrites the prefix from
that result on, and the replay bills it so (`deepmem.accounting`).
"""

from __future__ import annotations

from bench.tokens_o200k import TokenCounter
from deepmem.transform.context import request_units
from deepmem.types import Message

TRIGGER_TOKENS = 100_000
"""Input tokens a request must pass before anything is cleared (the default `trigger`)."""
KEEP_RESULTS = 3
"""Tool results kept whole, the newest (the default `keep`)."""
CLEARED = "[tool result cleared]"
"""What stands in place of a cleared tool result."""


def tool_results(history: list[Message]) -> list[tuple[int, int]]:
    """(message index, part index) of every tool part with a result (an output or an error), in order."""
    return [
        (m, p)
        for m, message in enumerate(history)
        for p, part in enumerate(message["parts"])
        if part.get("type") == "tool"
        and any(isinstance((part.get("state") or {}).get(field), str) for field in ("output", "error"))
    ]


def cleared_part(part: dict) -> dict:
    """A tool part whose result (output, or error) is the placeholder."""
    state = part["state"]
    field = "output" if isinstance(state.get("output"), str) else "error"
    return {**part, "state": {**state, field: CLEARED}}


def with_cleared(history: list[Message], places: list[tuple[int, int]]) -> list[Message]:
    """A copy of the history with the tool results at the given places cleared."""
    result = list(history)
    by_message: dict[int, set[int]] = {}
    for m, p in places:
        by_message.setdefault(m, set()).add(p)
    for m, parts in by_message.items():
        message = history[m]
        result[m] = {**message, "parts": [cleared_part(part) if p in parts else part for p, part in enumerate(message["parts"])]}
    return result


class ContextEditing:
    """Every tool result but the newest `keep` cleared from each request whose input passes `trigger` tokens."""

    frame = 0
    """Tokens it adds before the messages of a request: none."""

    def __init__(self, host_frame: int = 0, trigger: int = TRIGGER_TOKENS, keep: int = KEEP_RESULTS):
        self.name = "context-editing"
        self.host_frame = host_frame
        self.trigger = trigger
        self.keep = keep
        self.counter = TokenCounter()

    def input_tokens(self, history: list[Message]) -> int:
        """The request's input tokens as the client sends it: the host's frame and the history."""
        return self.host_frame + sum(self.counter.count_many(request_units(history)[0]))

    def messages(self, history: list[Message]) -> list[Message]:
        """The history as the API edits it: unchanged up to the trigger, past it every result but the newest `keep` cleared."""
        if self.input_tokens(history) <= self.trigger:
            return history
        results = tool_results(history)
        return with_cleared(history, results[: max(0, len(results) - self.keep)])
