"""Visible markers: every cut says what was cut, with counts and the CCR key."""

from __future__ import annotations

import re

KEY_PATTERN = re.compile(r"ccr:([0-9a-f]{32})")


def marker(cut: int, total: int, unit: str, key: str) -> str:
    """`[… 812 of 900 lines cut · ccr:<key> · deep_expand to restore]`."""
    return f"[… {cut:,} of {total:,} {unit} cut · ccr:{key} · deep_expand to restore]"


def removal_marker(what: str, chars: int, key: str) -> str:
    """Marker for content removed whole: `[… 1 system-reminder block (812 chars) removed · …]`."""
    return f"[… {what} ({chars:,} chars) removed · ccr:{key} · deep_expand to restore]"


def marker_keys(text: str) -> list[str]:
    """Every CCR key named by the markers in a text, in order."""
    return KEY_PATTERN.findall(text)
