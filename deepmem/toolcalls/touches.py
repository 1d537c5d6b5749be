"""What a tool call touches: the file it shows, the files it changes, the command it runs.

The one place that knows what OpenCode's tools do to files. `read` shows a file from a
line on; `edit` and `multiedit` edit one in place, `write` writes one whole, `patch` and
`apply_patch` change the files their patch names (added, updated, moved, deleted); `bash`
shows a file when one of its lines reads it (`cat`, `nl`, `head`, `sed -n`…) or diffs it
against the working tree (`deepmem.toolcalls.shell.shown_file`), and changes
the files its redirects, `sed -i`, `tee`, `mv`, `cp`, `rm`, `git mv`, patches, heredoc
scripts and Python code write (see `deepmem.toolcalls.shell_writes`); a code-mode script
(`exec`) does what the commands and patches it passes do (`deepmem.toolcalls.code_mode`). Searches (`grep`,
`glob`, `list`, `find`) show no single file and touch nothing here. A tool that touches no file
shows one when its output names a file written earlier and repeats most of its lines (a plan
approved after the agent wrote it: `deepmem.toolcalls.echoes`).

Paths are given as the call names them (joined to a folder a `cd` inside the command
moved to): the call's `workdir` and the project root are the caller's to apply. A call's
status is the caller's to check too.

A command can run a script the session wrote earlier (`python fix.py`, `patch < fix.diff`).
`touches` follows it when given the files known so far (`known`: path → text); the texts
a call writes whole, or an edit leaves in a file known, come back in `Touches.texts` for the
caller to fold into what it knows.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import msgspec

from deepmem.toolcalls.changes import FileChange
from deepmem.toolcalls.echoes import repeated_file
from deepmem.toolcalls.edits import edited_text
from deepmem.toolcalls.kinds import tool_input, tools_that
from deepmem.toolcalls.patches import patch_targets
from deepmem.toolcalls.shell import shown_file
from deepmem.toolcalls.shell_writes import command_writes

READ_TOOLS = tools_that("read")
EDIT_TOOLS = tools_that("edit")
WRITE_TOOLS = tools_that("write")
PATCH_TOOLS = tools_that("patch")
SHELL_TOOLS = tools_that("shell")
FILE_TOOLS = EDIT_TOOLS | WRITE_TOOLS | PATCH_TOOLS
"""Tools made to change files: their input holds what they change, their output only confirms it."""
TODO_TOOLS = tools_that("todos")
"""Tools whose input is the todo list: it names what is being worked on, and touches no file."""
NOTHING: Mapping[str, str] = {}


class Touches(msgspec.Struct, frozen=True, gc=False):
    """What one tool call touches (empty for calls that touch no file)."""

    reads: tuple[str, ...] = ()
    """The file the call's output shows (a `read`, or a shell command that prints a file)."""
    first_line: int = 1
    """The line of the read file its output starts at."""
    changes: tuple[FileChange, ...] = ()
    """Files changed, in the order the call changed them."""
    command: str = ""
    """The shell command run ('' for other tools)."""
    texts: tuple[tuple[str, str], ...] = ()
    """(normalised path, text) of files the call wrote whole, or edited after they were: a later
    command may run them, a later output may repeat them."""

    @property
    def changed(self) -> tuple[str, ...]:
        """Every file changed, whatever the change (a move names both ends)."""
        return tuple(change.path for change in self.changes)

    @property
    def edits(self) -> tuple[str, ...]:
        """Files edited in place or written over."""
        return tuple(change.path for change in self.changes if change.action in ("edited", "written"))

    @property
    def creates(self) -> tuple[str, ...]:
        """Files created."""
        return tuple(change.path for change in self.changes if change.action == "created")

    @property
    def deletes(self) -> tuple[str, ...]:
        """Files deleted (a moved file's old path among them)."""
        return tuple(change.path for change in self.changes if change.action == "deleted")

    @property
    def moves(self) -> tuple[tuple[str, str], ...]:
        """(from, to) of files moved."""
        return tuple((change.moved_from, change.path) for change in self.changes if change.moved_from)


def touches(part: dict[str, Any], known: Mapping[str, str] = NOTHING) -> Touches:
    """What a tool part touches (see `call_touches`), or the file written earlier (in `known`)
    that the output of a tool touching no file shows again."""
    shown = repeated_file(part, known) if known else None
    return Touches(**showing((shown, 1))) if shown else call_touches(str(part.get("tool") or ""), tool_input(part), known)


