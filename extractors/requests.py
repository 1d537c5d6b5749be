"""The user's requests: what they typed, and what they said when refusing a call, oldest first.

A request is user-typed text with the agent's own wrappers taken out (`<command-name>`,
`<local-command-stdout>`, `<system-reminder>`, `<task-notification>` blocks, Codex's `<permissions instructions>`
and `<environment_context>`; the arguments of a slash command stay).
Claude Code's own note that the user stopped a turn ("[Request interrupted by user]") is no request either.
A handoff written at an earlier compaction (Claude Code's "This session is being continued…",
deepmem's own handoff line) is no request: it is what the session was carried on from. A
refusal with words ("no, keep the old name") is a correction and counts as a request; a
refusal without words says only what not to do, and is kept with the call it refused.
A run of encoded data pasted into a request (base64, a long hex dump) says nothing in words: it is
left out, with its length; and a line repeated (a log's, a redacted key's lines) is kept once, with its count.
"""

from __future__ import annotations

import re
from itertools import groupby

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.errors import call_label

WRAPPERS = re.compile(
    r"<(command-name|command-message|local-command-stdout|local-command-stderr|local-command-caveat|system-reminder"
    r"|task-notification|permissions instructions|environment_context|collaboration_mode|apps_instructions"
    r"|skills_instructions|plugins_instructions|app-context|multi_agent_mode|model_switch|turn_aborted)>.*?</\1>",
    re.S,
)
"""What the agent writes into a user message: Claude Code's command wrappers, reminders and a background task's
notification, Codex's instructions and environment blocks."""
TAGS = re.compile(r"</?command-args>")
INTERRUPTED = re.compile(r"\[Request interrupted by user[^\]\n]*\]")
BLOB = re.compile(r"(?:[A-Za-z0-9+/=]{60,}\s+)+[A-Za-z0-9+/=]*[0-9+/=][A-Za-z0-9+/=]*|[A-Za-z0-9+/=]{100,}")
"""Encoded data: a run of 100 characters with no space, dot, dash or underscore (no word, path or name is so
long), or lines of 60 such characters or more in a row (base64 wrapped at 64 or 76) up to the shorter last one."""
HANDOFFS = (
    "This session is being continued from a previous conversation",
    "Handoff: resuming a compacted session",
)
"""How a summary handed over at an earlier compaction begins."""


class Request(msgspec.Struct, frozen=True):
    """One thing the user asked, with when; `refused` names the call it came with when it was a refusal."""

    text: str
    step: int
    refused: str = ""


def request_text(text: str) -> str:
    """A user text without the agent's wrappers and encoded data, each run of one line once ('' when nothing of
    the user's own is left)."""
    return once_each(BLOB.sub(left_out, INTERRUPTED.sub("", TAGS.sub("", WRAPPERS.sub("", text))))).strip()


def once_each(text: str) -> str:
    """The text with each run of the same line kept once, with how many times it came when more than once."""
    runs = ((line, sum(1 for _ in run)) for line, run in groupby(text.split("\n")))
    return "\n".join(line if times == 1 or not line.strip() else f"{line} (×{times})" for line, times in runs)


def left_out(blob: re.Match[str]) -> str:
    """What stands for a run of encoded data: its length."""
    return f"[{len(blob[0]):,} characters of encoded data left out]"


def is_handoff(text: str) -> bool:
    """True for a summary handed over at an earlier compaction."""
    return text.lstrip().startswith(HANDOFFS)


def find_requests(timeline: Timeline) -> tuple[Request, ...]:
    """Every request and every refusal, in the order they came (a refusal before the text typed after its step)."""
    found: list[tuple[int, int, int, Request]] = []
    for order, prose in enumerate(timeline.prose):
        text = request_text(prose.text) if prose.role == "user" else ""
        if text and not is_handoff(text):
            found.append((prose.step, 1, order, Request(text, prose.step)))
    for call in timeline.calls:
        if call.refused:
            found.append((call.step, 0, call.index, Request(call.feedback, call.step, call_label(call, timeline.root))))
    return tuple(item[3] for item in sorted(found, key=lambda item: item[:3]))


def handoff(timeline: Timeline) -> str:
    """The newest summary handed over at an earlier compaction ('' when none)."""
    return next((p.text.strip() for p in reversed(timeline.prose) if is_handoff(p.text)), "")
