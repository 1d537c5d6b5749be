"""The user's requests: what they typed, and what they said when refusing a call, oldest first.

A request is user-typed text with the agent's own wrappers taken out (`<command-name>`,
`<local-command-stdout>`, `<system-reminder>` blocks; the arguments of a slash command stay).
A handoff written at an earlier compaction (Claude Code's "This session is being continued…",
deepmem's own handoff line) is no request: it is what the session was carried on from. A
refusal with words ("no, keep the old name") is a correction and counts as a request; a
refusal without words says only what not to do, and is kept with the call it refused.
"""

from __future__ import annotations

import re

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.errors import call_label

WRAPPERS = re.compile(
    r"<(command-name|command-message|local-command-stdout|local-command-stderr|local-command-caveat|system-reminder)>"
    r".*?</\1>",
    re.S,
)
TAGS = re.compile(r"</?command-args>")
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
    """A user text without the agent's wrappers ('' when nothing of the user's own is left)."""
    return TAGS.sub("", WRAPPERS.sub("", text)).strip()


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
