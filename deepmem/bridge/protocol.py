"""The wire: one JSON object per line, requests as a tagged union decoded in one place.

A request is `{"id", "op", …}`; a reply is `{"id", "ok": true, …}` or
`{"id", "error": {"code", "message"}}`. The plugin and the engine must speak the same
`PROTOCOL` and carry the same deepmem version (checked by the `hello` handshake).

Incremental transform: the plugin remembers which messages it sent for a session. It
sends `keep` (how many leading messages are unchanged since its last request) with the
chained digest of those messages, then the remaining messages in full, except that a part
already sent with the same transport digest travels as `{"id", "d"}` only. Digests are
the plugin's own (SHA-1 hex of the part's JSON, computed with `node:crypto`); the engine
never recomputes them, it only chains them: `chain[i] = sha1(chain[i-1] + d[i])`.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import orjson

PROTOCOL = 1
"""Bumped whenever the wire format changes."""


class WirePart(msgspec.Struct, forbid_unknown_fields=False):
    """A part: in full (`part` set) or as a reference to one sent before."""

    id: str
    d: str
    part: dict[str, Any] | None = None


class WireMessage(msgspec.Struct):
    """A message after the kept prefix: its info in full, its parts in full or by reference."""

    d: str
    info: dict[str, Any]
    parts: list[WirePart]


class Request(msgspec.Struct, tag_field="op"):
    """Fields every request carries."""

    id: int | str


class Hello(Request, tag="hello"):
    """Version handshake: the first request of every connection."""

    version: str
    protocol: int


class Transform(Request, tag="transform"):
    """`experimental.chat.messages.transform`: the history of one session at one step."""

    session: str
    messages: list[WireMessage]
    keep: int = 0
    keep_digest: str = ""
    compaction: bool = False


class System(Request, tag="system"):
    """`experimental.chat.system.transform`: the system prompt of one LLM request."""

    system: list[str]
    session: str = ""
    context: int = 0
    """The model's context window in tokens (`input.model.limit.context`); 0 when unknown."""


class Compacting(Request, tag="compacting"):
    """`experimental.session.compacting`: OpenCode is about to summarise a session."""

    session: str


class Event(Request, tag="event"):
    """A bus event the plugin forwards (session.created, session.idle, …)."""

    type: str
    session: str = ""


class Tool(Request, tag="tool"):
    """A call of one of the plugin's tools."""

    name: str
    args: dict[str, Any] = {}
    session: str = ""


class Command(Request, tag="command"):
    """A slash command (`/checkpoint`, `/dream`, `/distill`) run before its LLM turn."""

    command: str
    arguments: str = ""
    session: str = ""


class Expand(Request, tag="expand"):
    """An original from CCR, whole or lines `A-B`."""

    key: str
    lines: str = ""


class Stats(Request, tag="stats"):
    """What was saved: one session, or every session this engine saw."""

    session: str = ""


class Shutdown(Request, tag="shutdown"):
    """Reply, then exit."""


AnyRequest = Hello | Transform | System | Compacting | Event | Tool | Command | Expand | Stats | Shutdown
OPS = tuple(kind.__struct_config__.tag for kind in AnyRequest.__args__)


class Envelope(msgspec.Struct):
    """The lenient view used only to report a request that failed to decode."""

    id: Any = None
    op: Any = None


class ProtocolError(Exception):
    """A request the engine answers with an error reply; `code` is machine-readable."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


_decoder = msgspec.json.Decoder(AnyRequest)
_envelope = msgspec.json.Decoder(Envelope)


def decode_request(line: bytes) -> AnyRequest:
    """The one place requests are decoded; ProtocolError (with the id, when readable) otherwise."""
    try:
        return _decoder.decode(line)
    except msgspec.DecodeError as exc:
        first_error = str(exc)
    try:
        envelope = _envelope.decode(line)
    except msgspec.DecodeError:
        raise RequestError(None, "bad_json", f"not a JSON object: {first_error}") from None
    if envelope.op not in OPS:
        known = ", ".join(OPS)
        raise RequestError(envelope.id, "unknown_op", f"unknown op {envelope.op!r} (known: {known})")
    raise RequestError(envelope.id, "bad_request", first_error)


class RequestError(ProtocolError):
    """A ProtocolError raised before the request was decoded, carrying the id if it was readable."""

    def __init__(self, request_id: Any, code: str, message: str):
        super().__init__(code, message)
        self.request_id = request_id if isinstance(request_id, int | str) else None


def ok_reply(request_id: int | str | None, body: dict[str, Any]) -> bytes:
    """`{"id", "ok": true, …}` as one line."""
    return orjson.dumps({"id": request_id, "ok": True, **body}) + b"\n"


def error_reply(request_id: int | str | None, code: str, message: str) -> bytes:
    """`{"id", "error": {"code", "message"}}` as one line."""
    return orjson.dumps({"id": request_id, "error": {"code": code, "message": message}}) + b"\n"


def chain_digest(previous: str, digest: str) -> str:
    """One link of the kept-prefix chain: sha1(previous + digest), hex."""
    return hashlib.sha1((previous + digest).encode("ascii", "replace")).hexdigest()
