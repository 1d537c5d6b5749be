"""Next-step support: of the lines a step's tool inputs quote from earlier tool output, how many it could still see."""

from __future__ import annotations

import re

from deepmem.history import visible_text
from deepmem.types import Message

MIN_QUOTE_CHARS = 16
"""Shorter lines (after stripping) are too common to count as quotes."""
SED_PATTERN = re.compile(r"\bs([/|#,:])((?:\\.|(?!\1).)+?)\1")
"""`s/X/…/` in a shell command: X is quoted from what the agent saw."""


def input_lines(step_message: Message) -> list[str]:
    """Stripped candidate lines of a step's tool inputs: edit `oldString`, command lines, sed patterns."""
    lines: list[str] = []
    for part in step_message["parts"]:
        if part.get("type") != "tool":
            continue
        arguments = (part.get("state") or {}).get("input") or {}
        if not isinstance(arguments, dict):
            continue
        for field in ("oldString", "command"):
            value = arguments.get(field)
            if isinstance(value, str):
                lines.extend(value.splitlines())
        command = arguments.get("command")
        if isinstance(command, str):
            lines.extend(match.group(2) for match in SED_PATTERN.finditer(command))
    return [line.strip() for line in lines if len(line.strip()) >= MIN_QUOTE_CHARS]


def tool_outputs(history: list[Message]) -> str:
    """Every tool output of a history, joined by newlines."""
    return "\n".join(
        output
        for message in history
        for part in message["parts"]
        if part.get("type") == "tool" and isinstance(output := (part.get("state") or {}).get("output"), str)
    )


def step_support(
    raw_history: list[Message], compressed_history: list[Message], step_message: Message
) -> tuple[int, int]:
    """(quoted lines visible in the compressed history, quoted lines): quoted = found verbatim in earlier raw tool output."""
    earlier = tool_outputs(raw_history)
    quoted = [line for line in dict.fromkeys(input_lines(step_message)) if line in earlier]
    if not quoted:
        return 0, 0
    seen = "\n".join(visible_text(part) for message in compressed_history for part in message["parts"])
    return sum(line in seen for line in quoted), len(quoted)
