"""What deepmem adds to a session's requests: the stable block in the system prompt, and the
whisper of memory hits after each new user message."""

from __future__ import annotations

import threading
from typing import Any

from deepmem.bridge import features
from deepmem.bridge.protocol import SystemReply
from deepmem.bridge.session import SessionState
from deepmem.bridge.sessions import STABLE_BLOCK_FILE, Sessions, whisper_part
from deepmem.history import is_user_typed
from deepmem.project.folder import Project
from deepmem.transform.additions import first_request
from deepmem.types import Message
from deepmem.vault.disk import prune_folders
from deepmem.vault.writer import write_shared

SIDE_REQUEST_MARKERS = ("You are a title generator", "context summarization agent")
"""Opening words of OpenCode's title and compaction-summary system prompts: nothing is
injected into those requests."""

def is_side_request(system: list[str]) -> bool:
    """True for OpenCode's title-generation and compaction-summary requests."""
    head = system[0] if system else ""
    return any(marker in head for marker in SIDE_REQUEST_MARKERS)


class Injection:
    """The stable block and the whispers of every session, from the project's memory."""

    def __init__(self, project: Project, sessions: Sessions, memory_lock: threading.Lock):
        self.project = project
        self.sessions = sessions
        self.memory_lock = memory_lock

    def system(
        self, system: list[str], session_id: str, context: int = 0, model: dict[str, Any] | None = None
    ) -> SystemReply:
        """The session's stable block (frozen at its first step), for the main requests only;
        notes the window and prices of the model that answers them."""
        if not session_id or is_side_request(system):
            return SystemReply(append=[])
        state = self.sessions.get(session_id)
        window = context if context > 0 else state.context_window
        if (window, model or state.model) != (state.context_window, state.model):
            state.context_window, state.model = window, model or state.model
            self.sessions.remember(session_id)
        block = self.stable_block(session_id)
        return SystemReply(append=[block] if block else [])

    def stable_block(self, session_id: str) -> str:
        """The session's block, decided at its first request from what that request shows and kept on disk (a
        restarted engine reads it back with the session)."""
        state = self.sessions.get(session_id)
        if state.stable_block is not None:
            return state.stable_block
        new = state.created or not any(m["info"].get("role") == "assistant" for m in state.messages)
        return self.start_block(session_id, first_request(state.messages)) if new else self.freeze_block(session_id)

    def start_block(self, session_id: str, request: str) -> str:
        """A new session's block: memory's block, then the resume block when its first request continues the
        latest checkpoint; frozen."""
        return self.freeze_block(session_id, features.RESUME, "continued_resume_block", self.project, request)

    def freeze_block(self, session_id: str, *checkpoint: Any) -> str:
        """Memory's stable block, then the checkpoint block `checkpoint` names (a feature module, its function and
        the function's arguments), frozen as the session's block and kept on disk."""
        with self.memory_lock:
            pieces = [features.optional_feature(features.MEMORY, "stable_block", self.project)]
        if checkpoint:
            pieces.append(features.optional_feature(*checkpoint))
        state = self.sessions.get(session_id)
        block = "\n\n".join(piece.strip() for piece in pieces if piece and piece.strip())
        path = self.sessions.folder(session_id) / STABLE_BLOCK_FILE
        state.stable_block = write_shared(path, block, self.project.redactor)
        prune_folders(path.parent.parent, self.project.config.limits.sessions_kept, path.parent)
        return state.stable_block

    def add_whisper(self, state: SessionState, session_id: str, messages: list[Message]) -> None:
        """Once per new user message: memory hits for it, appended after it (sticky)."""
        last = messages[-1] if messages else None
        if last is None or last["info"].get("role") != "user":
            return
        message_id = str(last["info"].get("id", ""))
        if message_id in state.whispered:
            return
        query = "\n".join(part["text"] for part in last["parts"] if is_user_typed(last, part))
        text = ""
        if query.strip():
            shown = "\n".join([state.stable_block or "", *(shown for shown in state.whispered.values() if shown)])
            with self.memory_lock:
                found = features.optional_feature(features.MEMORY, "whisper", self.project, query, None, shown)
            text = self.project.redactor.text(found) if found else ""
        state.whispered[message_id] = text
        if text:
            edit = whisper_part(session_id, message_id, text)
            state.appends[edit.key] = edit
        self.sessions.remember(session_id)
