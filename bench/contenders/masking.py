"""Observation masking: the newest tool outputs kept, older ones cleared, the cut moved every step or in batches.

A contender is created fresh for each session and asked for the history of each step in
order (in OpenCode's message shape, as the provider would receive it), so stateful
baselines (masking in batches, OpenCode's prune) see the steps as a provider would.
"""

from __future__ import annotations

from deepmem.types import Message

CLEARED = "[output cleared]"
"""What the masking baselines leave in place of a hidden tool output."""


def tool_outputs(history: list[Message]) -> list[tuple[int, int]]:
    """(message index, part index) of every tool part with an output, in order."""
    return [
        (m, p)
        for m, message in enumerate(history)
        for p, part in enumerate(message["parts"])
        if part.get("type") == "tool" and isinstance((part.get("state") or {}).get("output"), str)
    ]


def with_outputs(history: list[Message], replaced: dict[tuple[int, int], str]) -> list[Message]:
    """A copy of the history with the tool outputs at the given places replaced."""
    result = list(history)
    for m in sorted({m for m, _ in replaced}):
        message = history[m]
        parts = [
            {**part, "state": {**part["state"], "output": replaced[m, p]}} if (m, p) in replaced else part
            for p, part in enumerate(message["parts"])
        ]
        result[m] = {**message, "parts": parts}
    return result


class MaskOldOutputs:
    """Keep only the newest `keep` tool outputs; move the cut every `every` steps."""

    frame = 0
    """Tokens it adds before the messages of a request: none."""

    def __init__(self, keep: int = 10, every: int = 1):
        self.name = f"mask-last-{keep}" + ("-sliding" if every == 1 else f"-every-{every}")
        self.keep = keep
        self.every = every
        self.steps = 0
        self.cutoff = 0

    def messages(self, history: list[Message]) -> list[Message]:
        """The history with every tool output before the current cutoff cleared."""
        outputs = tool_outputs(history)
        if self.steps % self.every == 0:
            self.cutoff = max(0, len(outputs) - self.keep)
        self.steps += 1
        return with_outputs(history, dict.fromkeys(outputs[: self.cutoff], CLEARED))
