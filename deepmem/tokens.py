"""A fast token estimate, calibrated against o200k counts (see bench/)."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """Estimated o200k tokens of a text: ~4 characters per token for ASCII, 1 per CJK char."""
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return (ascii_chars + 3) // 4 + other
