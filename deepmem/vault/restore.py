"""Undo compression: every part carrying `metadata.deepmem.part` comes back from CCR."""

from __future__ import annotations

import orjson

from deepmem.part_marks import AppendedMark, CompressedMark, part_mark
from deepmem.types import Message, UnknownKeyError
from deepmem.vault.ccr import CCRStore
from deepmem.vault.sealed import SealError


def restore_messages(messages: list[Message], store: CCRStore, unsealed: list[str] | None = None) -> list[Message]:
    """The original messages, exactly; UnknownKeyError names the first part that cannot return.

    Parts deepmem appended (nudges, marked `metadata.deepmem.appended`) are dropped, and a
    message left empty by that (the trailing message that carries them) with them. An
    original that cannot be unsealed (key lost or another, file altered) raises SealError,
    or, given an `unsealed` list, leaves its part as compressed and adds the reason there.
    """
    result = []
    for index, message in enumerate(messages):
        parts = []
        for part in message["parts"]:
            mark = part_mark(part)
            if isinstance(mark, AppendedMark):
                continue
            if isinstance(mark, CompressedMark):
                try:
                    part = orjson.loads(store.get(mark.part))
                except SealError as exc:
                    if unsealed is None:
                        raise
                    unsealed.append(f"message {index}, part {part.get('id')}: {exc}")
                except UnknownKeyError as exc:
                    raise UnknownKeyError(f"message {index}, part {part.get('id')}: {exc}") from None
            parts.append(part)
        if parts or not message["parts"]:
            result.append({**message, "parts": parts})
    return result
