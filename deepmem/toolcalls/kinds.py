"""What kind of output a tool call gives: a file read, a search, or other command output."""

from __future__ import annotations

from deepmem.toolcalls.shell import command_kind
from deepmem.types import Part

TOOL_KINDS: dict[str, str] = {
    "read": "read",
    "grep": "search",
    "glob": "search",
    "list": "search",
    "task": "task",
    "skill": "skill",
}
"""Output kind by tool name; `bash` is classified from its command, other tools are `command`."""


def tool_kind(part: Part) -> str:
    """The output kind of a tool part from its name, or for `bash` from its command."""
    tool = str(part.get("tool", ""))
    if tool in TOOL_KINDS:
        return TOOL_KINDS[tool]
    command = ((part.get("state") or {}).get("input") or {}).get("command") if tool == "bash" else None
    return command_kind(command) if isinstance(command, str) else "command"
