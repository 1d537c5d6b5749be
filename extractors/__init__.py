"""Extractors: pure functions over the message model that find what a checkpoint keeps.

`extract(messages)` runs them all over one timeline of the session.
"""

from __future__ import annotations

import msgspec

from deepmem.extractors.calls import build_timeline
from deepmem.extractors.constraints import find_constraints
from deepmem.extractors.context import CriticalContext, find_context
from deepmem.extractors.decisions import find_decisions
from deepmem.extractors.errors import ErrorFinding, find_errors
from deepmem.extractors.files import FileChange, files_modified
from deepmem.extractors.lasting import Candidate, find_candidates
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


def extract(messages: list[Message]) -> Findings:
    """Run every extractor over the messages."""
    timeline = build_timeline(messages)
    errors = find_errors(timeline)
    return Findings(
        progress=find_progress(timeline),
        decisions=tuple(find_decisions(timeline)),
        constraints=tuple(find_constraints(timeline)),
        files=tuple(files_modified(timeline)),
        errors=tuple(errors),
        context=find_context(timeline),
        candidates=tuple(find_candidates(timeline, errors)),
        outcomes=find_outcomes(timeline),
    )
