"""The sessions one engine holds: their states (the least recently used forgotten), folders and events."""

from __future__ import annotations

from pathlib import Path

from deepmem.bridge.protocol import EventReply
from deepmem.bridge.session import SessionState
from deepmem.bridge.stats import toast_text, write_stats
from deepmem.config import memory_dir
from deepmem.project import Project
from deepmem.types import SavedTotals

COMPACTION_SUFFIX = "#compaction"
"""Appended to a session id for the state of OpenCode's compaction copy of its history."""


def state_key(session_id: str, compaction: bool) -> str:
    """The key of a session's state; OpenCode's compaction copy of a history is kept apart."""
    return f"{session_id}{COMPACTION_SUFFIX}" if compaction else session_id


class Sessions:
    """Every session an engine has seen, by state key, least recently used first."""

    def __init__(self, project: Project):
        self.project = project
        self.states: dict[str, SessionState] = {}

    def get(self, session_id: str) -> SessionState:
        """The state of a session, created on first use; past `[limits] engine_sessions` the least
        recently used one is saved and forgotten (its plugin's next request resyncs it)."""
        state = self.states.pop(session_id, None) or SessionState()
        self.states[session_id] = state
        while len(self.states) > self.project.config.limits.engine_sessions:
            oldest = next(iter(self.states))
            self.save_stats(oldest)
            del self.states[oldest]
        return state

    def folder(self, session_id: str) -> Path:
        """`.deep-memory/sessions/<sid>/` (the id is reduced to a safe file name)."""
        safe = "".join(c for c in session_id if c.isalnum() or c in "_-") or "unknown"
        return memory_dir(self.project) / "sessions" / safe

    def on_event(self, kind: str, session_id: str) -> EventReply:
        """React to a bus event; `session.idle` may answer a one-time toast."""
        if not session_id:
            return EventReply()
        if kind == "session.deleted":
            for compaction in (False, True):
                self.states.pop(state_key(session_id, compaction), None)
            return EventReply()
        state = self.get(session_id)
        if kind == "session.created":
            state.created = True
        elif kind == "session.idle":
            self.save_stats(session_id)
            if not state.toasted and state.saved and state.saved.tokens_before > state.saved.tokens_after:
                state.toasted = True
                return EventReply(toast=toast_text(state.saved))
        return EventReply()

    def totals(self, session_id: str) -> dict[str, SavedTotals]:
        """Saved totals per session (one session when named)."""
        chosen = [session_id] if session_id else list(self.states)
        return {sid: self.states[sid].saved for sid in chosen if sid in self.states and self.states[sid].saved}

    def save_stats(self, session_id: str) -> None:
        """Write a session's totals to `sessions/<sid>/stats.json` (read by `deepmem stats`)."""
        state = self.states.get(session_id)
        if state is not None and state.saved:
            write_stats(self.folder(session_id), session_id, state.saved, self.project.redactor)

    def save_all_stats(self) -> None:
        """Persist every session's totals (on shutdown and EOF)."""
        for session_id in list(self.states):
            self.save_stats(session_id)
