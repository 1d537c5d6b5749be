"""Next-step support: the lines a step quotes from earlier tool output, and whether it saw them.

A step's tool inputs often copy text from what the agent read before: an edit's
`oldString`, a `sed s/X/…/` pattern, the lines of a command or a heredoc. Such a line
(stripped, at least `MIN_CHARS` long, found verbatim in an earlier tool output) is
*quoted*; it is *supported* when the history that step saw, after compression, still
shows it. Without compression every quoted line is supported by construction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from deepmem.toolcalls.kinds import tool_input, tool_row
from deepmem.transform.context import context_units
from deepmem.types import Message, Part

MIN_CHARS = 16
"""Shorter lines (`}`, `return x`) match everywhere and say nothing about what was seen."""
SED_SUBSTITUTION = re.compile(r"""(?:^|[\s'"])s([/|#,:@!])((?:\\.|(?!\1).)+)\1""")
SED_ESCAPE = re.compile(r"\\(.)")


def sed_patterns(command: str) -> Iterator[str]:
    """The search patterns of `sed s/X/Y/` substitutions in a command, with escapes undone."""
    if "sed" not in command:
        return
    for match in SED_SUBSTITUTION.finditer(command):
        yield SED_ESCAPE.sub(r"\1", match.group(2))


def patch_lines(patch: str) -> Iterator[str]:
    """Context and removed lines of a patch (the lines it expects to find in the file)."""
    for line in patch.split("\n"):
        if line[:1] in (" ", "-") and not line.startswith("---"):
            yield line[1:]


def replaced_lines(inputs: dict) -> Iterator[str]:
    """The lines an edit replaces (`oldString`, of each of its `edits` when it has several)."""
    edits = inputs.get("edits") if isinstance(inputs.get("edits"), list) else [inputs]
    for edit in edits:
        if isinstance(edit, dict) and isinstance(edit.get("oldString"), str):
            yield from edit["oldString"].split("\n")


def applied_patch_lines(inputs: dict) -> Iterator[str]:
    """The lines a patch expects to find (`patchText`)."""
    if isinstance(inputs.get("patchText"), str):
        yield from patch_lines(inputs["patchText"])


def command_lines(inputs: dict) -> Iterator[str]:
    """The lines of a command, and the patterns of its `sed` substitutions."""
    if isinstance(inputs.get("command"), str):
        yield from inputs["command"].split("\n")
        yield from sed_patterns(inputs["command"])


QUOTE_READERS: dict[str, Callable[[dict], Iterator[str]]] = {
    "replaced": replaced_lines,
    "patch": applied_patch_lines,
    "command": command_lines,
}
"""How a tool's input may copy earlier output (the tool table's `quotes`) → the lines to look for."""


def input_lines(part: Part) -> Iterator[str]:
    """Every line of a tool call's input that may copy earlier output."""
    inputs = tool_input(part)
    for way in tool_row(str(part.get("tool", ""))).quotes:
        yield from QUOTE_READERS[way](inputs)


def candidate_lines(message: Message) -> list[str]:
    """Distinct stripped input lines of a step's tool calls, long enough to count."""
    seen: dict[str, None] = {}
    for part in message["parts"]:
        if part.get("type") == "tool":
            for line in input_lines(part):
                stripped = line.strip()
                if len(stripped) >= MIN_CHARS:
                    seen.setdefault(stripped)
    return list(seen)


def tool_outputs(history: list[Message]) -> str:
    """Every tool output and error text of a history, joined."""
    return "\n".join(
        value
        for message in history
        for part in message["parts"]
        if part.get("type") == "tool"
        for value in ((part.get("state") or {}).get("output"), (part.get("state") or {}).get("error"))
        if isinstance(value, str)
    )


def quoted_lines(history: list[Message], step_message: Message) -> list[str]:
    """The lines a step's tool inputs quote verbatim from the tool outputs of `history`."""
    candidates = candidate_lines(step_message)
    if not candidates:
        return []
    outputs = tool_outputs(history)
    return [line for line in candidates if line in outputs]


def visible_count(quoted: list[str], seen: str) -> int:
    """How many quoted lines appear in the text the model saw."""
    return sum(line in seen for line in quoted)


def step_support(
    raw_history: list[Message], compressed_history: list[Message], step_message: Message
) -> tuple[int, int]:
    """(quoted lines visible in the compressed history, quoted lines) for one step: the lines its
    request shows (`deepmem.transform.context.request_units`), as the replay's meters count them."""
    quoted = quoted_lines(raw_history, step_message)
    if not quoted:
        return 0, 0
    return visible_count(quoted, "\n".join(context_units(compressed_history))), len(quoted)
