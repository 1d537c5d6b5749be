"""Facts about a session that compressors may use, computed from the old history only.

Everything here is derived from the messages before the boundary, so the facts (and the
compressed old content) stay the same until the boundary jumps.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from deepmem.toolcalls.paths import by_file_name
from deepmem.toolcalls.touches import touches
from deepmem.transform.working_set import WorkingSetBuilder, input_signature, user_text
from deepmem.types import Facts, Message, Part

NAMED_LINE = re.compile(r'(?m)File "([^"\n]+)", line (\d+)|^([\w./-]+\.\w+):(\d+)[:\s]')


def call_signature(part: dict, signature: str | None) -> str | None:
    """`tool + canonical input + output` of a completed tool call, from its `input_signature`.

    The output is part of the signature: a command run again after an edit (tests before
    and after a fix) is not a duplicate, and its older output stays evidence.
    """
    output = (part.get("state") or {}).get("output")
    return f"{signature}\x00{output}" if signature is not None and isinstance(output, str) else None


@lru_cache(maxsize=16_384)
def named_lines(text: str) -> frozenset[tuple[str, int]]:
    """(path, line) pairs named by tracebacks (`File "x", line 3`) and `path:line:` output."""
    found: set[tuple[str, int]] = set()
    for match in NAMED_LINE.finditer(text):
        path, line = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        found.add((path, int(line)))
    return frozenset(found)


class WorkingFold:
    """The working set folded message by message (with the files each call touches and the
    scripts written so far): all the schedule's whole views and the releases read. A call
    that failed (an edit whose text was not found, a patch that did not apply) changed
    nothing, but the files it tried to change are being worked on."""

    def __init__(self, working: WorkingSetBuilder | None = None) -> None:
        self.step = 0
        self.working = working or WorkingSetBuilder()
        self.texts: dict[str, str] = {}
        """Files written whole so far (path → text), so a command that runs one is followed."""
        self.messages = 0

    def add(self, message: Message) -> None:
        """Fold one message (in history order)."""
        index, self.messages = self.messages, self.messages + 1
        if message["info"]["role"] == "assistant":
            self.step += 1
            self.working.step = self.step
        else:
            self.working.add_request(user_text(message))
        for part in message["parts"]:
            if part.get("type") == "patch":
                for path in part.get("files") or ():
                    self.add_edit(str(path))
            if part.get("type") != "tool":
                continue
            signature = input_signature(part)
            touched = touches(part, self.texts)
            self.working.add_part(part, signature, touched, index, self.step)
            if (part.get("state") or {}).get("status") == "error":
                for path in touched.changed:
                    self.working.add_edit(path)
            else:
                self.texts.update(touched.texts)
                for path in touched.changed:
                    self.add_edit(path)
            self.add_call(part, signature)

    def add_edit(self, path: str) -> None:
        """A file changed at the current step."""
        self.working.add_edit(path)

    def add_call(self, part: Part, signature: str | None) -> None:
        """A tool call folded (nothing more for the working set alone)."""


class FactsBuilder(WorkingFold):
    """Facts folded message by message, so the facts at every boundary come from one pass."""

    def __init__(self, working: WorkingSetBuilder | None = None) -> None:
        super().__init__(working)
        self.edited: dict[str, int] = {}
        self.lines: set[tuple[str, int]] = set()
        self.part_ids: dict[str, list[str]] = {}
        self.newer: dict[str, str] = {}

    def add_edit(self, path: str) -> None:
        """A file changed at the current step: its step is kept for the stale reads."""
        self.edited[path] = self.step
        super().add_edit(path)

    def add_call(self, part: Part, signature: str | None) -> None:
        """The lines a call's output names, and the older copies of a call repeated."""
        state = part.get("state") or {}
        for field in ("output", "error"):
            if isinstance(state.get(field), str):
                self.lines |= named_lines(state[field])
        call = call_signature(part, signature)
        if call is not None:
            older = self.part_ids.setdefault(call, [])
            for part_id in older:
                self.newer[part_id] = str(part.get("callID", ""))
            older.append(str(part.get("id", "")))

    def snapshot(self) -> Facts:
        """The facts of everything added so far."""
        return Facts(
            named_lines=frozenset(self.lines),
            newer_call=dict(self.newer),
            edit_steps=by_file_name(self.edited.items()),
            working_set=self.working.snapshot(),
            whole_views=self.working.whole,
            replaced_runs=frozenset(self.working.replaced),
        )



class WholeViews:
    """For the schedule: per step k, the file views a boundary at k keeps whole
    (`deepmem.transform.working_set`), what a jump there leaves in place. Whole-ness is read `ahead`
    steps later, at the step that jumps to k. Folded message by message, and extended while
    later histories start with the same messages."""

    def __init__(self, working: WorkingSetBuilder, ahead: int) -> None:
        self.working_fold = WorkingFold(working)
        self.ahead = ahead
        self.digests: list[bytes | None] = []
        self.steps: list[int] = []
        self.closed: list[tuple[tuple[int, int, str], ...]] = []
        """Per step before the newest folded one: (view step, message index, part id) of each
        view kept whole once its messages were all in."""
        self.settled: list[int] = []
        """Per step k whose jump reads a step in `closed`: what its views add (final: the sizes
        of steps ≤ k no longer change)."""

    def matches(self, digests: list[bytes | None]) -> bool:
        """Whether this fold is a prefix of a history with these message digests."""
        return None not in self.digests and digests[: len(self.digests)] == self.digests

    def fold(self, message: Message, digest: bytes | None, step: int) -> None:
        """Add one message of step `step` (steps never decrease)."""
        while len(self.closed) < step:
            self.closed.append(self.views())
        self.working_fold.add(message)
        self.digests.append(digest)
        self.steps.append(step)

    def views(self) -> tuple[tuple[int, int, str], ...]:
        """(step, message index, part id) of each view kept whole as of the messages folded so far."""
        working = self.working_fold.working
        working.settle()
        return tuple(
            (self.steps[working.where[part_id]], working.where[part_id], part_id) for part_id in sorted(working.whole)
        )

    def per_step(self, steps: int, extra: Callable[[int, str], int]) -> list[int]:
        """Per step k = 0…steps: the tokens that keeping the views of steps ≤ k whole adds to the
        jump to k (`extra`: what one view adds to its message's probe, by message index and part id),
        a view that left its file's views by k left out (a jump keeps only views of the boundary's
        working set whole, and the pages read within `ahead` steps before it, `deepmem.transform.plan`)."""
        seen = [*self.closed, self.views()]
        dropped = self.working_fold.working.dropped

        def added(k: int) -> int:
            views = seen[min(k + self.ahead, len(seen) - 1)]
            return sum(extra(index, part_id) for step, index, part_id in views
                       if step <= k and (k < dropped.get(part_id, k + 1) or step >= k - self.ahead))

        while len(self.settled) < min(len(self.closed) - self.ahead, steps + 1):
            self.settled.append(added(len(self.settled)))
        return self.settled[: steps + 1] + [added(k) for k in range(len(self.settled), steps + 1)]
