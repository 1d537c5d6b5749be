"""The tool table: per tool, what kind of output it gives and which compressors see it, what
its input touches and quotes, and whether its output is protected from compression. Every
other list of tools, and the routes of tool outputs, are derived from it."""

from __future__ import annotations

from typing import NamedTuple

from deepmem.toolcalls.code_mode import script_inputs
from deepmem.toolcalls.shell import command_kind
from deepmem.types import Part

READ_ROUTE = ("system_blocks", "file_reads")
SEARCH_ROUTE = ("system_blocks", "search_results")
COMMAND_ROUTE = ("system_blocks", "command_output")


class Tool(NamedTuple):
    """One row of the tool table."""

    kind: str
    """Kind of output (a route key): `read`, `search`, `task`, `skill`, `command`; '' for a
    shell whose kind is read from its command."""
    route: tuple[str, ...] = ()
    """The compressors that see an old output of this kind, in order (modules of
    `deepmem.compressors`); every row of a kind names the same ones."""
    touches: str = ""
    """What its input acts on: `read`, `edit`, `write` or `patch` a file, run a `shell`
    command, or set the `todos` list ('' for nothing)."""
    quotes: tuple[str, ...] = ()
    """How its input may copy earlier output (`deepmem.replay.support`): `replaced` text of an edit,
    the `patch` it applies, the `command` it runs."""
    protected: bool = False
    """Its output is never compressed (a file tool's only confirms the change and carries the
    diagnostics the model reads next)."""
    script: bool = False
    """Its input is a script (`code`) calling the other tools: the commands and patches it
    passes them count as its input's (`deepmem.toolcalls.code_mode`)."""


TOOLS: dict[str, Tool] = {
    "read": Tool("read", READ_ROUTE, "read"),
    "grep": Tool("search", SEARCH_ROUTE),
    "glob": Tool("search", SEARCH_ROUTE),
    "list": Tool("search", SEARCH_ROUTE),
    "task": Tool("task", ("system_blocks", "subagent")),
    "skill": Tool("skill", ("skills",)),
    "bash": Tool("", (), "shell", ("command",)),
    "exec": Tool("", (), "shell", ("command", "patch"), script=True),
    "shell": Tool("command", COMMAND_ROUTE, "shell", ("command",)),
    "edit": Tool("command", COMMAND_ROUTE, "edit", ("replaced",), protected=True),
    "multiedit": Tool("command", COMMAND_ROUTE, "edit", ("replaced",), protected=True),
    "write": Tool("command", COMMAND_ROUTE, "write", protected=True),
    "patch": Tool("command", COMMAND_ROUTE, "patch", ("patch",), protected=True),
    "apply_patch": Tool("command", COMMAND_ROUTE, "patch", ("patch",), protected=True),
    "question": Tool("command", COMMAND_ROUTE, protected=True),
    "todowrite": Tool("command", COMMAND_ROUTE, "todos", protected=True),
    "deep_expand": Tool("command", COMMAND_ROUTE, protected=True),
    "exitplanmode": Tool("command", COMMAND_ROUTE, protected=True),
    "plan_exit": Tool("command", COMMAND_ROUTE, protected=True),
}
"""Tool name → its row (a `memory_*` tool has `MEMORY_TOOL`'s)."""

UNKNOWN_TOOL = Tool("command", COMMAND_ROUTE, quotes=("replaced", "patch", "command"))
"""A tool not named in the table: `command` output, touches nothing, not protected, and its
input read for quotes every way there is."""
MEMORY_PREFIX = "memory_"
"""The memory tools (`memory_store`, `memory_search`, …) all start so."""
MEMORY_TOOL = UNKNOWN_TOOL._replace(protected=True)
"""A memory tool: an unknown tool's row, its output protected (the model relies on it verbatim)."""


def tool_row(tool: str) -> Tool:
    """The table's row for a tool name (`MEMORY_TOOL` for a memory tool, `UNKNOWN_TOOL` for
    another one it does not name)."""
    return TOOLS.get(tool) or (MEMORY_TOOL if tool.startswith(MEMORY_PREFIX) else UNKNOWN_TOOL)


def is_protected_tool(tool: str) -> bool:
    """True for tools whose outputs are never compressed (the table's protected rows, every memory tool)."""
    return tool_row(tool).protected


def kind_routes() -> dict[str, tuple[str, ...]]:
    """Output kind → its compressors, from the table (a kind whose rows disagree is an error)."""
    routes: dict[str, tuple[str, ...]] = {}
    for name, tool in TOOLS.items():
        if tool.kind and routes.setdefault(tool.kind, tool.route) != tool.route:
            raise ValueError(f"tool table: {name} routes kind {tool.kind!r} unlike the rows before it")
    return routes


def tools_that(touches: str) -> frozenset[str]:
    """The tools whose input acts as `touches` says."""
    return frozenset(name for name, tool in TOOLS.items() if tool.touches == touches)


def tool_input(part: Part) -> dict:
    """A tool part's input ({} when it has none), with the commands and patches of a script's."""
    inputs = (part.get("state") or {}).get("input")
    if not isinstance(inputs, dict):
        return {}
    code = inputs.get("code")
    if tool_row(str(part.get("tool", ""))).script and isinstance(code, str):
        return {**inputs, **script_inputs(code)}
    return inputs


def tool_kind(part: Part) -> str:
    """The output kind of a tool part from the table, or for a shell from its command."""
    tool = tool_row(str(part.get("tool", "")))
    if tool.kind:
        return tool.kind
    command = tool_input(part).get("command")
    return command_kind(command) if isinstance(command, str) else "command"
