"""Errors: failing commands and tool calls, each marked fixed when the same call later
succeeded, or still unresolved."""

from __future__ import annotations

import re

import msgspec
import orjson

from deepmem.extractors.calls import Timeline, ToolCall, unwrap_output

ERROR_LINE = re.compile(
    r"(?i)^(?:\w+\.)*\w*(?:error|exception|failed|failure)\b|^FAILED |^E\s{2,}\S|\berror:|fatal:|not found|no such file"
)
MAX_LINE = 240


class ErrorFinding(msgspec.Struct):
    """One failing call (repeats folded): its key error line and whether it was fixed."""

    signature: str
    """What identifies a rerun of the same call: tool + whitespace-normalised input."""
    label: str
    """The command (or tool and input) on one line."""
    message: str
    """The most telling line of the output."""
    exit_code: int | None
    first_step: int
    last_step: int
    times: int = 1
    fixed_step: int = 0
    """Step of the later successful rerun; 0 while unresolved."""

    @property
    def resolved(self) -> bool:
        """True when the same call later ran successfully."""
        return self.fixed_step > 0


def call_signature(call: ToolCall) -> str:
    """Tool + input with whitespace collapsed: a rerun of the same command matches."""
    if call.command:
        return f"{call.tool}:{' '.join(call.command.split())}"
    return f"{call.tool}:{orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS).decode()}"


def find_errors(timeline: Timeline) -> list[ErrorFinding]:
    """Every distinct failing call, in order of first failure, with its resolution."""
    findings: dict[str, ErrorFinding] = {}
    for call in timeline.calls:
        signature = call_signature(call)
        finding = findings.get(signature)
        if not call.failed:
            if finding is not None and not finding.resolved:
                finding.fixed_step = call.step
            continue
        if finding is None or finding.resolved:
            findings[signature] = ErrorFinding(
                signature, call_label(call, timeline.root), key_error_line(call.output), call.exit_code, call.step, call.step
            )
            continue
        finding.times += 1
        finding.last_step = call.step
        finding.message = key_error_line(call.output) or finding.message
    return list(findings.values())


def call_label(call: ToolCall, root: str = "") -> str:
    """A call on one line: its command, or `tool input-json` with paths inside the project `root` relative, shortened."""
    text = call.command or f"{call.tool} {orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS).decode()}"
    if root.strip("/") and not call.command:
        text = text.replace(root.rstrip("/") + "/", "")
    return shorten(" ".join(text.split()))


def key_error_line(output: str) -> str:
    """The last line that names an error, else the last non-empty line."""
    lines = [line.strip() for line in unwrap_output(output).splitlines() if line.strip()]
    for line in reversed(lines):
        if ERROR_LINE.search(line):
            return shorten(line)
    return shorten(lines[-1]) if lines else ""


def shorten(text: str) -> str:
    """One line of at most MAX_LINE characters, an ellipsis marking the cut."""
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 1] + "…"
