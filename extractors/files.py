"""Files modified: every file the session's tool calls changed (`deepmem.toolcalls.touches`),
as a path inside the project, with how and when."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

import msgspec

from deepmem.extractors.calls import Timeline, ToolCall
from deepmem.toolcalls.touches import Touches, call_touches


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
    for call, touched in calls_touching(timeline):
        for change in touched.changes:
            _record(changes, project_path(change.path, call.cwd, timeline.root), change.action, call.step)
    return list(changes.values())


def calls_touching(timeline: Timeline) -> Iterator[tuple[ToolCall, Touches]]:
    """Each call that did not fail, with what it touches (the texts of files written before it known)."""
    known: dict[str, str] = {}
    for call in timeline.calls:
        if call.status == "error":
            continue
        touched = call_touches(call.tool, call.input, known)
        known.update(touched.texts)
        yield call, touched


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
