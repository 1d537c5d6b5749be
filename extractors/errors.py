"""Errors: failing commands and tool calls, each marked fixed when the same call later
succeeded, or still unresolved."""

from __future__ import annotations

import re

import msgspec
import orjson

from deepmem.extractors.calls import Timeline, ToolCall, unwrap_output
from deepmem.extractors.outcomes import command_key

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
    superseded_step: int = 0
    """Step of a later successful call that moved past it without rerunning it: the same command
    (program and subcommands) with other arguments, or the same tool again; 0 while none."""

    @property
    def resolved(self) -> bool:
        """True when the same call later ran successfully."""
        return self.fixed_step > 0

    @property
    def live(self) -> bool:
        """True while nothing later fixed it or moved past it: the work after it still has to deal with it."""
        return not self.fixed_step and not self.superseded_step


def call_signature(call: ToolCall) -> str:
    """Tool + input with whitespace collapsed: a rerun of the same command matches."""
    if call.command:
        return f"{call.tool}:{' '.join(call.command.split())}"
    return f"{call.tool}:{orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS).decode()}"


def find_errors(timeline: Timeline) -> list[ErrorFinding]:
    """Every distinct failing call, in order of first failure, with its resolution (a call the user
    refused is no error: it is a request, `deepmem.extractors.requests`)."""
    findings: dict[str, ErrorFinding] = {}
    open_by_subject: dict[str, list[ErrorFinding]] = {}
    for call in timeline.calls:
        if call.refused:
            continue
        signature = call_signature(call)
        finding = findings.get(signature)
        if not call.failed:
            if finding is not None and not finding.resolved:
                finding.fixed_step = call.step
            for moved_past in open_by_subject.pop(subject(call), ()):
                moved_past.superseded_step = moved_past.superseded_step or call.step
            continue
        if finding is None or finding.resolved:
            finding = findings[signature] = ErrorFinding(
                signature, call_label(call, timeline.root), key_error_line(call.output), call.exit_code, call.step, call.step
            )
            open_by_subject.setdefault(subject(call), []).append(finding)
            continue
        finding.times += 1
        finding.last_step = call.step
        if finding.superseded_step:
            finding.superseded_step = 0
            open_by_subject.setdefault(subject(call), []).append(finding)
        finding.message = key_error_line(call.output) or finding.message
    return list(findings.values())


def subject(call: ToolCall) -> str:
    """What a call works at, for telling a later call that moved past a failure: a shell command's
    program and subcommands (`go test`), else the tool's name."""
    return f"shell:{command_key(call.command)}" if call.command else f"tool:{call.tool}"


def call_label(call: ToolCall, root: str = "") -> str:
    """A call on one line: its command, `tool path` for a call on one file, else `tool input-json`; paths inside
    the project `root` relative, shortened."""
    path = call.input.get("filePath")
    if call.command:
        text = call.command
    elif isinstance(path, str):
        text = f"{call.tool} {path}"
    else:
        text = f"{call.tool} {orjson.dumps(call.input, option=orjson.OPT_SORT_KEYS).decode()}"
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
