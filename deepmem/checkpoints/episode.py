"""A session as one episode line: its goal, the files it changed, what worked, what it defined, the errors that
recurred and the change that ended them, how it ended."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from deepmem.extractors import Findings
from deepmem.extractors.errors import ErrorFinding
from deepmem.extractors.lasting import PASTED
from deepmem.memory.episodes import CHANGED, DEFINES, FIELD, WORKED
from deepmem.types import Message

GOAL_CHARS = 120
DECISION_CHARS = 150
MAX_FILES = 12
TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
"""A tag left open (a slash command's wrapper cut short): not part of the goal."""
MAX_COMMANDS = 5
MAX_DEFINITIONS = 6
MAX_FIXES = 2


def one_line(text: str, limit: int) -> str:
    """The text on one line, without backticks (they delimit names), cut to `limit` characters."""
    text = " ".join(text.replace("`", "'").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(names: list[str], limit: int) -> str:
    """Names in backticks, the first `limit` of them, then how many more."""
    shown = ", ".join(f"`{name}`" for name in names[:limit])
    return shown + (f" (+{len(names) - limit} more)" if len(names) > limit else "")


def episode_text(findings: Findings) -> str:
    """The episode line of a session (its goal is the first user message, pasted and tagged blocks left out)."""
    files = [change.path for change in findings.files if not change.path.startswith("/")]
    outcome = findings.outcomes
    unresolved = [error.label for error in findings.errors if not error.resolved]
    requests = (findings.progress.task, findings.progress.last_request)
    goal = next((text for text in (one_line(TAG.sub(" ", PASTED.sub(" ", request)), GOAL_CHARS) for request in requests)
                 if text), "")
    parts = [goal or "(no request)"]
    if files:
        parts.append(CHANGED + quoted(files, MAX_FILES))
    if outcome.commands:
        parts.append(WORKED + quoted(list(outcome.commands), MAX_COMMANDS) + " (exit 0)")
    if outcome.symbols:
        shown = outcome.symbols[:MAX_DEFINITIONS]
        parts.append(DEFINES + ", ".join(f"`{name}` in `{path}`" for name, path in shown))
    fixes = [fix for error in findings.errors if (fix := recurring_fix(error, findings))][:MAX_FIXES]
    if fixes:
        parts.append("fixed " + "; ".join(fixes))
    if findings.decisions:
        parts.append("decided: " + one_line(findings.decisions[-1].text, DECISION_CHARS))
    if unresolved:
        parts.append(f"ended with {len(unresolved)} unresolved: " + quoted([one_line(label, 60) for label in unresolved], 2))
    elif findings.progress.passed:
        parts.append("ended with passing " + quoted([one_line(label, 60) for label in findings.progress.passed], 2))
    return FIELD.join(parts)


def recurring_fix(error: ErrorFinding, findings: Findings) -> str:
    """An error that failed more than once and then passed, with the files changed meanwhile ('' otherwise)."""
    if not error.resolved or error.times < 2:
        return ""
    files = [change.path for change in findings.files
             if change.first_step <= error.fixed_step and change.last_step >= error.first_step]
    if not files:
        return ""
    return f"`{one_line(error.label, 60)}` (failed ×{error.times}) by changing {quoted(files, 3)}"


def session_time(messages: list[Message]) -> str | None:
    """When the session last did something (its messages' newest time), as MEMORY.md writes times; None unknown."""
    newest = 0
    for message in messages:
        times = (message.get("info") or {}).get("time") or {}
        for key in ("created", "completed"):
            value = times.get(key) if isinstance(times, dict) else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                newest = max(newest, int(value))
    if not newest:
        return None
    return datetime.fromtimestamp(newest / 1000, UTC).strftime("%Y-%m-%dT%H:%MZ")
