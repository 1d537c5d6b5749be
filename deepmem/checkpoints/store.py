"""Where checkpoints live under `.deep-memory/`, written atomically and read back safely."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

import xxhash

from deepmem.checkpoints.render import END_MARK, HEADER
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.types import InputError, Message
from deepmem.vault.disk import prune_folders
from deepmem.vault.sealed import RAW_TRANSCRIPT
from deepmem.vault.sessionio import encode_json
from deepmem.vault.writer import append_shared_json, write_private, write_shared

SAFE_ID = re.compile(r"[^A-Za-z0-9_-]")
MAX_ID = 100
LATEST = "checkpoint.md"
RAW = RAW_TRANSCRIPT
LOG = ".compaction-log.jsonl"


def safe_session_id(session_id: object) -> str:
    """A folder name for a session id: itself when plain, else sanitised plus a hash suffix.

    `../x`, `a/b` and other odd ids never leave `sessions/`; two different odd ids never
    share a folder. An id with nothing usable left is refused.
    """
    if not isinstance(session_id, str) or not session_id.strip(" ._-/\\"):
        raise InputError(f"unusable session id {session_id!r}")
    cleaned = SAFE_ID.sub("_", session_id)[:MAX_ID]
    if cleaned == session_id:
        return cleaned
    return f"{cleaned}-{xxhash.xxh3_64_hexdigest(session_id.encode('utf-8', 'surrogatepass'))[:8]}"


def session_dir(root: str | os.PathLike[str], session_id: str) -> Path:
    """`.deep-memory/sessions/<safe id>/`."""
    return memory_dir(root) / "sessions" / safe_session_id(session_id)


def write_checkpoint(root: Project, session_id: str, messages: list[Message],
                     markdown: str) -> list[Path]:
    """Write the session checkpoint and the latest one (secrets redacted), then the raw messages (exact, sealed)."""
    folder = session_dir(root, session_id)
    for path in (folder / LATEST, memory_dir(root) / LATEST):
        write_shared(path, markdown, root.redactor)
    write_private(folder / RAW, encode_json(messages))
    prune_folders(folder.parent, root.config.limits.sessions_kept, folder)
    return [folder / RAW, folder / LATEST, memory_dir(root) / LATEST]



def append_log(root: Project, entry: dict[str, object]) -> Path:
    """Append one JSON line (with the current UTC time) to `.compaction-log.jsonl`, oldest lines capped."""
    path = memory_dir(root) / LOG
    entry = {"time": datetime.now(UTC).isoformat(timespec="seconds"), **entry}
    append_shared_json(path, entry, root.redactor, root.config.limits.log_bytes)
    return path


def is_complete(text: str) -> bool:
    """True for a whole checkpoint: its header first and its end mark last."""
    return text.startswith(HEADER + "\n") and text.rstrip("\n").endswith(END_MARK)


def read_checkpoint(path: Path) -> str | None:
    """A checkpoint file's text, or None when missing, unreadable or cut short."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return text if is_complete(text) else None


def session_files(root: str | os.PathLike[str], name: str) -> list[Path]:
    """`sessions/*/<name>` files, oldest first (by modification time, then folder name)."""
    found = []
    for path in (memory_dir(root) / "sessions").glob(f"*/{name}"):
        try:
            found.append((path.stat().st_mtime_ns, path.parent.name, path))
        except OSError:
            continue
    return [path for _, _, path in sorted(found)]


def session_checkpoints(root: str | os.PathLike[str]) -> list[str]:
    """Every complete session checkpoint, oldest first."""
    texts = (read_checkpoint(path) for path in session_files(root, LATEST))
    return [text for text in texts if text is not None]


def latest_checkpoint(root: str | os.PathLike[str]) -> str | None:
    """The project's latest complete checkpoint: `checkpoint.md`, else the newest session one."""
    text = read_checkpoint(memory_dir(root) / LATEST)
    if text is not None:
        return text
    older = session_checkpoints(root)
    return older[-1] if older else None
