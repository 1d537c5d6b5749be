"""Files modified: edit/write/patch tools, patch parts, and shell commands that write,
move or delete files."""

from __future__ import annotations

import posixpath

import msgspec

from deepmem.extractors.calls import Timeline, ToolCall
from deepmem.extractors.patches import patch_targets
from deepmem.extractors.shell import command_writes

PATH_TOOLS = frozenset({"edit", "write", "multiedit"})
PATCH_TOOLS = frozenset({"patch", "apply_patch"})
SHELL_TOOLS = frozenset({"bash", "shell"})


class FileChange(msgspec.Struct):
    """One file the session changed: how, how often, and at which steps."""

    path: str
    actions: list[str]
    first_step: int
    last_step: int
    times: int = 1


def files_modified(timeline: Timeline) -> list[FileChange]:
    """Every file the session's tool calls changed, in order of first change."""
    changes: dict[str, FileChange] = {}
    scripts: dict[str, str] = {}
    for call in timeline.calls:
        if call.status == "error":
            continue
        for path, action in call_writes(call, scripts):
            _record(changes, project_path(path, call.cwd, timeline.root), action, call.step)
    return list(changes.values())


def call_writes(call: ToolCall, scripts: dict[str, str]) -> list[tuple[str, str]]:
    """(path, action) pairs one tool call changed; paths as the call named them."""
    inputs = call.input
    if call.tool in PATH_TOOLS and isinstance(inputs.get("filePath"), str):
        if call.tool == "write" and isinstance(inputs.get("content"), str):
            scripts[posixpath.normpath(inputs["filePath"])] = inputs["content"]
        return [(inputs["filePath"], "written" if call.tool == "write" else "edited")]
    if call.tool in PATCH_TOOLS:
        text = inputs.get("patchText") or inputs.get("patch") or ""
        return patch_targets(text) if isinstance(text, str) else []
    if call.tool in SHELL_TOOLS and call.command:
        return [(posixpath.join(base, path), action) for path, action, base in command_writes(call.command, scripts)]
    return []


def project_path(path: str, cwd: str, root: str) -> str:
    """A path relative to the project root when it lies inside it, else absolute."""
    full = posixpath.normpath(posixpath.join(cwd or root or "", path))
    if root and (full == root or full.startswith(root.rstrip("/") + "/")):
        return posixpath.relpath(full, root)
    return full


def _record(changes: dict[str, FileChange], path: str, action: str, step: int) -> None:
    change = changes.get(path)
    if change is None:
        changes[path] = FileChange(path, [action], step, step)
        return
    change.times += 1
    change.last_step = step
    if change.actions[-1] != action:
        change.actions.append(action)
