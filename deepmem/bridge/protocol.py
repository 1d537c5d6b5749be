"""The wire: one JSON object per line, requests and replies as Structs encoded in one place.

A request is `{"id", "op", …}`, a tagged union decoded by one decoder; a reply is
`{"id", "ok": true, …}` or `{"id", "error": {"code", "message"}}`, one Struct per op encoded by
one encoder. The plugin and the engine must speak the same `PROTOCOL` and carry the same
deepmem version (checked by the `hello` handshake). The `hello` reply also carries what the
plugin registers in OpenCode (its tools with their argument schemas, the slash commands it
answers), so the plugin holds transport only and every policy lives on this side.

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
from msgspec import UNSET, UnsetType

from deepmem.types import SavedTotals

PROTOCOL = 2
"""Bumped whenever the wire format changes (2: `hello` names the tools and commands)."""


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
    model: dict[str, Any] = {}
    """The model's `id`, `providerID`, `cost` (dollars per million tokens: input, cache read/write),
    `npm` (its AI SDK package) and `limit` (`context`, `input`, `output` in tokens, 0 when not given)."""


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


class Reply(msgspec.Struct):
    """Fields every successful reply starts with; the server sets `id` to the request's."""

    id: int | str | None = None
    ok: bool = True


class ToolSchema(msgspec.Struct):
    """One tool the plugin registers: its name, what the model reads about it, its arguments.

    `parameters` is the JSON Schema of an object (`properties`, `required`).
    """

    name: str
    description: str
    parameters: dict[str, Any]


class PluginRules(msgspec.Struct):
    """Rules of the engine the plugin applies on its own side, taken from the handshake."""

    trailing_prefix: str
    """A trailing message's id: this prefix and the id of the part it holds."""
    trailing_info: list[str]
    """What a trailing message takes from the info of the message it follows."""
    compaction_suffix: str
    """Appended to a session id for the state of OpenCode's compaction copy of its history."""


class HelloReply(Reply):
    """The handshake passed: the engine's versions and what the plugin registers."""

    version: str = ""
    protocol: int = PROTOCOL
    pid: int = 0
    tools: list[ToolSchema] = []
    commands: list[str] = []
    """Slash commands answered in `command.execute.before` (without the `/`)."""
    rules: PluginRules | UnsetType = UNSET
    warning: str | UnsetType = UNSET
    """Set when config.toml is unusable and the defaults are used."""


class WireEdit(msgspec.Struct, omit_defaults=True):
    """An edit the plugin holds and re-applies every step, addressed by `key`.

    Either `part` replaces the part `key` of `message` while that part's transport digest
    is still `d`, or `append` adds a synthetic part to `message` (`trailing`: in a user
    message of its own after the last one).
    """

    key: str
    message: str
    d: str | UnsetType = UNSET
    part: dict[str, Any] | UnsetType = UNSET
    append: dict[str, Any] | UnsetType = UNSET
    trailing: bool = False


class TransformReply(Reply):
    """The edits the plugin lacks, the keys it must drop, and where the session stands."""

    edits: list[WireEdit] = []
    drop: list[str] = []
    step: int = 0
    boundary: int = 0
    tier: str = ""


class SystemReply(Reply):
    """Blocks to append to the system prompt (none for side requests)."""

    append: list[str] = []


class CompactingReply(Reply):
    """OpenCode's summary prompt and context, and the checkpoint files written."""

    prompt: str | None = None
    context: list[str] = []
    written: list[str] = []
    problem: str = ""


class EventReply(Reply):
    """An event was taken in; `toast` is a one-time line for the user."""

    toast: str | UnsetType = UNSET


class ToolReply(Reply):
    """The text the model receives from a tool call."""

    output: str = ""


class CommandReply(Reply):
    """A slash command's one-line result."""

    result: str = ""


class ExpandReply(Reply):
    """An original from CCR."""

    text: str = ""


class StatsReply(Reply):
    """Saved totals per session."""

    sessions: dict[str, SavedTotals] = {}


class ShutdownReply(Reply):
    """The engine stops after this reply."""


class ErrorBody(msgspec.Struct):
    """What went wrong: a machine-readable code and a line for people."""

    code: str
    message: str


class ErrorReply(msgspec.Struct):
    """A request that failed; no exception ever crosses the bridge."""

    id: int | str | None
    error: ErrorBody


AnyReply = (
    HelloReply
    | TransformReply
    | SystemReply
    | CompactingReply
    | EventReply
    | ToolReply
    | CommandReply
    | ExpandReply
    | StatsReply
    | ShutdownReply
    | ErrorReply
)
_encoder = msgspec.json.Encoder()


def encode(value: Any) -> bytes:
    """The one JSON encoding of what the engine sends (replies and their parts)."""
    return _encoder.encode(value)


def encode_reply(reply: AnyReply) -> bytes:
    """One reply as one line."""
    return _encoder.encode(reply) + b"\n"


def error_reply(request_id: int | str | None, code: str, message: str) -> ErrorReply:
    """`{"id", "error": {"code", "message"}}`."""
    return ErrorReply(request_id, ErrorBody(code, message))


def chain_digest(previous: str, digest: str) -> str:
    """One link of the kept-prefix chain: sha1(previous + digest), hex."""
    return hashlib.sha1((previous + digest).encode("ascii", "replace")).hexdigest()
