"""The message model seen as a timeline: tool calls with their exit status, and prose."""

from __future__ import annotations

import posixpath
import re
from typing import Any

import msgspec

from deepmem.history import is_user_typed
from deepmem.toolcalls.shell import first_program
from deepmem.types import Message

RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
WRAPPER_TAG = re.compile(r"</?(?:returncode|output|output_head|output_tail|warning|elided_chars)>")
NO_MATCH_PROGRAMS = frozenset({"grep", "egrep", "fgrep", "rg", "diff", "cmp", "test", "[", "git"})
"""Programs whose exit status 1 means "no match" or "differs", not a failure."""
REFUSED = re.compile(
    r"^(?:The user rejected permission to use this specific tool call|The user doesn't want to proceed with this tool use"
    r"|The user has specified a rule which prevents you from using this specific tool call"
    r"|Tool execution (?:was )?(?:interrupted|aborted)|\[Request interrupted by user|Permission to use .{1,400} has been denied)"
)
"""Errors that say the user refused or stopped the call (OpenCode's and Claude Code's wording), not that it failed."""
FEEDBACK = re.compile(r"(?:with the following feedback:|To tell you how to proceed, the user said:)\s*(.+)", re.S)
"""Where the words a user gave with a refusal start."""


class ToolCall(msgspec.Struct, frozen=True):
    """One tool call: where it happened, what it was asked, and how it ended."""

    index: int
    """Position among the session's tool calls (0-based)."""
    step: int
    """Assistant index (1-based) of the message holding the call."""
    tool: str
    input: dict[str, Any]
    output: str
    status: str
    exit_code: int | None
    cwd: str
    """The directory the call ran in (the project root when unknown)."""

    @property
    def command(self) -> str:
        """The shell command of a bash call ('' for other tools)."""
        value = self.input.get("command")
        return value if isinstance(value, str) else ""

    @property
    def refused(self) -> bool:
        """True when the user rejected or interrupted the call: nothing ran, and nothing failed."""
        return self.status == "error" and REFUSED.match(self.output.lstrip()) is not None

    @property
    def feedback(self) -> str:
        """What the user said when refusing the call ('' when nothing)."""
        match = FEEDBACK.search(self.output) if self.refused else None
        return match.group(1).strip() if match else ""

    @property
    def failed(self) -> bool:
        """True for an errored call or a non-zero exit that is not a plain "no match"."""
        if self.status == "error":
            return True
        if not self.exit_code:
            return False
        return not (self.exit_code == 1 and first_program(self.command) in NO_MATCH_PROGRAMS)


class Prose(msgspec.Struct, frozen=True):
    """A text part written by the user (typed, not synthetic) or by the assistant."""

    step: int
    role: str
    text: str


class Timeline(msgspec.Struct, frozen=True):
    """Everything the extractors read, in session order."""

    calls: tuple[ToolCall, ...]
    prose: tuple[Prose, ...]
    root: str
    """The project root the session worked in ('' when unknown)."""
    steps: int


def build_timeline(messages: list[Message]) -> Timeline:
    """Walk the messages once, collecting tool calls and prose."""
    calls: list[ToolCall] = []
    prose: list[Prose] = []
    step = 0
    root = ""
    for message in messages:
        info = message.get("info") or {}
        role = info.get("role")
        if role == "assistant":
            step += 1
            path = info.get("path") if isinstance(info.get("path"), dict) else {}
            root = str(path.get("root") or path.get("cwd") or root)
        for part in message.get("parts") or ():
            kind = part.get("type")
            if kind == "tool":
                calls.append(_tool_call(part, len(calls), step, root))
            elif kind == "text" and isinstance(part.get("text"), str) and not part.get("ignored"):
                if role == "assistant" or is_user_typed(message, part):
                    prose.append(Prose(step, str(role), part["text"]))
    return Timeline(tuple(calls), tuple(prose), root, step)


def _tool_call(part: dict[str, Any], index: int, step: int, root: str) -> ToolCall:
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    raw_input = state.get("input")
    inputs = raw_input if isinstance(raw_input, dict) else {}
    status = str(state.get("status") or "")
    output = state.get("output") if status != "error" else state.get("error")
    text = output if isinstance(output, str) else ""
    workdir = inputs.get("workdir")
    cwd = posixpath.join(root, workdir) if isinstance(workdir, str) and workdir else root
    return ToolCall(index, step, str(part.get("tool") or ""), inputs, text, status, exit_code(state, text), cwd)


def exit_code(state: dict[str, Any], output: str) -> int | None:
    """The exit status from `metadata.exit`, else from a `<returncode>` wrapper, else None."""
    metadata = state.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("exit"), int):
        return metadata["exit"]
    match = RETURNCODE.search(output, 0, 200)
    return int(match.group(1)) if match else None


def unwrap_output(output: str) -> str:
    """Tool output without the `<returncode>`/`<output>` wrappers some harnesses add."""
    return WRAPPER_TAG.sub("", output)
