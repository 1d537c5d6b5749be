"""Visible markers: every cut says what was cut, with counts and the CCR key.

A marker shows the first `SHOWN_KEY_CHARS` hex digits of the key, not all 32: the model
reads every marker of the old history at every step, and the full key doubles a
marker's tokens. 64 bits tell the originals of one project apart (two of a million
share a prefix with odds of about 1 in 37 million); `CCRStore` resolves the shown key to
the stored one and refuses an ambiguous one. The part metadata keeps whole keys.
"""

from __future__ import annotations

import re

KEY_CHARS = 32
"""Hex digits of a whole CCR key (xxh3-128)."""
SHOWN_KEY_CHARS = 16
KEY_PATTERN = re.compile(rf"ccr:([0-9a-f]{{{SHOWN_KEY_CHARS},{KEY_CHARS}}})")


def shown_key(key: str) -> str:
    """The part of a CCR key that markers show."""
    return key[:SHOWN_KEY_CHARS]


def marker(cut: int, total: int, unit: str, key: str) -> str:
    """`[… 812 of 900 lines cut · ccr:<shown key> · deep_expand to restore]`."""
    return f"[… {cut:,} of {total:,} {unit} cut · ccr:{shown_key(key)} · deep_expand to restore]"


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
    return f"[… {what} ({chars:,} chars) removed · ccr:{shown_key(key)} · deep_expand to restore]"


def note(text: str) -> str:
    """A bracketed note deepmem adds to a shortened text (e.g. that a read is stale)."""
    return f"[deepmem: {text}]"


def marker_keys(text: str) -> list[str]:
    """Every CCR key (as shown) named by the markers in a text, in order."""
    return KEY_PATTERN.findall(text)
