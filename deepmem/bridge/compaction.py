"""The compacting op: when OpenCode compacts a session, write its checkpoint and shape the summary."""

from __future__ import annotations

import logging

from deepmem.bridge import features
from deepmem.bridge.injection import Injection
from deepmem.bridge.protocol import CompactingReply
from deepmem.bridge.sessions import Sessions
from deepmem.project.folder import Project

log = logging.getLogger("deepmem.bridge")


def compacting(project: Project, sessions: Sessions, injection: Injection, session_id: str) -> CompactingReply:
    """Write the checkpoint from the latest history; hand OpenCode its prompt and context."""
    state = sessions.get(session_id)
    compact = features.feature(features.CHECKPOINTS, "compact")
    result = compact(project, session_id, state.messages) or {}
    sessions.save_stats(session_id)
    if result.get("error"):
        log.warning("checkpoint of %s: %s", session_id, result["error"])
    # The compaction replaces the whole history, so the cache is rewritten anyway: the block is
    # frozen anew with the session's checkpoint, which the continuation then sees at every step.
    injection.freeze_block(session_id, features.CHECKPOINTS, "continuation_block", project, session_id)
    return CompactingReply(
        prompt=result.get("prompt") or None,
        context=[str(item) for item in result.get("context") or []],
        written=[str(item) for item in result.get("written") or []],
        problem=str(result.get("error") or ""),
    )
