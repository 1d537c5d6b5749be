"""The plugin's tools: memory_search, memory_store and deep_expand.

Each tool's arguments are one Struct: it decodes the call here, and its JSON Schema (the
Struct's docstring is the tool's description, each field's `Meta` its argument's) is what
the `hello` reply hands the plugin to register the tool in OpenCode. So a tool's name,
text and arguments are written once, on this side.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any

import msgspec
import orjson
from msgspec import Meta

from deepmem.bridge import features
from deepmem.bridge.protocol import ProtocolError, ToolSchema
from deepmem.memory.entries import EntryType
from deepmem.tokens import estimate_tokens


class SearchArgs(msgspec.Struct):
    """Search project memory and past sessions."""

    query: str
    k: Annotated[int, Meta(ge=1, le=50)] = 5


class StoreArgs(msgspec.Struct):
    """Keep a decision, constraint, gotcha or fact for later sessions."""

    text: Annotated[str, Meta(description="one or two self-contained sentences")]
    type: EntryType = "note"


class ExpandArgs(msgspec.Struct):
    """Restore text cut behind a `ccr:KEY` marker, whole or lines A-B."""

    key: str
    lines: Annotated[str, Meta(description="e.g. 120-180")] = ""


TOOL_ARGS: dict[str, type[msgspec.Struct]] = {
    "memory_search": SearchArgs,
    "memory_store": StoreArgs,
    "deep_expand": ExpandArgs,
}


def tool_schemas() -> tuple[ToolSchema, ...]:
    """Every tool as the plugin registers it: name, description and argument schema."""
    _, components = msgspec.json.schema_components(TOOL_ARGS.values())
    schemas = []
    for name, args in TOOL_ARGS.items():
        schema = components[args.__name__]
        parameters = {"type": "object", "properties": schema["properties"], "required": schema.get("required", [])}
        schemas.append(ToolSchema(name=name, description=schema["description"], parameters=parameters))
    return tuple(schemas)


TOOL_SCHEMAS = tool_schemas()
TOOL_SCHEMA_TOKENS = sum(estimate_tokens(msgspec.json.encode(schema).decode()) for schema in TOOL_SCHEMAS)
"""Estimated tokens of the tool schemas, as every request's tool list carries them (the engine's running bill and
`deepmem audit` count them so; the benchmarks count them in o200k)."""


def run_tool(
    root: str | os.PathLike[str], name: str, args: dict[str, Any], expand: Callable[[str, str], str]
) -> str:
    """The text the model receives for one tool call; ProtocolError for bad names or arguments."""
    kind = TOOL_ARGS.get(name)
    if kind is None:
        raise ProtocolError("unknown_tool", f"unknown tool {name!r}")
    try:
        call = msgspec.convert(args, kind)
    except msgspec.ValidationError as exc:
        raise ProtocolError("bad_request", f"{name}: {exc}") from None
    memory = features.MEMORY
    match call:
        case SearchArgs(query=query, k=k):
            hits = features.feature(memory, "search")(root, query, k=k, scope="all", track=True)
            found = str(features.feature(memory, "format_hits")(hits))
            together = features.optional_feature(memory, "together", root, query, "all")
            return f"{found}\n\nIn past sessions:\n{together}" if together else found
        case StoreArgs(text=text, type=kind_of_entry):
            return describe(features.feature(memory, "store")(root, text, type=kind_of_entry, scope="project"))
        case ExpandArgs(key=key, lines=lines):
            return expand(key, lines)
    raise ProtocolError("unknown_tool", f"no handler for tool {name!r}")


def describe(result: Any) -> str:
    """A memory API answer as one line of text for the model."""
    if isinstance(result, str):
        return result
    return orjson.dumps(result, default=str).decode()


def run_command(root: str | os.PathLike[str], command: str, arguments: str, session_id: str, messages: list) -> str:
    """Run a slash command's work on the session's latest history; the model then gets its one-line result."""
    run = features.slash_commands().get(command)
    if run is None:
        raise ProtocolError("not_available", f"/{command} is not available yet")
    return str(run(root, session_id, messages, arguments))
