"""Constraints: rules the work must respect ("must not…", "never…", "不能…", "必须…")."""

from __future__ import annotations

import re

from deepmem.extractors.calls import Timeline
from deepmem.extractors.statements import Statement, find_statements

USER_CONSTRAINT = re.compile(
    r"(?=[mndscaeiomr不必禁务只一严])"  # a first-letter check first: faster on long texts
    r"(?:\b(?:must(?:\s+not|n't)?|never|do not|don't|should not|shouldn't|cannot|can't|may not|"
    r"is not allowed|are not allowed|not permitted|is required|are required|required to|"
    r"make sure|ensure that|avoid|only (?:modify|change|edit|use|touch))\b"
    r"|不能|不要|不可以?|不得|必须|禁止|务必|只能|一定要|严禁)"
)
ASSISTANT_CONSTRAINT = re.compile(
    r"(?=[mianpnds不必禁务只严])"
    r"(?:\b(?:must not|must never|mustn't|is not allowed|are not allowed|not permitted|"
    r"(?:never|do not|don't|should not|shouldn't) (?:modify|change|edit|touch|use|delete|remove|commit|push|break|rename|add))\b"
    r"|不能|不要|不得|必须|禁止|务必|只能|严禁)"
)
"""The assistant reasons with "cannot" and "must" all the time: only rules count for it."""


def find_constraints(timeline: Timeline) -> list[Statement]:
    """Constraint sentences, the user's before the assistant's, each group oldest first."""
    users = find_statements(timeline, USER_CONSTRAINT, frozenset({"user"}))
    return users + find_statements(timeline, ASSISTANT_CONSTRAINT, frozenset({"assistant"}))
