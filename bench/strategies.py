"""What each contender sends at a step: deepmem at some settings, or a masking baseline.

A strategy is created fresh for each session and asked for the context of each step in
order, so stateful baselines (masking in batches) see the steps as a provider would.
"""

from __future__ import annotations

import time

import msgspec

from deepmem.context import context_units
from deepmem.pipeline import apply_transform, plan_transform
from deepmem.types import Message, Settings, Tier

CLEARED = "[output cleared]"
"""What the masking baselines leave in place of a hidden tool output."""


class Uncompressed:
    """The history exactly as recorded."""

    name = "none"

    def context(self, history: list[Message]) -> list[str]:
        """Visible units of the raw history."""
        return context_units(history)


class Deepmem:
    """deepmem's transform (plan, edits, nudges appended at the end) at given settings."""

    def __init__(self, settings: Settings, tier: Tier | None = None, name: str = "deepmem"):
        self.name = name
        self.settings = settings
        self.tier = tier
        self.seconds: list[float] = []
        self.failures = 0

    def context(self, history: list[Message]) -> list[str]:
        """Visible units after the transform; times the transform itself."""
        start = time.perf_counter()
        plan = plan_transform(history, self.settings, self.tier)
        messages = apply_transform(history, plan)
        self.seconds.append(time.perf_counter() - start)
        self.failures += plan.failures
        return context_units(messages)


class MaskOldOutputs:
    """Keep only the newest `keep` tool outputs; move the cut every `every` steps."""

    def __init__(self, keep: int = 10, every: int = 1):
        self.name = f"mask-last-{keep}" + ("-sliding" if every == 1 else f"-every-{every}")
        self.keep = keep
        self.every = every
        self.steps = 0
        self.cutoff = 0

    def context(self, history: list[Message]) -> list[str]:
        """Visible units with every tool output before the current cutoff cleared."""
        outputs = [
            (m, p)
            for m, message in enumerate(history)
            for p, part in enumerate(message["parts"])
            if part.get("type") == "tool" and isinstance((part.get("state") or {}).get("output"), str)
        ]
        if self.steps % self.every == 0:
            self.cutoff = max(0, len(outputs) - self.keep)
        self.steps += 1
        hidden: dict[int, set[int]] = {}
        for m, p in outputs[: self.cutoff]:
            hidden.setdefault(m, set()).add(p)
        masked = list(history)
        for m, parts in hidden.items():
            message = history[m]
            masked[m] = {
                **message,
                "parts": [_cleared(part) if i in parts else part for i, part in enumerate(message["parts"])],
            }
        return context_units(masked)


def _cleared(part: dict) -> dict:
    """A tool part whose output is replaced by the CLEARED placeholder."""
    return {**part, "state": {**part["state"], "output": CLEARED}}


def grid_settings(base: Settings, points: list[tuple[int, int]]) -> list[Deepmem]:
    """One deepmem contender per (tail_steps, batch_steps) point."""
    return [
        Deepmem(msgspec.structs.replace(base, tail_steps=tail, batch_steps=batch), name=f"tail{tail}-batch{batch}")
        for tail, batch in points
    ]
