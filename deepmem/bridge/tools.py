"""The plugin's tools: memory_search, memory_store, memory_forget and deep_expand.

Each tool's arguments are one Struct: it decodes the call here, and its JSON Schema (the
Struct's docstring is the tool's description, each field's `Meta` its argument's) is what
the `hello` reply hands the plugin to register the tool in OpenCode. So a tool's name,
text and arguments are written once, on this side.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any, Literal

import msgspec
import orjson
from msgspec import Meta

from deepmem.bridge import features
from deepmem.bridge.protocol import ProtocolError, ToolSchema
from deepmem.memory.entries import EntryType

Scope = Literal["project", "global"]


class SearchArgs(msgspec.Struct):
    """Search deepmem's project and global memory (decisions, constraints, gotchas, facts, notes)."""

    query: Annotated[str, Meta(description="what to look for")]
    k: Annotated[int, Meta(ge=1, le=50, description="how many hits (default 5)")] = 5
    scope: Annotated[Literal["all", "project", "global"], Meta(description="where to search (default all)")] = "all"


class StoreArgs(msgspec.Struct):
    """Store a durable memory for later sessions: a decision, constraint, gotcha, fact or note."""

    text: Annotated[str, Meta(description="the memory, one or two self-contained sentences")]
    type: EntryType = "note"
    scope: Annotated[Scope, Meta(description="default project")] = "project"


class ForgetArgs(msgspec.Struct):
    """Remove a stored memory, by its id or by text that matches it."""

    target: Annotated[str, Meta(description="memory id or matching text")]
    scope: Scope = "project"


class ExpandArgs(msgspec.Struct):
    """Restore the original text behind a deepmem marker `[… cut · ccr:KEY · deep_expand to restore]`, whole or a line range."""

    key: Annotated[str, Meta(description="the CCR key from the marker (with or without `ccr:`)")]
    lines: Annotated[str, Meta(description="only lines A-B, 1-based and inclusive, e.g. `120-180`")] = ""


TOOL_ARGS: dict[str, type[msgspec.Struct]] = {
    "memory_search": SearchArgs,
    "memory_store": StoreArgs,
    "memory_forget": ForgetArgs,
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
        case SearchArgs(query=query, k=k, scope=scope):
            hits = features.feature(memory, "search")(root, query, k=k, scope=scope, track=True)
            found = str(features.feature(memory, "format_hits")(hits))
            together = features.optional_feature(memory, "together", root, query, scope)
            return f"{found}\n\nIn past sessions:\n{together}" if together else found
        case StoreArgs(text=text, type=kind_of_entry, scope=scope):
            return describe(features.feature(memory, "store")(root, text, type=kind_of_entry, scope=scope))
        case ForgetArgs(target=target, scope=scope):
            return describe(features.feature(memory, "forget")(root, target, scope=scope, yes=True))
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
