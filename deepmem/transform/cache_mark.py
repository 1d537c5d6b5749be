"""deepmem's own prompt-cache mark: which part carries it, and how.

A provider that reads its cache only at marked places (Anthropic) lets a request carry 4
marks. OpenCode 1.18.33 uses 3: `system[0]` and the last block of each of the last two
messages (`shared/reference/opencode-1.18.33/cache-breakpoints.md`). The fourth is ours:
the last assistant text part of the model answering now, at or before the boundary the
previous request had. A jump changes only what follows that boundary, so its request
reads everything up to the mark from the cache and writes the rest, where without the
mark it would write every message again. Before the first jump the mark sits on the
session's opening (`opening_parts`): the first answer's last text, which no jump cuts, so
the first jump too reads the first request (the task, often the longest user text) and
that answer from the cache. The jump's own request keeps the mark where the
previous request had it, so it reads the entry written there; the request after it moves
the mark to the new boundary, inside the prefix it reads whole from the jump's entries,
which costs nothing more (a breakpoint bills only the tokens it writes).

OpenCode passes a part's `metadata` on to the provider only for an assistant text part
(as the text block's provider metadata) of a message made by the current provider and
model, and reloads parts from storage at every step; so the mark is set again at every
step, as an edit of that part, and only ever on such a part. A tool part would take two
marks (its call and its result) and a user part none.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from deepmem.types import Message, Part

PROVIDER_KEY = "anthropic"
"""The provider-metadata key OpenCode hands to Anthropic's SDK."""
MARK = {"type": "ephemeral"}
"""A 5-minute mark: a 1-hour one may not follow OpenCode's 5-minute system mark."""
MARK_NAME = "cache_mark"
"""What a part that only carries the mark names as its compressor (its original is kept in CCR
like any compressed part's, so a session restores exactly)."""

Model = tuple[str, str]
"""(provider id, model id)."""
OPENING_STEP = 1
"""The first answer's step: its last text may carry the mark from the start, since the
parts up to it are never cut (`opening_parts`)."""


def carries_mark(part: Part) -> bool:
    """Whether a part carries a cache mark in its provider metadata."""
    metadata = part.get("metadata")
    provider = metadata.get(PROVIDER_KEY) if isinstance(metadata, dict) else None
    return isinstance(provider, dict) and "cacheControl" in provider


def with_mark(part: Part) -> Part:
    """A copy of the part whose provider metadata marks it for the cache (the rest kept)."""
    metadata = part.get("metadata") if isinstance(part.get("metadata"), dict) else {}
    provider = metadata.get(PROVIDER_KEY) if isinstance(metadata.get(PROVIDER_KEY), dict) else {}
    return {**part, "metadata": {**metadata, PROVIDER_KEY: {**provider, "cacheControl": dict(MARK)}}}


def answering_model(message: Message) -> Model | None:
    """The model a message names: the one an assistant message came from, or a user message asks for."""
    info = message["info"]
    if info.get("role") == "assistant":
        provider, model = info.get("providerID"), info.get("modelID")
        return (str(provider), str(model)) if provider and model else None
    asked = info.get("model")
    if isinstance(asked, dict) and asked.get("providerID") and asked.get("modelID"):
        return str(asked["providerID"]), str(asked["modelID"])
    return None


def markable_part(message: Message) -> int | None:
    """Index of the last text part of an assistant message that the provider is sent, or None."""
    if message["info"].get("role") != "assistant":
        return None
    for index in range(len(message["parts"]) - 1, -1, -1):
        part = message["parts"][index]
        if part.get("type") == "text" and not part.get("ignored") and str(part.get("text") or "").strip():
            return index
    return None


class MarkPlaces:
    """Where the mark can sit in one history: per model, the markable parts of its assistant
    messages, and the model each request k = 0…S asks for (the newest named by step k)."""

    def __init__(self, messages: list[Message], message_steps: Sequence[int]):
        count = message_steps[-1] if message_steps else 0
        self.places: dict[Model, list[tuple[int, int, int]]] = {}
        """Model → (step, message index, part index) of each markable part, in order."""
        self.steps: dict[Model, list[int]] = {}
        """Model → the steps of those parts, for bisection."""
        self.request_models: list[Model | None] = [None] * (count + 1)
        for index, (message, step) in enumerate(zip(messages, message_steps, strict=True)):
            named = answering_model(message)
            if named is None:
                continue
            self.request_models[step] = named
            part = markable_part(message)
            if part is not None:
                self.places.setdefault(named, []).append((step, index, part))
                self.steps.setdefault(named, []).append(step)
        for step in range(1, count + 1):
            self.request_models[step] = self.request_models[step] or self.request_models[step - 1]

    def place(self, boundary: int, step: int) -> tuple[int, int, int] | None:
        """(step, message index, part index) of the mark request `step` carries when the previous
        request's boundary was `boundary`: the last markable part of its model at or before it,
        the opening's counted as at every boundary."""
        model = self.request_models[step]
        if model not in self.steps:
            return None
        found = bisect_right(self.steps[model], max(boundary, OPENING_STEP))
        return self.places[model][found - 1] if found else None


def opening_parts(messages: list[Message]) -> tuple[int, frozenset[str]]:
    """The session's opening: index of its first answer and the ids of that answer's parts up to
    its last text (none without one), which every jump leaves as they were first sent.

    Before the first jump nothing is old, so the mark has no old text to sit on; the opening
    gives it one. Keeping those parts (a reasoning part, the text) whole costs a few hundred
    tokens a request; it lets the first jump read the first request from the cache instead of
    writing it again.
    """
    first = next((index for index, message in enumerate(messages) if message["info"].get("role") == "assistant"), None)
    if first is None:
        return len(messages), frozenset()
    last = markable_part(messages[first])
    parts = messages[first]["parts"][: last + 1] if last is not None else []
    return first, frozenset(str(part.get("id", "")) for part in parts)
