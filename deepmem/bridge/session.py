"""What the engine remembers per session: the latest history, and what the plugin holds."""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UnsetType

from deepmem.bridge.protocol import ProtocolError, Transform, WireEdit, WireMessage, chain_digest
from deepmem.types import InputError, Message, Part, SavedTotals
from deepmem.vault.sessionio import validate_messages


class SessionState(msgspec.Struct):
    """Per-session state of one engine."""

    messages: list[Message] = []
    """The latest history the plugin sent (needed by compaction and slash commands)."""
    digests: list[str] = []
    """Per message, the plugin's transport digest."""
    chain: list[str] = []
    """Per message, the chained digest of the messages up to and including it."""
    parts: dict[str, tuple[str, Part]] = {}
    """Part id → (transport digest, part) for every part of the current history."""
    held: dict[str, tuple[Any, tuple[str, str | UnsetType], str]] = {}
    """Edit key → (its part, (message id, part digest), digest of the whole edit) for every
    edit the plugin holds (it re-applies them every step)."""
    appends: dict[str, WireEdit] = {}
    """Sticky appended parts (the whisper of each user message): edit key → edit."""
    whispered: dict[str, str] = {}
    """User message id → its whisper ('' when none), for every user message already decided."""
    stable_block: str | None = None
    """The system block frozen at the session's first step."""
    created: bool = False
    """The engine saw `session.created` for this session."""
    toasted: bool = False
    context_window: int = 0
    """The window of the model that answers this session's main requests; 0 when unknown."""
    model: dict[str, Any] = {}
    """That model's id, provider and prices as OpenCode passed them; empty when unknown."""
    saved: SavedTotals | None = None
    """Totals of the latest plan: tokens_before, tokens_after, parts, compressed, step."""


def resync(reason: str) -> ProtocolError:
    """The error that makes the plugin resend the whole history in full."""
    return ProtocolError("resync", reason)


def absorb(state: SessionState, request: Transform) -> list[Message]:
    """Rebuild the full history from a (possibly incremental) transform request."""
    keep = request.keep
    if keep < 0 or keep > len(state.messages):
        raise resync(f"kept prefix of {keep} messages, engine holds {len(state.messages)}")
    if keep and state.chain[keep - 1] != request.keep_digest:
        raise resync("kept prefix digest differs from the engine's")
    shrunk = keep < len(state.messages)
    messages = state.messages[:keep]
    digests = state.digests[:keep]
    chain = state.chain[:keep]
    fresh = [rebuild(state, wire) for wire in request.messages]
    try:
        validate_messages(fresh, "transform")
    except InputError as exc:
        raise ProtocolError("bad_request", str(exc)) from None
    for wire, message in zip(request.messages, fresh, strict=True):
        messages.append(message)
        digests.append(wire.d)
        chain.append(chain_digest(chain[-1] if chain else "", wire.d))
    state.messages, state.digests, state.chain = messages, digests, chain
    if shrunk:
        live = {part.get("id") for message in messages for part in message["parts"]}
        state.parts = {key: value for key, value in state.parts.items() if key in live}
    return messages


def rebuild(state: SessionState, wire: WireMessage) -> Message:
    """One message with every referenced part resolved from the part cache."""
    parts: list[Part] = []
    for item in wire.parts:
        if item.part is not None:
            state.parts[item.id] = (item.d, item.part)
            parts.append(item.part)
            continue
        cached = state.parts.get(item.id)
        if cached is None or cached[0] != item.d:
            raise resync(f"part {item.id} referenced but not held with that digest")
        parts.append(cached[1])
    return {"info": wire.info, "parts": parts}


def forget_held(state: SessionState) -> None:
    """After a resync the plugin starts from nothing: it holds no edit and no message."""
    state.held = {}
    state.messages, state.digests, state.chain, state.parts = [], [], [], {}
