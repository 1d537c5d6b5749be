"""View uses: when the agent last used each file view, and which views newer ones superseded.

Liveness per view, not per file (`deepmem.transform.working_set` keeps an output in the
working set only while it is in use). A view is used at the step that read it, at every step
whose tool input quotes one of its lines (a line of at least
`deepmem.transform.copied.COPIED_CHARS` characters: an edit's old text, a script's copied
function), and, while it is the newest view of its path, at every step that changes the
file. A view is superseded when a later view of its file shows most of its lines again (the
later one carries them); it is changed when an edit changes lines it shows (the agent quoted
them as the edit's old text): what it shows is no longer the file. A command run is used at
the step that ran it. Everything is folded in history order, so at step k only the steps
before k count.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from deepmem.transform.copied import DIFF_SIGN, LOCATED_LINE, input_strings, long_lines, output_lines


def quoted_lines(inputs: Any) -> set[str]:
    """The long lines of a tool input, each also without a patch sign (`-`, `+`) before it."""
    lines: set[str] = set()
    for text in input_strings(inputs):
        for line in long_lines(text):
            lines.add(line)
            if line[:1] in DIFF_SIGN:
                lines.add(line[1:].strip())
    return lines


def file_lines(output: str) -> frozenset[str]:
    """The long lines of the file a view shows, without the numbers a numbered view puts
    before them (`12\t`, `12: `), so `read` and `sed -n` views of one range show the same lines."""
    return frozenset(LOCATED_LINE.findall(output)) or frozenset(long_lines(output))


def shown_again(older: frozenset[str], newer: frozenset[str]) -> bool:
    """True when a newer view's lines hold most of an older view's file lines."""
    return bool(older) and 2 * len(older & newer) > len(older)


class ViewUses:
    """The uses of every file view, folded step by step."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}
        """Part id → the last step that used the view."""
        self.lines: dict[str, frozenset[str]] = {}
        """Part id → the lines of the file the view shows (`file_lines`)."""
        self.holders: dict[str, list[str]] = {}
        """Long line → part ids of the views that show it, oldest first."""
        self.superseded: dict[str, int] = {}
        """Part id → the step at which a later view of its file showed most of its lines again."""
        self.changed: dict[str, int] = {}
        """Part id → the first step at which an edit changed lines the view shows."""

    def add_view(self, part_id: str, output: str, step: int, older: Iterable[str]) -> None:
        """A view read at `step`; `older`: the part ids of the earlier views of the same file."""
        lines = frozenset(output_lines(output))
        for other in older:
            if shown_again(self.lines.get(other, frozenset()), lines):
                self.superseded.setdefault(other, step)
        self.lines[part_id] = file_lines(output)
        for line in lines:
            self.holders.setdefault(line, []).append(part_id)
        self.used[part_id] = step

    def quote(self, inputs: Any, step: int) -> set[str]:
        """Note the views whose lines a tool input at `step` quotes; returns their part ids."""
        quoted: set[str] = set()
        for line in quoted_lines(inputs):
            quoted.update(self.holders.get(line, ()))
        for part_id in quoted:
            self.used[part_id] = step
        return quoted

    def change(self, part_ids: Iterable[str], step: int) -> None:
        """An edit at `step` changed lines these views show (it quoted them as its old text)."""
        for part_id in part_ids:
            self.changed.setdefault(part_id, step)

    def use(self, part_id: str, step: int) -> None:
        """The view was used at `step` (the newest view of a file changed then)."""
        self.used[part_id] = max(self.used.get(part_id, step), step)
