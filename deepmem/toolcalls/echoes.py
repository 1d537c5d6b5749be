"""Outputs that repeat a text the agent wrote: an input a tool prints back (a plan it approves),
or a file written earlier that a tool's output names and shows again."""

from __future__ import annotations

from collections.abc import Mapping

from deepmem.toolcalls.kinds import tool_input, tool_row
from deepmem.types import Part

MIN_CHARS = 16
"""Shorter lines (`}`, `## Context`) are in too many texts to say which one is repeated (`deepmem.replay.support`)."""


def output_of(part: Part) -> str:
    """A completed tool call's output ('' for any other part)."""
    state = part.get("state") or {}
    output = state.get("output")
    return output if state.get("status") == "completed" and isinstance(output, str) else ""


def echoes_input(part: Part) -> bool:
    """Whether a tool that touches no file prints back a text of several lines its input
    passed it: the agent wrote that text and may quote it later, as it quotes a file view."""
    output = output_of(part)
    if not output or tool_row(str(part.get("tool", ""))).touches:
        return False
    texts = (value.strip() for value in tool_input(part).values() if isinstance(value, str))
    return any("\n" in text and text in output for text in texts)


def repeated_file(part: Part, written: Mapping[str, str]) -> str | None:
    """The file written earlier (path → text) whose path the output of a tool that touches no
    file names and most of whose lines it shows: that output is a view of the file."""
    output = output_of(part)
    if not output or tool_row(str(part.get("tool", ""))).touches:
        return None
    for path, text in written.items():
        if path in output:
            lines = {line.strip() for line in text.split("\n") if len(line.strip()) >= MIN_CHARS}
            if lines and 2 * sum(line in output for line in lines) > len(lines):
                return path
    return None
