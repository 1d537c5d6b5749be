"""Content compressors: pure functions `compress(part, ctx) -> Result | None`, one per module.

`REGISTRY` collects them by name; `ROUTES` is the data table that says which compressors
see which kind of part, in order. A part's route keys come from table lookups too
(`TOOL_KINDS`, then `REFINEMENTS`); the pipeline's dispatch is one lookup per key.
"""

from __future__ import annotations

from collections.abc import Callable

from deepmem.compressors import (
    capture,
    command_output,
    duplicates,
    errored_inputs,
    file_reads,
    json_arrays,
    long_inputs,
    prose,
    reasoning,
    search_results,
    skills,
    stale_reads,
    subagent,
    system_blocks,
    thinking,
    tool_errors,
)
from deepmem.compressors.commands import command_kind
from deepmem.compressors.text_fields import main_text
from deepmem.types import Context, Part

MODULES = (
    capture,
    command_output,
    duplicates,
    errored_inputs,
    file_reads,
    json_arrays,
    long_inputs,
    prose,
    reasoning,
    search_results,
    skills,
    stale_reads,
    subagent,
    system_blocks,
    thinking,
    tool_errors,
)
REGISTRY = {module.NAME: module for module in MODULES}

ROUTES: dict[str, tuple[str, ...]] = {
    "reasoning": (reasoning.NAME,),
    "text": (system_blocks.NAME, thinking.NAME, prose.NAME),
    "tool:error": (errored_inputs.NAME, tool_errors.NAME),
    "duplicate": (duplicates.NAME,),
    "read": (system_blocks.NAME, file_reads.NAME),
    "stale-read": (system_blocks.NAME, stale_reads.NAME),
    "search": (system_blocks.NAME, search_results.NAME),
    "json": (json_arrays.NAME, command_output.NAME),
    "command": (system_blocks.NAME, command_output.NAME),
    "task": (system_blocks.NAME, subagent.NAME),
    "skill": (skills.NAME,),
    "input": (long_inputs.NAME,),
    "capture": (capture.NAME,),
}

TOOL_KINDS: dict[str, str] = {
    "read": "read",
    "grep": "search",
    "glob": "search",
    "list": "search",
    "task": "task",
    "skill": "skill",
}
"""Output kind by tool name; `bash` is classified from its command, other tools are `command`."""

PROTECTED_TOOLS = frozenset({"question", "edit", "write", "todowrite", "deep_expand"})
"""Tools whose outputs are never compressed (plus every `memory_*` tool)."""


def is_protected_tool(tool: str) -> bool:
    """True for tools whose outputs the model relies on verbatim."""
    return tool in PROTECTED_TOOLS or tool.startswith("memory_")


def tool_kind(part: Part) -> str:
    """The output kind of a tool part from its name, or for `bash` from its command."""
    tool = str(part.get("tool", ""))
    if tool in TOOL_KINDS:
        return TOOL_KINDS[tool]
    command = ((part.get("state") or {}).get("input") or {}).get("command") if tool == "bash" else None
    return command_kind(command) if isinstance(command, str) else "command"


def is_duplicate(part: Part, ctx: Context) -> bool:
    """A call repeated later with the same input and output."""
    return str(part.get("id", "")) in ctx.facts.newer_call


def is_stale(part: Part, ctx: Context) -> bool:
    """A read of a file edited after it."""
    return stale_reads.edited_after(part, ctx) is not None


def is_json_array(part: Part, ctx: Context) -> bool:
    """Output that is (or looks like) a JSON array."""
    text = main_text(part)
    return bool(text) and json_arrays.json_body(text) is not None


REFINEMENTS: tuple[tuple[str, Callable[[Part, Context], bool], str], ...] = (
    ("*", is_duplicate, "duplicate"),
    ("read", is_stale, "stale-read"),
    ("command", is_json_array, "json"),
    ("search", is_json_array, "json"),
)
"""(kind or `*`, test, refined kind): the first matching row wins."""


def output_key(part: Part, ctx: Context) -> str:
    """The ROUTES key for a completed, unprotected tool output."""
    kind = tool_kind(part)
    for source, test, refined in REFINEMENTS:
        if source in ("*", kind) and test(part, ctx):
            return refined
    return kind


def route_keys(part: Part, ctx: Context) -> tuple[str, ...]:
    """The ROUTES keys that apply to a part, in order (none for user text or pass-through kinds)."""
    kind = part.get("type")
    if kind in ("reasoning", "text"):
        return (kind,)
    if kind != "tool":
        return ()
    status = (part.get("state") or {}).get("status")
    if status == "error":
        return ("tool:error",)
    if status != "completed":
        return ()
    if is_protected_tool(str(part.get("tool", ""))):
        return ("input",)
    return (output_key(part, ctx), "input")


def compressors_for(part: Part, ctx: Context) -> tuple[str, ...]:
    """Names of the compressors that apply to an old part, in order."""
    return tuple(name for key in route_keys(part, ctx) for name in ROUTES[key])


def capture_compressors(part: Part) -> tuple[str, ...]:
    """Names of the compressors for a new output inside the protected tail (capture-time trim)."""
    state = part.get("state") or {}
    if part.get("type") != "tool" or state.get("status") != "completed":
        return ()
    return () if is_protected_tool(str(part.get("tool", ""))) else ROUTES["capture"]
