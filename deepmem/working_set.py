"""The working set: the tool outputs the agent is still working on, decided from the messages.

Folded message by message up to a boundary (like the facts it belongs to), so the set is
the same at every step until the boundary jumps. It holds the part ids of:

- the latest read of each file that was not edited or re-read since (a read of another
  range of the same file counts as a re-read), for project files only: reads under
  vendored or installed trees (`node_modules/`, `site-packages/`, …) never count, unless
  the user or the todo list names the file;
- the latest output of each command the agent ran at least twice (a test it keeps
  re-running).

Compressors keep working-set content whole, or far more of it, at every tier
(`deepmem.compressors.working_outputs`); the rest is cut as before. A read that a re-read
took out of the set is cut at the next jump (`deepmem.pipeline.Frozen.releases`).
"""

from __future__ import annotations

import re

import orjson

from deepmem.toolcalls.paths import file_name, same_file
from deepmem.toolcalls.touches import FILE_TOOLS, shows
from deepmem.types import Message, Part

VENDORED = re.compile(
    r"(?:^|/)(?:node_modules|site-packages|dist-packages|vendor|third_party|\.venv|venv|\.tox|"
    r"__pycache__|\.git|bower_components|\.cargo/registry|go/pkg/mod)/"
    r"|^/usr/(?:lib|include|share)/"
)
UNREPEATED_TOOLS = FILE_TOOLS | {"todowrite"}
"""Tools whose repeated calls are not a command the agent keeps re-running."""
PATH_WORD = re.compile(r"[\w.\-/]+\.\w+")
"""Words of user text or a todo item that look like file names (`app/uploads.py`)."""


def is_vendored(path: str) -> bool:
    """True for files under installed or vendored trees, which the agent reads but rarely edits."""
    return VENDORED.search(path) is not None


def read_path(part: Part) -> str | None:
    """The file a completed read shows: the `read` tool's or a shell read command's."""
    if (part.get("state") or {}).get("status") != "completed":
        return None
    source = shows(part)
    return source[0] if source is not None else None


def input_signature(part: Part) -> str | None:
    """`tool + canonical input` of a completed tool call (None when the input cannot be encoded)."""
    state = part.get("state") or {}
    if state.get("status") != "completed":
        return None
    try:
        return f"{part.get('tool')}\x00{orjson.dumps(state.get('input'), option=orjson.OPT_SORT_KEYS).decode()}"
    except TypeError:
        return None


def named_files(text: str) -> set[str]:
    """File names (last path component) that a user message or todo item mentions."""
    return {file_name(word.rstrip(".")) for word in PATH_WORD.findall(text)}


class WorkingSetBuilder:
    """Working-set signals folded message by message (one pass serves every boundary)."""

    def __init__(self) -> None:
        self.reads: dict[str, list[tuple[str, str]]] = {}
        """File name → (path, part id) of each live read of a file of that name."""
        self.named: set[str] = set()
        self.runs: dict[str, list[str]] = {}
        """Command signature → part ids of its runs, oldest first."""
        self.reread: set[str] = set()
        """Part ids of reads superseded by a newer read of the same file."""
        self.where: dict[str, int] = {}
        """Part id → index of its message in the history, for every read and run seen."""

    def add_named(self, text: str) -> None:
        """Note the files a user message or a todo list names."""
        self.named |= named_files(text)

    def add_read(self, path: str, part_id: str) -> None:
        """A read of a file supersedes every earlier read of it (any range)."""
        views = self.reads.setdefault(file_name(path), [])
        self.reread.update(view[1] for view in views if same_file(view[0], path))
        views[:] = [view for view in views if not same_file(view[0], path)]
        views.append((path, part_id))

    def add_edit(self, path: str) -> None:
        """An edit or write of a file supersedes every read of it: the agent re-reads before relying on it."""
        views = self.reads.get(file_name(path))
        if views:
            views[:] = [view for view in views if not same_file(view[0], path)]

    def add_part(self, part: Part, message_index: int, signature: str | None) -> None:
        """Fold one tool part of the message at `message_index` (`signature`: its `input_signature`)."""
        state = part.get("state") or {}
        inputs = state.get("input") if isinstance(state.get("input"), dict) else {}
        if part.get("tool") == "todowrite":
            self.add_named(orjson.dumps(inputs).decode())
        part_id = str(part.get("id", ""))
        path = read_path(part)
        if path is not None:
            self.add_read(path, part_id)
            self.where[part_id] = message_index
            return
        if signature is not None and part.get("tool") not in UNREPEATED_TOOLS:
            self.runs.setdefault(signature, []).append(part_id)
            self.where[part_id] = message_index

    def snapshot(self) -> frozenset[str]:
        """Part ids of the working set as it stands now."""
        ids = {
            part_id
            for name, views in self.reads.items()
            for path, part_id in views
            if name in self.named or not is_vendored(path)
        }
        ids.update(runs[-1] for runs in self.runs.values() if len(runs) > 1)
        return frozenset(ids)


def user_text(message: Message) -> str:
    """The text a user typed in one message (synthetic parts left out)."""
    if message["info"]["role"] != "user":
        return ""
    return "\n".join(
        part["text"]
        for part in message["parts"]
        if part.get("type") == "text" and not part.get("synthetic") and isinstance(part.get("text"), str)
    )
