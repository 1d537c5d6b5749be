"""What deepmem would have done to recorded sessions: replayed step by step, with and without it.

Every assistant message is one step; the history before it is what OpenCode sent. Each
step's request is counted with deepmem's token estimate (no tokenizer is installed with
the package) as visible units, with and without the transform at the given settings;
cost assumes a warm prompt cache (repeated prefix 0.1×, the rest 1.25×).
"""

from __future__ import annotations

import msgspec

from deepmem.accounting import Meter
from deepmem.context import context_units
from deepmem.history import step_indexes, visible_text
from deepmem.pipeline import Plan, apply_transform, plan_transform
from deepmem.support import step_support
from deepmem.tokens import estimate_tokens
from deepmem.types import Message, Settings


class SessionAudit(msgspec.Struct):
    """One session's figures, without deepmem and with it."""

    session: str
    title: str = ""
    source: str = ""
    steps: int = 0
    tokens_without: int = 0
    """Estimated tokens summed over every step's request."""
    tokens_with: int = 0
    final_without: int = 0
    """Estimated tokens of the last step's request."""
    final_with: int = 0
    cost_without: float = 0.0
    """Warm-cache cost in token units (0.1 per repeated-prefix token, 1.25 per other token)."""
    cost_with: float = 0.0
    quoted_lines: int = 0
    """Lines the steps' tool inputs quote from earlier tool output, summed over steps."""
    quoted_visible: int = 0
    """Of those, the lines still visible in the compressed history each step saw."""
    saved_by: dict[str, int] = {}
    """Estimated tokens each compressor (chain) saved at the last step."""

    def add(self, other: SessionAudit) -> None:
        """Sum another session's figures into this one (used for the total)."""
        for field in ("steps", "tokens_without", "tokens_with", "final_without", "final_with", "quoted_lines", "quoted_visible"):
            setattr(self, field, getattr(self, field) + getattr(other, field))
        self.cost_without += other.cost_without
        self.cost_with += other.cost_with
        for name, tokens in other.saved_by.items():
            self.saved_by[name] = self.saved_by.get(name, 0) + tokens

    @property
    def support(self) -> float:
        """Share of quoted lines still visible (1.0 when nothing was quoted)."""
        return self.quoted_visible / self.quoted_lines if self.quoted_lines else 1.0


class Estimates:
    """deepmem's token estimate per unit, each distinct unit estimated once."""

    def __init__(self) -> None:
        self.known: dict[str, int] = {}

    def counts(self, units: list[str]) -> list[int]:
        """Estimated tokens of each unit."""
        known = self.known
        return [known[unit] if unit in known else known.setdefault(unit, estimate_tokens(unit)) for unit in units]


def saved_by_compressor(history: list[Message], plan: Plan) -> dict[str, int]:
    """Estimated tokens each compressor chain saved in a plan, named as `a+b` when several ran."""
    saved: dict[str, int] = {}
    for edit in plan.edits:
        original = history[edit.message_index]["parts"][edit.part_index]
        names = ((edit.part.get("metadata") or {}).get("deepmem") or {}).get("by") or ["?"]
        gain = estimate_tokens(visible_text(original)) - estimate_tokens(visible_text(edit.part))
        name = "+".join(names)
        saved[name] = saved.get(name, 0) + gain
    return saved


def audit_session(session: str, messages: list[Message], settings: Settings) -> SessionAudit:
    """Replay one session step by step, with and without deepmem."""
    without, with_deepmem, estimates = Meter(), Meter(), Estimates()
    result = SessionAudit(session)
    history: list[Message] = []
    plan = None
    for index in step_indexes(messages):
        history = messages[:index]
        plan = plan_transform(history, settings)
        compressed = apply_transform(history, plan)
        for meter, seen in ((without, history), (with_deepmem, compressed)):
            units = context_units(seen)
            meter.add(units, estimates.counts(units))
        visible, quoted = step_support(history, compressed, messages[index])
        result.quoted_visible += visible
        result.quoted_lines += quoted
    result.steps = without.steps
    result.tokens_without, result.tokens_with = without.tokens, with_deepmem.tokens
    result.final_without, result.final_with = without.final_tokens, with_deepmem.final_tokens
    result.cost_without, result.cost_with = without.warm_cost, with_deepmem.warm_cost
    result.saved_by = saved_by_compressor(history, plan) if plan is not None else {}
    return result


def top_savers(saved_by: dict[str, int], count: int = 3) -> list[tuple[str, int]]:
    """The compressors that saved the most, largest first (ties by name)."""
    return sorted(saved_by.items(), key=lambda item: (-item[1], item[0]))[:count]
