"""Constraints: rules the work must respect ("must not…", "never…", "不能…", "必须…")."""

from __future__ import annotations

from deepmem.extractors.calls import Timeline
from deepmem.extractors.statements import Statement, find_statements
from deepmem.phrasing import ASSISTANT_CONSTRAINT, USER_CONSTRAINT


def find_constraints(timeline: Timeline) -> list[Statement]:
    """Constraint sentences, the user's before the assistant's, each group oldest first."""
    users = find_statements(timeline, USER_CONSTRAINT, frozenset({"user"}))
    return users + find_statements(timeline, ASSISTANT_CONSTRAINT, frozenset({"assistant"}))
