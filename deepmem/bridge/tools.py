"""The plugin's tools: memory_search, memory_store, memory_forget and deep_expand."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from deepmem.bridge import features
from deepmem.bridge.protocol import ProtocolError


class SearchArgs(msgspec.Struct):
    """Arguments of memory_search."""

    query: str
    k: int = 5
    scope: str = "all"


class StoreArgs(msgspec.Struct):
    """Arguments of memory_store."""

    text: str
    type: str = "note"
    scope: str = "project"


class ForgetArgs(msgspec.Struct):
    """Arguments of memory_forget."""

    target: str
    scope: str = "project"


class ExpandArgs(msgspec.Struct):
    """Arguments of deep_expand: a CCR key and an optional line range `A-B`."""

    key: str
    lines: str = ""


def run_tool(
    root: str | os.PathLike[str], name: str, args: dict[str, Any], expand: Callable[[str, str], str]
) -> str:
    """The text the model receives for one tool call; ProtocolError for bad names or arguments."""
    memory = features.MEMORY
    try:
        match name:
            case "memory_search":
                a = msgspec.convert(args, SearchArgs)
                hits = features.feature(memory, "search")(root, a.query, k=a.k, scope=a.scope, track=True)
                return str(features.feature(memory, "format_hits")(hits))
            case "memory_store":
                a = msgspec.convert(args, StoreArgs)
                return describe(features.feature(memory, "store")(root, a.text, type=a.type, scope=a.scope))
            case "memory_forget":
                a = msgspec.convert(args, ForgetArgs)
                return describe(features.feature(memory, "forget")(root, a.target, scope=a.scope, yes=True))
            case "deep_expand":
                a = msgspec.convert(args, ExpandArgs)
                return expand(a.key, a.lines)
    except msgspec.ValidationError as exc:
        raise ProtocolError("bad_request", f"{name}: {exc}") from None
    raise ProtocolError("unknown_tool", f"unknown tool {name!r}")


def describe(result: Any) -> str:
    """A memory API answer as one line of text for the model."""
    if isinstance(result, str):
        return result
    return orjson.dumps(result, default=str).decode()
