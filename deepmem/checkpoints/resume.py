"""The resume block a new session starts with, only when its first request continues the latest checkpoint."""

from __future__ import annotations

import os

from deepmem.checkpoints.api import resume_block
from deepmem.checkpoints.store import latest_checkpoint, session_checkpoints
from deepmem.transform.additions import continues


def continued_resume_block(root: str | os.PathLike[str], first_request: str) -> str | None:
    """The resume block when the session's first request names a file or code name only the latest checkpoint
    shows (`deepmem.transform.additions.continues`); None otherwise, or when there is no checkpoint."""
    checkpoint = latest_checkpoint(root)
    if checkpoint is None:
        return None
    earlier = [text for text in session_checkpoints(root) if text != checkpoint]
    return resume_block(root) if continues(checkpoint, earlier, first_request) else None
