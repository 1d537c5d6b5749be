"""What each contender sends at a step: deepmem at some settings, or a masking baseline.

A strategy is created fresh for each session and asked for the history of each step in
order (in OpenCode's message shape, as the provider would receive it), so stateful
baselines (masking in batches, OpenCode's prune) see the steps as a provider would.
"""

from __future__ import annotations

import time

import msgspec

from deepmem.context import context_units
from deepmem.pipeline import apply_transform, plan_transform
from deepmem.types import Message, Settings, Tier

CLEARED = "[output cleared]"
"""What the masking baselines leave in place of a hidden tool output."""


class Strategy:
    """A contender: `messages` gives the history it sends; `context` its visible units."""

    name = "strategy"

    def messages(self, history: list[Message]) -> list[Message]:
        """The history as this contender sends it."""
        raise NotImplementedError

    def context(self, history: list[Message]) -> list[str]:
        """Visible units of what this contender sends."""
        return context_units(self.messages(history))


class Uncompressed(Strategy):
    """The history exactly as recorded."""

    name = "none"

    def messages(self, history: list[Message]) -> list[Message]:
        """The raw history."""
        return history


class Deepmem(Strategy):
    """deepmem's transform (plan, edits, nudges appended at the end) at given settings."""

    def __init__(self, settings: Settings, tier: Tier | None = None, name: str = "deepmem"):
        self.name = name
        self.settings = settings
        self.tier = tier
        self.seconds: list[float] = []
        self.failures = 0

    def messages(self, history: list[Message]) -> list[Message]:
        """The history after the transform; times the transform itself."""
        start = time.perf_counter()
        plan = plan_transform(history, self.settings, self.tier)
        messages = apply_transform(history, plan)
        self.seconds.append(time.perf_counter() - start)
        self.failures += plan.failures
        return messages


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


class MaskOldOutputs(Strategy):
    """Keep only the newest `keep` tool outputs; move the cut every `every` steps."""

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


def grid_settings(base: Settings, points: list[tuple[int, int]]) -> list[Deepmem]:
    """One deepmem contender per (tail_steps, batch_steps) point."""
    return [
        Deepmem(msgspec.structs.replace(base, tail_steps=tail, batch_steps=batch), name=f"tail{tail}-batch{batch}")
        for tail, batch in points
    ]
