"""Key decisions: sentences where a choice is made ("I'll use…", "going with…", "我决定…"), phrased as `deepmem.phrasing` says."""

from __future__ import annotations

from deepmem.extractors.calls import Timeline
from deepmem.extractors.statements import Statement, find_statements
from deepmem.phrasing import DECISION

ROLES = frozenset({"user", "assistant"})


def find_decisions(timeline: Timeline) -> list[Statement]:
    """Decision sentences from the user and the assistant, oldest first."""
    return find_statements(timeline, DECISION, ROLES)
