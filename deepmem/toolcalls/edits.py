"""The text of a file after an edit: each `oldString` replaced by its `newString`."""

from __future__ import annotations

from typing import Any


def edited_text(text: str, inputs: dict[str, Any]) -> str | None:
    """`text` after the edit `inputs` describe (one `oldString`, or a multiedit's `edits`), or
    None when an old string is not in it (the text known is not the file's)."""
    edits = inputs.get("edits") if isinstance(inputs.get("edits"), list) else [inputs]
    for edit in edits:
        old, new = (edit.get("oldString"), edit.get("newString")) if isinstance(edit, dict) else (None, None)
        if not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
            return None
        text = text.replace(old, new) if edit.get("replaceAll") else text.replace(old, new, 1)
    return text
