"""What deepmem would have done to recorded sessions: replayed step by step, with and without it.

Every assistant message is one step; the history before it is what OpenCode sent. Each
step's request is counted with deepmem's token estimate (no tokenizer is installed with
the package) as visible units, with and without the transform at the given settings.
Cost is given under each reported price model (`deepmem.bill.prices.REPORTED`), with the
jumps scheduled for those prices, the cache warm between requests closer than its
lifetime. Each request is billed whole: the frame before its messages (OpenCode's system
prompt and tools, and the user's own, on both sides; deepmem's tool schemas and stable
block on its side, `deepmem.bill.frame`) and deepmem's nudges after them.
"""

from __future__ import annotations

import msgspec

from deepmem.bill.prices import FAMILIES, REPORTED
from deepmem.history import visible_text
from deepmem.part_marks import CompressedMark, part_mark
from deepmem.replay.loop import Deepmem, Uncompressed, replay_session
from deepmem.tokens import estimate_tokens
from deepmem.transform.additions import Additions
from deepmem.transform.cache_mark import MARK_NAME
from deepmem.transform.plan import TransformPlan
from deepmem.types import Message, Settings


class SessionAudit(msgspec.Struct):
    """One session's figures, without deepmem and with it."""

    session: str
    title: str = ""
    source: str = ""
    steps: int = 0
    tokens_without: int = 0
    """Estimated tokens summed over every step's whole request (frame and messages)."""
    tokens_with: int = 0
    final_without: int = 0
    """Estimated tokens of the last step's request."""
    final_with: int = 0
    cost_without: dict[str, float] = {}
    """Warm-cache cost in dollars per price model (`deepmem.bill.prices.REPORTED`)."""
    cost_with: dict[str, float] = {}
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
        for mine, theirs in ((self.cost_without, other.cost_without), (self.cost_with, other.cost_with)):
            for model, cost in theirs.items():
                mine[model] = mine.get(model, 0.0) + cost
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

    def count_many(self, units: list[str]) -> list[int]:
        """Estimated tokens of each unit."""
        known = self.known
        return [known[unit] if unit in known else known.setdefault(unit, estimate_tokens(unit)) for unit in units]


def saved_by_compressor(history: list[Message], plan: TransformPlan) -> dict[str, int]:
    """Estimated tokens each compressor chain saved in a plan, named as `a+b` when several ran."""
    saved: dict[str, int] = {}
    for edit in plan.edits:
        original = history[edit.message_index]["parts"][edit.part_index]
        mark = part_mark(edit.part)
        names = (mark.by if isinstance(mark, CompressedMark) else None) or ["?"]
        if names == [MARK_NAME]:
            continue
        gain = estimate_tokens(visible_text(original)) - estimate_tokens(visible_text(edit.part))
        name = "+".join(names)
        saved[name] = saved.get(name, 0) + gain
    return saved


def audit_session(
    session: str, messages: list[Message], settings: Settings, frame: int = 0, additions: Additions | None = None
) -> SessionAudit:
    """Replay one session step by step, without deepmem and with it under each reported price model,
    each request carrying `frame` tokens before its messages and deepmem's `additions` on its side
    (tokens, support and savers are given for the first)."""
    contenders = [Deepmem(settings, name=name, prices=FAMILIES[name], additions=additions) for name in REPORTED]
    meters = replay_session(messages, [Uncompressed(), *contenders], Estimates(), frame)
    without, first = meters["none"], meters[REPORTED[0]]
    result = SessionAudit(
        session,
        steps=without.steps,
        tokens_without=without.tokens + without.frame_tokens,
        final_without=without.final_tokens + without.final_frame,
    )
    result.tokens_with, result.final_with = first.tokens + first.frame_tokens, first.final_tokens + first.final_frame
    result.quoted_lines, result.quoted_visible = first.quoted, first.quoted_visible
    for name in REPORTED:
        result.cost_without[name], result.cost_with[name] = without.cost(FAMILIES[name]), meters[name].cost(FAMILIES[name])
    result.saved_by = saved_by_compressor(*contenders[0].last) if contenders[0].last else {}
    return result


def top_savers(saved_by: dict[str, int], count: int = 3) -> list[tuple[str, int]]:
    """The compressors that saved the most, largest first (ties by name)."""
    return sorted(saved_by.items(), key=lambda item: (-item[1], item[0]))[:count]
