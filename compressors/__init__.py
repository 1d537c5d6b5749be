"""Content compressors: pure functions `compress(part, ctx) -> Result | None`, one per module.

`ROUTES` is the data table that says which compressors see which kind of part, in order;
`REGISTRY` imports every compressor it names. A part's route keys come from table lookups
too (`deepmem.toolcalls.kinds`, then `REFINEMENTS`); the pipeline's dispatch is one lookup per key. The
text helpers the compressors share live in `deepmem.text`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from deepmem.compressors import json_arrays, stale_reads
from deepmem.text.fields import main_text
from deepmem.toolcalls.kinds import is_protected_tool, kind_routes, tool_kind
from deepmem.toolcalls.touches import SHELL_TOOLS
from deepmem.types import Context, Part

ROUTES: dict[str, tuple[str, ...]] = {
    **kind_routes(),
    "reasoning": ("reasoning",),
    "text": ("system_blocks", "thinking", "prose"),
    "tool:error": ("errored_inputs", "tool_errors"),
    "duplicate": ("duplicates",),
    "stale-read": ("system_blocks", "stale_reads"),
    "working": ("system_blocks", "working_outputs"),
    "status": ("system_blocks", "status_runs", "command_output"),
    "json": ("json_arrays", "command_output"),
    "input": ("long_inputs",),
    "capture": ("capture",),
    "capture:shell": ("capture", "long_inputs"),
}
"""Route key → the compressors that see such a part, in order (each names a module of this package): the
output kinds of the tool table (`deepmem.toolcalls.kinds`), then the refined kinds and the other parts."""

REGISTRY = {
    name: importlib.import_module(f"{__name__}.{name}")
    for name in sorted({name for names in ROUTES.values() for name in names})
}
"""Every compressor a route names, by its NAME: the module of that name in this package."""

READS_FACTS = frozenset(name for name, module in REGISTRY.items() if module.READS_FACTS)
"""Compressors whose result depends on the history (`ctx.facts`, `ctx.step`), not only on the
part, tier, settings and the lines its message copied (`ctx.copied`)."""
FACT_FREE = frozenset(REGISTRY) - READS_FACTS
"""Compressors whose result the pipeline may reuse wherever the same part meets the same tier
(and the same copied lines)."""

def is_duplicate(part: Part, ctx: Context) -> bool:
    """A call repeated later with the same input and output."""
    return str(part.get("id", "")) in ctx.facts.newer_call


def is_stale(part: Part, ctx: Context) -> bool:
    """A read of a file edited after it."""
    return stale_reads.edited_after(part, ctx) is not None


def in_working_set(part: Part, ctx: Context) -> bool:
    """An output the agent is still working on (`deepmem.transform.working_set`)."""
    return str(part.get("id", "")) in ctx.facts.working_set


def is_replaced_run(part: Part, ctx: Context) -> bool:
    """A command run that a later run of the same command replaced."""
    return str(part.get("id", "")) in ctx.facts.replaced_runs


def is_json_array(part: Part, ctx: Context) -> bool:
    """Output that is (or looks like) a JSON array."""
    text = main_text(part)
    return bool(text) and json_arrays.json_body(text) is not None


REFINEMENTS: tuple[tuple[str, Callable[[Part, Context], bool], str], ...] = (
    ("read", in_working_set, "working"),
    ("command", in_working_set, "working"),
    ("command", is_replaced_run, "status"),
    ("read", is_stale, "stale-read"),
    ("command", is_json_array, "json"),
    ("search", is_json_array, "json"),
)
"""(kind, test, refined kind): the first matching row wins."""


def output_key(part: Part, ctx: Context) -> str:
    """The ROUTES key for a completed, unprotected tool output."""
    kind = tool_kind(part)
    for source, test, refined in REFINEMENTS:
        if source == kind and test(part, ctx):
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
    keys = (output_key(part, ctx), "input")
    # A repeated call becomes a pointer first; when the pointer would not be shorter, its
    # kind's compressors still apply, so a second pass finds nothing left to do.
    return ("duplicate", *keys) if is_duplicate(part, ctx) else keys


def compressors_for(part: Part, ctx: Context) -> tuple[str, ...]:
    """Names of the compressors that apply to an old part, in order."""
    return tuple(name for key in route_keys(part, ctx) for name in ROUTES[key])


def capture_compressors(part: Part) -> tuple[str, ...]:
    """Names of the compressors for a new output inside the protected tail (capture-time trim)."""
    state = part.get("state") or {}
    if part.get("type") != "tool" or state.get("status") != "completed":
        return ()
    tool = str(part.get("tool", ""))
    if is_protected_tool(tool):
        return ()
    return ROUTES["capture:shell"] if tool in SHELL_TOOLS else ROUTES["capture"]
