"""What the bench's own contenders send at a step: deepmem on the hindsight schedule, or a masking baseline.

A strategy is created fresh for each session and asked for the history of each step in
order (in OpenCode's message shape, as the provider would receive it), so stateful
baselines (masking in batches, OpenCode's prune) see the steps as a provider would.
"""

from __future__ import annotations

import msgspec

from bench.oracle import hindsight_jumps
from deepmem.history import message_steps
from deepmem.jumps import Sizes
from deepmem.pipeline import message_digest, step_sizes
from deepmem.prices import PriceModel
from deepmem.replay import Deepmem
from deepmem.types import Message, Settings

CLEARED = "[output cleared]"
"""What the masking baselines leave in place of a hidden tool output."""


class Hindsight(Deepmem):
    """deepmem with the cheapest schedule of jumps knowing the whole session (`bench.oracle`)."""

    def __init__(self, settings: Settings, prices: PriceModel, session: list[Message]):
        super().__init__(settings, name=f"hindsight@{prices.name}", prices=prices)
        self.schedule = hindsight_jumps(session_sizes(session, settings, prices), settings, prices)

    def jumps(self, history: list[Message]) -> tuple[int, ...]:
        """The hindsight schedule's jumps made by this step."""
        reachable = message_steps(history)[-1] - self.settings.tail_steps if history else 0
        return tuple(jump for jump in self.schedule if jump <= max(reachable, 0))


def session_sizes(messages: list[Message], settings: Settings, prices: PriceModel) -> Sizes:
    """What the schedule weighs over a whole session (as the pipeline measures it)."""
    digests = [message_digest(message) for message in messages]
    return step_sizes(messages, digests, message_steps(messages), settings, prices)


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
    """One deepmem contender per (tail_steps, batch_steps) point of the fixed schedule."""
    return [
        Deepmem(
            msgspec.structs.replace(base, tail_steps=tail, batch_steps=batch, schedule="fixed"),
            name=f"fixed-tail{tail}-batch{batch}",
        )
        for tail, batch in points
    ]
