"""Extractors: pure functions over the message model that find what a checkpoint keeps.

`extract(messages)` runs every extractor of `EXTRACTORS` over one timeline of the session.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from deepmem.extractors.calls import Timeline, build_timeline
from deepmem.extractors.constraints import find_constraints
from deepmem.extractors.context import CriticalContext, find_context
from deepmem.extractors.decisions import find_decisions
from deepmem.extractors.errors import ErrorFinding, find_errors
from deepmem.extractors.files import FileChange, files_modified
from deepmem.extractors.lasting import Candidate, find_candidates
from deepmem.extractors.looked import FileLooked, files_looked_at
from deepmem.extractors.outcomes import Outcomes, find_outcomes
from deepmem.extractors.progress import Progress, find_progress
from deepmem.extractors.statements import Statement
from deepmem.types import Message


class Findings(msgspec.Struct, frozen=True):
    """Everything the extractors found in one session."""

    progress: Progress
    decisions: tuple[Statement, ...]
    constraints: tuple[Statement, ...]
    files: tuple[FileChange, ...]
    errors: tuple[ErrorFinding, ...]
    context: CriticalContext
    candidates: tuple[Candidate, ...] = ()
    """Statements worth keeping as memories (they go to notes.md for the next /dream)."""
    outcomes: Outcomes = Outcomes()
    """Commands that worked and definitions written (they go into the session's episode)."""
    looked: tuple[FileLooked, ...] = ()
    """Files read or searched in and never changed, the most used first."""


EXTRACTORS: dict[str, Callable[[Timeline], object]] = {
    "progress": find_progress,
    "decisions": find_decisions,
    "constraints": find_constraints,
    "files": files_modified,
    "errors": find_errors,
    "context": find_context,
    "candidates": find_candidates,
    "outcomes": find_outcomes,
    "looked": files_looked_at,
}
"""Findings field → the extractor that fills it."""


def extract(messages: list[Message]) -> Findings:
    """Run every extractor over the messages."""
    timeline = build_timeline(messages)
    found = {name: run(timeline) for name, run in EXTRACTORS.items()}
    return Findings(**{name: tuple(value) if isinstance(value, list) else value for name, value in found.items()})
