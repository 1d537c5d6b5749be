"""One replay: a recorded session stepped through contenders, each request metered for billing.

Every assistant message is one step; the history before it is what OpenCode sent. A
contender turns that history into what it would send; the request's visible units are
counted (by whichever counter the caller trusts), compared with the contender's previous
request for the prompt cache, and billed after the pause its timestamps show. The lines
the step quotes from earlier tool output (`deepmem.replay.support`) measure support, and what
re-reading those out of view would cost. `deepmem audit`, `python -m bench`,
`python -m bench.runners.replay` and the byte check all step sessions through here.

Each request is billed whole: the frame every contender's request carries before its
messages (the host's system prompt and tool definitions, in tokens), plus what a
contender adds of its own there (deepmem: its tool schemas and its stable block, joined
to the system prompt) and after the messages (deepmem's whisper after a user message,
its nudges after the last one).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Protocol

import msgspec

from deepmem.bill.accounting import Meter
from deepmem.bill.prices import PriceModel
from deepmem.history import message_steps, step_indexes
from deepmem.replay.support import quoted_lines
from deepmem.transform.additions import Additions, passed_ids
from deepmem.transform.context import request_units
from deepmem.transform.jumps import NO_FRAME, RequestFrame, request_pauses, request_times
from deepmem.transform.plan import TransformPlan, apply_transform, plan_transform
from deepmem.types import Message, Settings, Tier


class Contender(Protocol):
    """What a replay steps through: a name, the tokens it adds before the messages of every
    request (its tool schemas, its system text), and the history it sends for a recorded one."""

    name: str
    frame: int

    def messages(self, history: list[Message]) -> list[Message]:
        """The history as this contender sends it."""
        ...


class TokenCounter(Protocol):
    """Counts the tokens of each visible unit."""

    def count_many(self, units: list[str]) -> list[int]:
        """Tokens of each unit."""
        ...


class Uncompressed:
    """The history exactly as recorded."""

    name = "none"
    frame = 0

    def messages(self, history: list[Message]) -> list[Message]:
        """The raw history."""
        return history


WHISPER_PREFIX = "prt_deepmem_whisper_"
"""Id prefix of a whisper part; the user message's id follows."""


class Deepmem:
    """deepmem's transform (plan, edits, nudges appended at the end) at given settings and prices,
    with the whispers and the frame it adds; `request_frame` is what its schedule knows of every
    request besides the messages (as the bridge tells it; by default nothing)."""

    def __init__(
        self,
        settings: Settings,
        tier: Tier | None = None,
        name: str = "deepmem",
        prices: PriceModel | None = None,
        additions: Additions | None = None,
        request_frame: RequestFrame = NO_FRAME,
    ):
        self.name = name
        self.settings = settings
        self.tier = tier
        self.prices = prices
        self.additions = additions or Additions()
        self.frame = self.additions.frame
        self.request_frame = request_frame
        self.seconds: list[float] = []
        self.failures = 0
        self.last: tuple[list[Message], TransformPlan] | None = None
        """The latest history transformed and its plan."""

    def jumps(self, history: list[Message]) -> tuple[int, ...] | None:
        """The schedule to impose on this step (None: the pipeline's own)."""
        return None

    def messages(self, history: list[Message]) -> list[Message]:
        """The history after the transform; times the transform itself."""
        start = time.perf_counter()
        plan = plan_transform(
            history, self.settings, self.tier, prices=self.prices, jumps=self.jumps(history), frame=self.request_frame
        )
        messages = apply_transform(history, plan)
        self.seconds.append(time.perf_counter() - start)
        self.failures += plan.failures
        self.last = history, plan
        passed = passed_ids(history, plan.layout)
        return with_whispers(messages, {key: text for key, text in self.additions.whispers.items() if key not in passed})


def with_whispers(messages: list[Message], whispers: dict[str, str]) -> list[Message]:
    """The messages with each whisper appended to the user message it answers, as the bridge appends it."""
    if not whispers:
        return messages
    result = []
    for message in messages:
        message_id = str(message["info"].get("id", ""))
        text = whispers.get(message_id) if message["info"].get("role") == "user" else None
        if text:
            part = {"id": f"{WHISPER_PREFIX}{message_id}", "type": "text", "text": text, "synthetic": True}
            message = {**message, "parts": [*message["parts"], part]}
        result.append(message)
    return result


class Step(msgspec.Struct, frozen=True):
    """One recorded step: the history its request carried, the message it produced, the pause before it."""

    history: list[Message]
    message: Message
    pause_ms: int


def session_steps(messages: list[Message]) -> Iterator[Step]:
    """Every step of a session, in order, with the pause its timestamps show (0 when unknown)."""
    steps = message_steps(messages)
    pauses = request_pauses(request_times(messages, steps, steps[-1] if steps else 0))
    for index in step_indexes(messages):
        yield Step(messages[:index], messages[index], pauses[steps[index] - 1])


def reread_tokens(history: list[Message], missing: list[str], counter: TokenCounter) -> int:
    """Tokens of the newest tool outputs holding the missing lines: what reading them again costs."""
    outputs = [
        str((part.get("state") or {}).get("output") or "")
        for message in history
        for part in message["parts"]
        if part.get("type") == "tool"
    ]
    found = {next((text for text in reversed(outputs) if line in text), "") for line in missing}
    return sum(counter.count_many(sorted(text for text in found if text)))


def replay_session(
    messages: list[Message], contenders: list[Contender], counter: TokenCounter, frame: int = 0, one_hour: bool = False
) -> dict[str, Meter]:
    """Every contender's meter after replaying all steps of one session, each request carrying
    `frame` tokens before its messages (plus the contender's own), its cache entries kept an
    hour when `one_hour` (as the session's recorded usage shows)."""
    meters = {contender.name: Meter(one_hour=one_hour) for contender in contenders}
    for step in session_steps(messages):
        quoted = quoted_lines(step.history, step.message)
        for contender in contenders:
            units, marks = request_units(contender.messages(step.history))
            seen = "\n".join(units) if quoted else ""
            missing = [line for line in quoted if line not in seen]
            recovery = reread_tokens(step.history, missing, counter) if missing else 0
            meters[contender.name].add(
                units,
                counter.count_many(units),
                len(quoted),
                len(quoted) - len(missing),
                step.pause_ms,
                recovery,
                marks,
                frame + contender.frame,
            )
    return meters
