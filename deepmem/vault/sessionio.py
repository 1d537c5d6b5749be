"""Reading and writing sessions: an `opencode export` file, a messages array, or stdin."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import msgspec
import orjson

from deepmem.types import InputError, Message, MessageView
from deepmem.vault.writer import write_given


class Session(msgspec.Struct):
    """A decoded input: the messages plus the envelope they came in (None for a bare array)."""

    messages: list[Message]
    envelope: dict[str, Any] | None = None

    def to_json(self) -> Any:
        """The same shape the input had, with the current messages."""
        if self.envelope is None:
            return self.messages
        return {**self.envelope, "messages": self.messages}


def decode_session(data: bytes, source: str = "input") -> Session:
    """Decode and validate session bytes; raise InputError naming the problem and where."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{source}: invalid JSON: {exc}") from None
    if isinstance(value, list):
        session = Session(messages=value)
    elif isinstance(value, dict) and isinstance(value.get("messages"), list):
        session = Session(messages=value["messages"], envelope=value)
    else:
        raise InputError(
            f"{source}: expected an opencode export ({{info, messages}}) or a messages array"
        )
    validate_messages(session.messages, source)
    return session


def decode_object(data: str | bytes, where: str) -> dict[str, Any]:
    """One JSON object; InputError naming `where` when the data is not one."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a JSON object")
    return value


def validate_messages(messages: list[Any], source: str = "input") -> None:
    """Check each message against the typed view; raise InputError with the message index."""
    for index, message in enumerate(messages):
        try:
            msgspec.convert(message, MessageView)
        except msgspec.ValidationError as exc:
            raise InputError(f"{source}: message {index}: {exc}") from None


def read_session(path: str) -> Session:
    """Read a session from a path or '-' for stdin."""
    if path == "-":
        return decode_session(sys.stdin.buffer.read(), "stdin")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return decode_session(data, path)


def encode_json(value: Any) -> bytes:
    """Deterministic, human-readable JSON bytes (insertion order kept, 2-space indent)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2) + b"\n"


def write_output(data: bytes, out: str | None) -> None:
    """Write to a file atomically, or to stdout when out is None or '-'."""
    if out in (None, "-"):
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    try:
        write_given(Path(out), data)
    except OSError as exc:
        raise InputError(f"{out}: cannot write: {exc.strerror or exc}") from None
