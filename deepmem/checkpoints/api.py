"""Checkpoints for the bridge and the CLI: `compact` on compaction, `resume_block` on a new session."""

from __future__ import annotations

import os
from typing import Any

from deepmem.checkpoints.block import block_body, fitted_block
from deepmem.checkpoints.episode import episode_text, session_time
from deepmem.checkpoints.render import ESTIMATE_ERROR, compaction_prompt, render_checkpoint
from deepmem.checkpoints.schedule import after_compaction
from deepmem.checkpoints.store import (
    LATEST,
    append_log,
    latest_checkpoint,
    read_checkpoint,
    safe_session_id,
    session_dir,
    write_checkpoint,
)
from deepmem.extractors import Findings, extract
from deepmem.extractors.calls import exit_code
from deepmem.extractors.looked import SEARCH_TOOLS
from deepmem.history import history_tokens
from deepmem.memory.episodes import brief, put_episode, related
from deepmem.memory.store import add_notes, now_text
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project
from deepmem.types import DeepmemError, InputError, Message
from deepmem.vault.disk import locked
from deepmem.vault.redact import Redactor
from deepmem.vault.sessionio import validate_messages

RESUME_BUDGET_TOKENS = 1_000
"""The resume block's cap: with the memory block and the first whisper, a start under 1,500 tokens (median) on
swe-deepseek, whose checkpoints run longest."""
RELATED_GOAL_CHARS = 100
"""A related earlier session's goal is cut to this many characters in the resume block."""
RESUME_OPEN = (
    "<deepmem-resume>\nThe last session of this project was checkpointed as below. "
    "Continue from it when the user's request follows on from that work.\n\n"
)
RESUME_CLOSE = "</deepmem-resume>"
CONTINUATION_OPEN = (
    "<deepmem-resume>\nThis session was compacted. deepmem's checkpoint of the work before the compaction, "
    "written from every message and tool call, is below: go on from its latest requests, files and commands "
    "where the summary above leaves them out.\n\n"
)
QUIET_OUTPUT_CHARS = 200
"""What the extractors keep of a call's output when it did not fail: room for a `<returncode>` wrapper."""
SEARCH_OUTPUT_CHARS = 2_000
"""What they keep of a search's (`grep`, `glob`): the files it found, a few dozen paths (`deepmem.extractors.looked`)."""


def compact(root: Project, session_id: str, messages: list[Message]) -> dict[str, Any]:
    """Write the session's checkpoint files and return OpenCode's compaction prompt and context.

    The extractors read the messages with their secrets already redacted: a key, once taken out
    of the `KEY=`, URL or header that let the detector see it, is only a random token.

    Never raises for bad input: a problem goes into `error`, and whatever could be
    produced (the prompt needs no disk) is still returned. Writes hold the memory folder's
    lock, so concurrent OpenCode instances never interleave them.
    """
    result: dict[str, Any] = {"prompt": "", "context": [], "written": []}
    try:
        findings = findings_for(extraction_view(messages, root.redactor))
    except DeepmemError as exc:
        return {**result, "error": str(exc)}
    markdown = render_checkpoint(findings, str(session_id))
    result.update(prompt=compaction_prompt(markdown), context=[markdown])
    try:
        safe_session_id(session_id)
        earlier = read_checkpoint(session_dir(root, session_id) / LATEST) if nothing_new(findings) else None
        if earlier is not None:
            return {**result, "prompt": compaction_prompt(earlier), "context": [earlier], "reused": True}
        with locked(memory_dir(root)):
            paths = write_checkpoint(root, session_id, messages, markdown)
            result["written"] = [str(path) for path in paths]
            append_log(root, {
                "session": session_id,
                "messages": len(messages),
                "tokens_before": history_tokens(messages),
                "bytes": {path.name if i else "raw": path.stat().st_size for i, path in enumerate(paths[:2])},
            })
        when = session_time(messages)
        if findings.candidates:
            add_notes(root, [(c.type, c.memory_text()) for c in findings.candidates], f"checkpoint {session_id}"[:40],
                      when)
        put_episode(root, session_id, episode_text(findings), when or now_text())
        result["scheduled"] = after_compaction(root)
    except DeepmemError as exc:
        result["error"] = str(exc)
    except OSError as exc:
        result["error"] = f"cannot write checkpoint: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
    return result


def nothing_new(findings: Findings) -> bool:
    """True when the messages hold no request and no tool call outcome of their own: a compaction right
    after another one, where the earlier checkpoint of the session is still the whole story."""
    progress, context = findings.progress, findings.context
    return not (progress.task or progress.requests or progress.todos or findings.files or findings.errors
                or context.commands or context.reads)


def extraction_view(messages: object, redactor: Redactor) -> object:
    """The messages as the extractors read them: every string redacted, and the output of each tool call that ended
    well cut to its first `QUIET_OUTPUT_CHARS` (no extractor reads further: what a call that worked printed is most
    of a session and nothing a checkpoint keeps, so it is not worth redacting)."""
    if not isinstance(messages, list):
        return messages
    return redactor.json([{**message, "parts": [quiet_output_cut(part) for part in message["parts"]]}
                          if isinstance(message, dict) and isinstance(message.get("parts"), list) else message
                          for message in messages])


def quiet_output_cut(part: object) -> object:
    """A tool part whose call completed without a failing exit, its output cut to its head (a search's to the files it
    found); any other part as it is."""
    state = part.get("state") if isinstance(part, dict) and part.get("type") == "tool" else None
    if not isinstance(state, dict) or state.get("status") != "completed" or not isinstance(state.get("output"), str):
        return part
    output = state["output"]
    keep = SEARCH_OUTPUT_CHARS if part.get("tool") in SEARCH_TOOLS else QUIET_OUTPUT_CHARS
    if exit_code(state, output) or len(output) <= keep:
        return part
    return {**part, "state": {**state, "output": output[:keep]}}


def findings_for(messages: object) -> Findings:
    """Validate messages and run the extractors; InputError for anything unusable."""
    if not isinstance(messages, list) or not messages:
        raise InputError("no messages to checkpoint")
    validate_messages(messages, "messages")
    return extract(messages)


def resume_block(root: str | os.PathLike[str], budget: int = RESUME_BUDGET_TOKENS) -> str | None:
    """The latest checkpoint as a resume block under `budget` tokens; None when there is none."""
    checkpoint = latest_checkpoint(root)
    if checkpoint is None:
        return None
    return fitted_block(RESUME_OPEN, RESUME_CLOSE, block_body(checkpoint) + related_section(root), room_of(budget))


def continuation_block(root: str | os.PathLike[str], session_id: str, budget: int = RESUME_BUDGET_TOKENS) -> str | None:
    """The session's own checkpoint as the block its continuation after a compaction starts from, under
    `budget` tokens; None when the session has none."""
    checkpoint = read_checkpoint(session_dir(root, session_id) / LATEST)
    if checkpoint is None:
        return None
    return fitted_block(CONTINUATION_OPEN, RESUME_CLOSE, block_body(checkpoint), room_of(budget))


def room_of(budget: int) -> int:
    """A block's room in estimated tokens: its budget in the model's tokens less the estimate's error."""
    return int(budget / (1 + ESTIMATE_ERROR))


def related_section(root: str | os.PathLike[str]) -> str:
    """Earlier sessions that changed the same files as the latest one, as a resume section ('' when none)."""
    lines = [f"- {entry.time[:10]}: {brief(entry.text, RELATED_GOAL_CHARS)}" for entry in related(root)]
    return "\n## Related earlier sessions\n" + "\n".join(lines) + "\n" if lines else ""
