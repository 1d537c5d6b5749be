"""Reading and replacing the one text field a compressor edits (text, tool output, error)."""

from __future__ import annotations

from deepmem.types import Part


def main_text(part: Part) -> str | None:
    """The part's main text: `text` for text/reasoning, `state.output` or `state.error` for tools."""
    if part.get("type") == "tool":
        state = part.get("state") or {}
        value = state.get("error") if state.get("status") == "error" else state.get("output")
    else:
        value = part.get("text")
    return value if isinstance(value, str) else None


def with_main_text(part: Part, text: str) -> Part:
    """A copy of the part whose main text is replaced."""
    if part.get("type") != "tool":
        return {**part, "text": text}
    state = dict(part["state"])
    state["error" if state.get("status") == "error" else "output"] = text
    return {**part, "state": state}
