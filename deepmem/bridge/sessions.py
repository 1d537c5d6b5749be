"""The sessions one engine holds: their states (the least recently used forgotten), folders and events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import orjson

from deepmem.bridge.edits import append_edit
from deepmem.bridge.protocol import EventReply, WireEdit
from deepmem.bridge.session import SessionState
from deepmem.bridge.stats import toast_text, write_stats
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.types import SavedTotals
from deepmem.vault.sealed import SealError, read_sealed
from deepmem.vault.writer import write_private

STABLE_BLOCK_FILE = "stable-block.md"
REQUEST_STATE_FILE = "request-state.json"
"""What shapes a session's requests besides its history, for an engine that starts after a restart."""
COMPACTION_SUFFIX = "#compaction"
"""Appended to a session id for the state of OpenCode's compaction copy of its history."""


class RequestState(msgspec.Struct):
    """The part of a session's state a new engine must read back to send the same bytes."""

    whispers: list[tuple[str, str]] = []
    """(user message id, its whisper text: '' when it got none), in the order decided."""
    context_window: int = 0
    model: dict[str, Any] = {}


def whisper_part(session_id: str, message_id: str, text: str) -> WireEdit:
    """The sticky edit that appends a whisper to the user message it answers."""
    part = {"id": f"prt_deepmem_whisper_{message_id}", "type": "text", "text": text, "synthetic": True}
    return append_edit(session_id, message_id, part)


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
        state = self.states.pop(session_id, None) or self.restored(session_id)
        self.states[session_id] = state
        while len(self.states) > self.project.config.limits.engine_sessions:
            oldest = next(iter(self.states))
            self.save_stats(oldest)
            del self.states[oldest]
        return state

    def restored(self, session_id: str) -> SessionState:
        """A session's state as an earlier engine left what shapes its requests (empty when new)."""
        state = SessionState()
        block = self.folder(session_id) / STABLE_BLOCK_FILE
        if block.is_file():
            state.stable_block = block.read_text(encoding="utf-8")
        path = self.folder(session_id) / REQUEST_STATE_FILE
        if not path.is_file():
            return state
        try:
            saved = msgspec.json.decode(read_sealed(path), type=RequestState)
        except (OSError, msgspec.DecodeError, SealError):
            return state
        for message_id, text in saved.whispers:
            state.whispered[message_id] = text
            if text:
                edit = whisper_part(session_id, message_id, text)
                state.appends[edit.key] = edit
        state.context_window, state.model = saved.context_window, saved.model
        return state

    def remember(self, session_id: str) -> None:
        """Write what shapes the session's requests (whispers decided, model, window) to its folder."""
        state = self.states[session_id]
        saved = RequestState(list(state.whispered.items()), state.context_window, state.model)
        data = orjson.dumps(msgspec.to_builtins(saved), option=orjson.OPT_SORT_KEYS)
        write_private(self.folder(session_id) / REQUEST_STATE_FILE, data)

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
