"""Undo compression: every part carrying `metadata.deepmem.part` comes back from CCR."""

from __future__ import annotations

import orjson

from deepmem.ccr import CCRStore
from deepmem.sealed import SealError
from deepmem.types import Message, UnknownKeyError


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
            marker = (part.get("metadata") or {}).get("deepmem") if isinstance(part, dict) else None
            if isinstance(marker, dict) and marker.get("appended"):
                continue
            if isinstance(marker, dict) and isinstance(marker.get("part"), str):
                try:
                    part = orjson.loads(store.get(marker["part"]))
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
