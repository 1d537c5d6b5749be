"""The tool table: per tool, what kind of output it gives, what it touches, and whether its
output is protected from compression. Every other list of tools is derived from it."""

from __future__ import annotations

from typing import NamedTuple

from deepmem.toolcalls.shell import command_kind
from deepmem.types import Part


class Tool(NamedTuple):
    """One row of the tool table."""

    kind: str
    """Kind of output (a route key): `read`, `search`, `task`, `skill`, `command`; '' for a
    shell whose kind is read from its command."""
    touches: str = ""
    """What its input acts on: `read`, `edit`, `write` or `patch` a file, or run a `shell`
    command ('' for nothing)."""
    protected: bool = False
    """Its output is never compressed (a file tool's only confirms the change and carries the
    diagnostics the model reads next)."""


TOOLS: dict[str, Tool] = {
    "read": Tool("read", "read"),
    "grep": Tool("search"),
    "glob": Tool("search"),
    "list": Tool("search"),
    "task": Tool("task"),
    "skill": Tool("skill"),
    "bash": Tool("", "shell"),
    "shell": Tool("command", "shell"),
    "edit": Tool("command", "edit", protected=True),
    "multiedit": Tool("command", "edit", protected=True),
    "write": Tool("command", "write", protected=True),
    "patch": Tool("command", "patch", protected=True),
    "apply_patch": Tool("command", "patch", protected=True),
    "question": Tool("command", protected=True),
    "todowrite": Tool("command", protected=True),
    "deep_expand": Tool("command", protected=True),
}
"""Tool name → its row; a tool not named here gives `command` output, touches nothing and is not
protected (every `memory_*` tool is protected besides, see `compressors.is_protected_tool`)."""


def tools_that(touches: str) -> frozenset[str]:
    """The tools whose input acts as `touches` says."""
    return frozenset(name for name, tool in TOOLS.items() if tool.touches == touches)


PROTECTED_TOOLS = frozenset(name for name, tool in TOOLS.items() if tool.protected)
"""Tools whose outputs are never compressed."""


def tool_kind(part: Part) -> str:
    """The output kind of a tool part from the table, or for a shell from its command."""
    tool = TOOLS.get(str(part.get("tool", "")))
    if tool is None:
        return "command"
    if tool.kind:
        return tool.kind
    command = ((part.get("state") or {}).get("input") or {}).get("command")
    return command_kind(command) if isinstance(command, str) else "command"
