"""Content compressors: pure functions `compress(part, ctx) -> Result | None`, one per module.

`REGISTRY` collects them by name; `ROUTES` is the data table that says which compressors
see which kind of part, in order. The pipeline's dispatch is one lookup in each.
"""

from __future__ import annotations

from deepmem.compressors import reasoning, system_blocks, thinking, tool_errors

REGISTRY = {module.NAME: module for module in (reasoning, system_blocks, thinking, tool_errors)}

ROUTES: dict[str, tuple[str, ...]] = {
    "reasoning": (reasoning.NAME,),
    "text": (system_blocks.NAME, thinking.NAME),
    "tool:error": (tool_errors.NAME,),
    "tool:*": (system_blocks.NAME,),
}

PROTECTED_TOOLS = frozenset({"question", "edit", "write", "todowrite", "deep_expand"})
"""Tools whose outputs are never compressed (plus every `memory_*` tool)."""


def is_protected_tool(tool: str) -> bool:
    """True for tools whose outputs the model relies on verbatim."""
    return tool in PROTECTED_TOOLS or tool.startswith("memory_")


def route_key(part: dict) -> str | None:
    """The ROUTES key for a part, or None when no compressor applies to its kind."""
    kind = part.get("type")
    if kind in ("reasoning", "text"):
        return kind
    if kind != "tool":
        return None
    state = part.get("state") or {}
    if state.get("status") == "error":
        return "tool:error"
    if state.get("status") != "completed" or is_protected_tool(str(part.get("tool", ""))):
        return None
    specific = f"tool:{part.get('tool')}"
    return specific if specific in ROUTES else "tool:*"


def compressors_for(part: dict) -> tuple[str, ...]:
    """Names of the compressors that apply to a part, in order."""
    key = route_key(part)
    return ROUTES.get(key, ()) if key else ()
