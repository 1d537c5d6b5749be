"""One file a tool call changed, and how: the record every reader of tool calls shares."""

from __future__ import annotations

import msgspec


class FileChange(msgspec.Struct, frozen=True, gc=False):
    """A file a call changed: `edited` in place, `written` whole, `created` or `deleted`.

    A move is the destination `written` with `moved_from` set, then the source `deleted`.
    """

    path: str
    action: str
    moved_from: str = ""
