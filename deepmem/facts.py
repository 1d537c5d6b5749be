"""Facts about a session that compressors may use, computed from the old history only.

Everything here is derived from the messages before the boundary, so the facts (and the
compressed old content) stay the same until the boundary jumps.
"""

from __future__ import annotations

import re

import orjson

from deepmem.types import Facts, Message

EDIT_TOOLS = frozenset({"edit", "write", "multiedit", "patch", "apply_patch"})
NAMED_LINE = re.compile(r'(?m)File "([^"\n]+)", line (\d+)|^([\w./-]+\.\w+):(\d+)[:\s]')


def call_signature(part: dict) -> str | None:
    """`tool + canonical input` of a completed tool call, or None for other parts."""
    if part.get("type") != "tool":
        return None
    state = part.get("state") or {}
    if state.get("status") != "completed":
        return None
    try:
        canonical = orjson.dumps(state.get("input"), option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        return None
    return f"{part.get('tool')}\x00{canonical}"


def named_lines(text: str) -> set[tuple[str, int]]:
    """(path, line) pairs named by tracebacks (`File "x", line 3`) and `path:line:` output."""
    found: set[tuple[str, int]] = set()
    for match in NAMED_LINE.finditer(text):
        path, line = (match.group(1), match.group(2)) if match.group(1) else (match.group(3), match.group(4))
        found.add((path, int(line)))
    return found


def compute_facts(old: list[Message]) -> Facts:
    """Facts from the old messages: edited files, named lines, superseded duplicate calls."""
    edited: dict[str, int] = {}
    lines: set[tuple[str, int]] = set()
    calls_by_signature: dict[str, list[tuple[str, str]]] = {}
    step = 0
    for message in old:
        if message["info"]["role"] == "assistant":
            step += 1
        for part in message["parts"]:
            if part.get("type") == "patch":
                for path in part.get("files") or ():
                    edited[str(path)] = step
            if part.get("type") != "tool":
                continue
            state = part.get("state") or {}
            inputs = state.get("input") if isinstance(state.get("input"), dict) else {}
            if part.get("tool") in EDIT_TOOLS and isinstance(inputs.get("filePath"), str):
                edited[inputs["filePath"]] = step
            for field in ("output", "error"):
                if isinstance(state.get(field), str):
                    lines |= named_lines(state[field])
            signature = call_signature(part)
            if signature is not None:
                calls = calls_by_signature.setdefault(signature, [])
                calls.append((str(part.get("id", "")), str(part.get("callID", ""))))
    newer = {
        part_id: calls[-1][1]
        for calls in calls_by_signature.values()
        for part_id, _ in calls[:-1]
    }
    return Facts(
        edited_paths=frozenset(edited),
        named_lines=frozenset(lines),
        superseded_calls=frozenset(newer),
        newer_call=newer,
        edit_step=edited,
    )