def shows(part: dict[str, Any]) -> tuple[str, int] | None:
    """(path, first line) of the file a tool part's output shows, or None (see `call_shows`)."""
    return call_shows(str(part.get("tool") or ""), tool_input(part))


def call_shows(tool: str, inputs: dict[str, Any]) -> tuple[str, int] | None:
    """(path, first line) of the file a `read`, or a shell command that prints a file, shows."""
    path = inputs.get("filePath")
    if tool in READ_TOOLS and isinstance(path, str):
        offset = inputs.get("offset")
        return path, offset if isinstance(offset, int) and offset > 0 else 1
    command = inputs.get("command")
    if tool in SHELL_TOOLS and isinstance(command, str):
        return shown_file(command)
    return None


def call_touches(tool: str, inputs: dict[str, Any], known: Mapping[str, str] = NOTHING) -> Touches:
    """What a call of `tool` with `inputs` touches; `known` holds the texts of files written before."""
    path = inputs.get("filePath")
    if tool in READ_TOOLS:
        return Touches(**showing(call_shows(tool, inputs)))
    if tool in WRITE_TOOLS and isinstance(path, str):
        content = inputs.get("content")
        texts = ((posixpath.normpath(path), content),) if isinstance(content, str) else ()
        return Touches(changes=(FileChange(path, "written"),), texts=texts)
    if tool in EDIT_TOOLS and isinstance(path, str):
        return Touches(changes=(FileChange(path, "edited"),), texts=edited_texts(path, inputs, known))
    if tool in PATCH_TOOLS:
        text = inputs.get("patchText") or inputs.get("patch") or ""
        return Touches(changes=patch_changes(text)) if isinstance(text, str) else Touches()
    command, patch = inputs.get("command"), inputs.get("patchText")
    if tool in SHELL_TOOLS and isinstance(command, str):
        touched = command_touches(command, known, call_shows(tool, inputs))
        return with_patch(touched, patch) if isinstance(patch, str) else touched
    if tool in SHELL_TOOLS and isinstance(patch, str):
        return Touches(changes=patch_changes(patch))
    return Touches()


def edited_texts(path: str, inputs: dict[str, Any], known: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """(normalised path, text) of a file written earlier after an edit changed it (none for a
    file never written whole, or whose known text lacks what the edit replaces)."""
    key = posixpath.normpath(path)
    text = known.get(key)
    edited = edited_text(text, inputs) if text is not None else None
    return ((key, edited),) if edited is not None else ()


def with_patch(touched: Touches, patch: str) -> Touches:
    """A script's shell touches and the changes of the patch it applies after them."""
    return msgspec.structs.replace(touched, changes=touched.changes + patch_changes(patch))


def patch_changes(text: str) -> tuple[FileChange, ...]:
    """The changes a patch text makes (unified diffs and OpenCode's `*** Begin Patch`)."""
    return tuple(FileChange(path, action) for path, action in patch_targets(text))


def command_touches(command: str, known: Mapping[str, str], source: tuple[str, int] | None) -> Touches:
    """What a shell command touches: the file it shows (`source`), the files it changes."""
    changes, texts, asked = standalone_writes(command)
    if any(path in known for path in asked):
        scripts = dict(known)
        changes = tuple(command_writes(command, scripts))
        texts = tuple((path, text) for path, text in scripts.items() if known.get(path) is not text)
    return Touches(**showing(source), changes=changes, command=command, texts=texts)


class Asked(dict):
    """Known texts that remember which paths the shell reader looked up in them."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def __getitem__(self, key: str) -> str:
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.asked.add(str(key))
        return super().__contains__(key)

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self.asked.add(key)
        return super().get(key, default)

    def pop(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        self.asked.add(key)
        return super().pop(key, default)


@lru_cache(maxsize=16_384)
def standalone_writes(command: str) -> tuple[tuple[FileChange, ...], tuple[tuple[str, str], ...], frozenset[str]]:
    """A command's changes and written texts when no file is known yet, and the paths it looked up
    (scripts it runs, patches it reads): while none of them is known, they hold whatever is.
    Memoized: the facts of every boundary read the whole old history again."""
    scripts = Asked()
    changes = tuple(command_writes(command, scripts))
    return changes, tuple(scripts.items()), frozenset(scripts.asked)


def showing(source: tuple[str, int] | None) -> dict[str, Any]:
    """The `Touches` fields of a file shown from a line on (none when nothing is shown)."""
    return {"reads": (source[0],), "first_line": source[1]} if source is not None else {}
