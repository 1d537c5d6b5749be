"""Visible markers: every cut says what was cut, with counts and the CCR key."""

from __future__ import annotations

import re

KEY_PATTERN = re.compile(r"ccr:([0-9a-f]{32})")


def marker(cut: int, total: int, unit: str, key: str) -> str:
    """`[… 812 of 900 lines cut · ccr:<key> · deep_expand to restore]`."""
    return f"[… {cut:,} of {total:,} {unit} cut · ccr:{key} · deep_expand to restore]"


def gap_marker(first: int, last: int) -> str:
    """Marker for one run of cut lines, numbered 1-based in the original (for `--lines A-B`).

    The text it sits in ends with a `marker()` naming the CCR key of the whole original.
    """
    return f"[… lines {first}-{last} cut]"


def chars_marker(cut: int) -> str:
    """Marker for the cut end of one over-long line (the key is in the text's final marker)."""
    return f"[… {cut:,} chars cut]"


def removal_marker(what: str, chars: int, key: str) -> str:
    """Marker for content removed whole: `[… 1 system-reminder block (812 chars) removed · …]`."""
    return f"[… {what} ({chars:,} chars) removed · ccr:{key} · deep_expand to restore]"


def note(text: str) -> str:
    """A bracketed note deepmem adds to a shortened text (e.g. that a read is stale)."""
    return f"[deepmem: {text}]"


def marker_keys(text: str) -> list[str]:
    """Every CCR key named by the markers in a text, in order."""
    return KEY_PATTERN.findall(text)
