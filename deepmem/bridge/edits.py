"""The edits the plugin holds: appended parts, and what changed since the last step."""

from __future__ import annotations

from typing import Any

import xxhash
from msgspec import UNSET

from deepmem.bridge.protocol import WireEdit, encode
from deepmem.bridge.session import SessionState


def append_edit(session_id: str, message_id: str, part: dict[str, Any], trailing: bool = False) -> WireEdit:
    """An edit that appends a synthetic part at the end of one message (or after it: `trailing`)."""
    part = {"messageID": message_id, "sessionID": session_id, **part}
    return WireEdit(key=f"append:{part.get('id')}", message=message_id, append=part, trailing=trailing)


def diff_held(state: SessionState, wanted: dict[str, WireEdit]) -> tuple[list[WireEdit], list[str]]:
    """Edits the plugin lacks or holds in another version, and keys it must drop.

    An edit whose part is the very object held last step (parts come from the pipeline's
    memo, never mutated) for the same message and digest is not encoded again.
    """
    edits = []
    for key, edit in wanted.items():
        content, address = edit.append if edit.part is UNSET else edit.part, (edit.message, edit.d)
        known = state.held.get(key)
        if known is not None and known[0] is content and known[1] == address:
            continue
        digest = xxhash.xxh3_64_hexdigest(encode(edit))
        if known is None or known[2] != digest:
            edits.append(edit)
        state.held[key] = (content, address, digest)
    drop = [key for key in state.held if key not in wanted]
    for key in drop:
        del state.held[key]
    return edits, drop
