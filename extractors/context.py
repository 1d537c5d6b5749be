"""Critical context: the files read that the work is on, the commands that worked, and the code names in play.

What the work after a checkpoint picks up again, from what the tools did:

- files only read (never changed) that the agent had in hand: read within the last
  `RECENT_STEPS` steps, or named by a request or an open todo item; the newest touch first;
- commands whose newest run succeeded, one per program and subcommands (`go test`,
  `git diff`), the most used first, each in its latest spelling;
- code names (`ShadowBranchName`, `base_commit`: camelCase, CamelCase or snake_case, 8
  characters or more) from the text of the edits, writes and patches (a shell command that
  changes a file among them: `sed -i`, a heredoc), the todo list and the
  latest requests, the newest first, each with the file its newest edit changed.
"""

from __future__ import annotations

import re
from collections import Counter

import msgspec

from deepmem.extractors.calls import Timeline, ToolCall
from deepmem.extractors.errors import call_label
from deepmem.extractors.files import calls_touching, project_path
from deepmem.extractors.outcomes import command_key
from deepmem.extractors.progress import latest_todos
from deepmem.extractors.requests import find_requests
from deepmem.toolcalls.paths import file_name
from deepmem.toolcalls.touches import TODO_TOOLS, call_touches
from deepmem.vault.secret_rules import has_word_structure

PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|(?<![\w/.-])[\w-]+\.(?:py|js|ts|tsx|rs|go|java|rb|c|h|cpp|toml|json|ya?ml|md|cfg|ini|txt|sh)\b")
CODE_NAME = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[a-z0-9][A-Z]|_[A-Za-z0-9])[A-Za-z0-9_]*\b(?!\.\w{1,4}\b)")
"""A code name: a word with a capital after a lower-case letter or digit, or with an underscore (not the
stem of a file name, `test_parser.py`)."""
MIN_CODE_NAME = 8
"""Shorter names (`getId`, `to_str`) are too common to say what is being worked on."""
NAME_FIELDS = ("oldString", "newString", "content", "patchText", "patch")
"""Input fields of the file tools that hold code."""
RECENT_STEPS = 20
"""A file read within this many steps of the checkpoint is still in hand."""
LATEST_REQUESTS = 3
"""Code names come from the newest requests after the first (the first sets the task and often holds pasted material)."""
MAX_READS = 10
MAX_COMMANDS = 10
MAX_NAMES = 36
COMMAND_CHARS = 120
DONE = ("completed", "cancelled")


class FileRead(msgspec.Struct, frozen=True):
    """A file only read: how often, when last, and whether a request or the todo list named it."""

    path: str
    times: int
    last_step: int
    named: bool = False


class CriticalContext(msgspec.Struct, frozen=True):
    """What the work after a checkpoint picks up again."""

    reads: tuple[FileRead, ...] = ()
    commands: tuple[tuple[str, int], ...] = ()
    """(latest spelling, successful runs) of each command that worked."""
    names: tuple[tuple[str, str], ...] = ()
    """(code name, the file its newest edit changed, '' when none), newest first."""


def find_context(timeline: Timeline) -> CriticalContext:
    """The files read in hand, the commands that worked and the code names in play."""
    return CriticalContext(files_read(timeline), working_commands(timeline), code_names(timeline))


def files_read(timeline: Timeline) -> tuple[FileRead, ...]:
    """Files read and never changed, still in hand or named by the user or the todo list; newest touch first."""
    reads: dict[str, list[int]] = {}
    changed: set[str] = set()
    for call, touched in calls_touching(timeline):
        changed.update(project_path(path, call.cwd, timeline.root) for path in touched.changed)
        for path in touched.reads:
            reads.setdefault(project_path(path, call.cwd, timeline.root), []).append(call.step)
    named_text = "\n".join([*(r.text for r in find_requests(timeline)), *open_todos(timeline)])
    found = []
    for path, steps in reads.items():
        if path in changed:
            continue
        named = re.search(rf"(?<![\w.-]){re.escape(file_name(path))}(?![\w-])", named_text) is not None
        if named or timeline.steps - steps[-1] < RECENT_STEPS:
            found.append(FileRead(path, len(steps), steps[-1], named))
    found.sort(key=lambda read: (-read.last_step, read.path))
    return tuple(found[:MAX_READS])


def open_todos(timeline: Timeline) -> list[str]:
    """The items of the newest todo list not done yet."""
    return [todo.content for todo in latest_todos(timeline) if todo.status not in DONE]


def open_items(call: ToolCall) -> list[str]:
    """The items of one todo-list call not done yet."""
    todos = call.input.get("todos")
    return [str(item.get("content", "")) for item in todos if isinstance(item, dict) and item.get("status") not in DONE] \
        if isinstance(todos, list) else []


def working_commands(timeline: Timeline) -> tuple[tuple[str, int], ...]:
    """Commands whose newest run succeeded, one per program and subcommands, the most run first."""
    latest: dict[str, str] = {}
    runs: Counter[str] = Counter()
    order: dict[str, int] = {}
    for call in timeline.calls:
        key = command_key(call.command) if call.command else ""
        if not key:
            continue
        if call.failed or call.refused or call.status == "error":
            latest.pop(key, None)
            continue
        latest[key] = call_label(call)
        runs[key] += 1
        order[key] = call.index
    ranked = sorted(latest, key=lambda key: (-runs[key], -order[key]))
    return tuple((latest[key][:COMMAND_CHARS], runs[key]) for key in ranked[:MAX_COMMANDS])


def code_names(timeline: Timeline) -> tuple[tuple[str, str], ...]:
    """Code names from edits, the todo list and the requests, newest first, with the file of their newest edit."""
    newest: dict[str, tuple[int, str]] = {}
    for call in timeline.calls:
        if call.status == "error":
            continue
        if call.tool in TODO_TOOLS:
            note_names(newest, "\n".join(open_items(call)), call.step, "")
            continue
        touched = call_touches(call.tool, call.input)
        # A file a call only deletes holds none of the call's code names (`rm -rf build && echo DONE_MARKER`).
        changed = [path for path in touched.changed if path not in touched.deletes]
        where = project_path(changed[0], call.cwd, timeline.root) if changed else ""
        fields = ("command",) if call.command else NAME_FIELDS
        if where or not call.command:
            note_names(newest, "\n".join(str(call.input.get(field) or "") for field in fields), call.step, where)
    for request in find_requests(timeline)[1:][-LATEST_REQUESTS:]:
        note_names(newest, request.text, request.step, "")
    ranked = sorted(newest.items(), key=lambda item: (-item[1][0], item[0]))
    return tuple((name, where) for name, (_, where) in ranked[:MAX_NAMES])


def note_names(newest: dict[str, tuple[int, str]], text: str, step: int, where: str) -> None:
    """Record the code names of a text as seen at `step`, in `where` (an edit's file keeps its place over '')."""
    for name in set(CODE_NAME.findall(text)):
        if len(name) >= MIN_CODE_NAME and has_word_structure(name):
            newest[name] = (step, where or newest.get(name, (0, ""))[1])

