"""Files looked at: every file the session's calls read or searched in and never changed, ranked by how the work
used them, and the files its searches found.

A file the work read again, that the user named, or whose name an edit quotes (an import, a call into it) is what
the work after a checkpoint most often opens again; then a file that searches found again and again, never opened
yet. The checkpoint names them on one line, paths only.
"""

from __future__ import annotations

import re

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.files import calls_touching, project_path
from deepmem.extractors.requests import find_requests
from deepmem.toolcalls.kinds import TOOLS
from deepmem.toolcalls.paths import file_name

FILE_PATH = re.compile(r"(?:[\w.@-]+/)*[\w@-][\w.@-]*\.[A-Za-z][A-Za-z0-9]{0,7}")
"""A search's `path` that is a file (a name with an extension), not a folder."""
MIN_STEM = 5
"""A file's stem shorter than this (`api`, `main`, `util`) names too much else to tell that an edit quotes it."""
SEARCH_TOOLS = frozenset(name for name, tool in TOOLS.items() if tool.kind == "search")
FOUND = re.compile(r"^\s*((?:[\w.@~-]*/)*[\w@-][\w.@-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?::(?:\d+:?)?)?(?:\s|$)", re.M)
"""A path at the start of a search's output line (`cmd/x.go`, `/abs/x.go:12:`)."""
NO_FILE = re.compile(r"^/(?:dev|proc|sys)/|[<>|&;*?\s]")
"""What no file the work uses looks like: a device (`/dev/null` of a redirect), a shell operator, a pattern."""
EDIT_FIELDS = ("oldString", "newString", "content", "patchText", "patch", "command")
"""Input fields whose text an edit, a write, a patch or a shell command brings into the work."""


class FileLooked(msgspec.Struct, frozen=True):
    """A file read or searched in and never changed: how often, when last, and what else used it."""

    path: str
    times: int
    last_step: int
    named: bool = False
    """The user named it in a request."""
    quoted: bool = False
    """A change the session made (an edit, a write, a patch, a command that changed a file) names it."""
    found: int = 0
    """How many searches found it (for a file never read)."""

    @property
    def uses(self) -> int:
        """How many ways the work used it beyond one look: read again, named by the user, quoted by an edit."""
        return (self.times > 1) + self.named + self.quoted


def files_looked_at(timeline: Timeline) -> tuple[FileLooked, ...]:
    """Files read or searched in and never changed, the most used first, then the most recently looked at; then the
    files searches found and nothing read, the most found first."""
    looked: dict[str, list[int]] = {}
    found: dict[str, list[int]] = {}
    changed: set[str] = set()
    changes: list[str] = []
    for call, touched in calls_touching(timeline):
        if call.tool in SEARCH_TOOLS and call.status == "completed":
            for path in dict.fromkeys(FOUND.findall(call.output)):
                found.setdefault(project_path(path, call.cwd, timeline.root), []).append(call.step)
        if touched.changed:
            changed.update(project_path(path, call.cwd, timeline.root) for path in touched.changed)
            changes += [value for field in EDIT_FIELDS if isinstance(value := call.input.get(field), str)]
        search = call.input.get("path") if not call.command else None
        searched = [search] if isinstance(search, str) and FILE_PATH.fullmatch(search) else []
        for path in {*touched.reads, *searched}:
            looked.setdefault(project_path(path, call.cwd, timeline.root), []).append(call.step)
    asked = "\n".join(request.text for request in find_requests(timeline))
    edits = "\n".join(changes)
    read = sorted((FileLooked(path, len(steps), steps[-1], names(asked, path), names(edits, path))
                   for path, steps in looked.items() if path not in changed and not NO_FILE.search(path)),
                  key=lambda f: (-f.uses, -f.times, -f.last_step, f.path))
    only_found = sorted((FileLooked(path, 0, steps[-1], found=len(steps)) for path, steps in found.items()
                         if path not in changed and path not in looked and not NO_FILE.search(path)),
                        key=lambda f: (-f.found, -f.last_step, f.path))
    return (*read, *only_found)


def names(text: str, path: str) -> bool:
    """True when the text names the file by its name, or by its stem when that is no short word (`render` of
    `render.py` in an import)."""
    name = file_name(path)
    stem = name.rsplit(".", 1)[0]
    spellings = [name, stem] if len(stem) >= MIN_STEM else [name]
    return any(re.search(rf"(?<![\w.-]){re.escape(spelling)}(?![\w-])", text) for spelling in spellings)
