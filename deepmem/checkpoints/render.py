"""Findings → `checkpoint.md` (eight sections) and the compaction prompt for OpenCode."""

from __future__ import annotations

import re

from deepmem.extractors import Findings
from deepmem.extractors.errors import ErrorFinding

SECTIONS = (
    "Task overview",
    "Progress",
    "Key decisions",
    "Constraints",
    "Files modified",
    "Errors",
    "Next steps",
    "Critical context",
)
HEADER = "# Checkpoint"
END_MARK = "<!-- deepmem:checkpoint:end -->"
"""Last line of every complete checkpoint; a file without it was cut short and is ignored."""
NONE = "- (none)"
UNSHOWABLE = re.compile(r"[\x00-\x1f\x7f`]")
"""Characters of a session id that could break the Markdown (newlines, backticks)."""


MAX_ITEMS = 12
"""Decisions, the assistant's constraints, fixed errors, progress and next steps keep their newest 12;
unresolved errors, the user's constraints and files modified are always kept whole."""
MAX_TEXT = 300


def newest_lines(lines: list[str], limit: int = MAX_ITEMS) -> list[str]:
    """The newest `limit` lines, after a line counting the older ones left out."""
    dropped = len(lines) - limit
    return [f"- … {dropped} older not shown", *lines[-limit:]] if dropped > 0 else lines


def clip(value: str) -> str:
    """A value cut to MAX_TEXT characters, with an ellipsis."""
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def render_checkpoint(findings: Findings, session_id: str) -> str:
    """The checkpoint as Markdown; same findings, same bytes."""
    bodies = section_bodies(findings)
    shown_id = UNSHOWABLE.sub("?", session_id)[:100]
    lines = [HEADER, "", f"Session `{shown_id}` · {findings.progress.steps} steps", ""]
    for title in SECTIONS:
        lines += [f"## {title}", *(bodies[title] or [NONE]), ""]
    lines.append(END_MARK)
    return "\n".join(lines) + "\n"


def section_bodies(findings: Findings) -> dict[str, list[str]]:
    """The bullet lines of each section."""
    progress = findings.progress
    unresolved = [e for e in findings.errors if not e.resolved]
    fixed = [e for e in findings.errors if e.resolved]
    task = [f"> {clip(line)}" for line in progress.task.splitlines() if line.strip()]
    if progress.last_request:
        task += ["- last request:", *(f"> {line}" for line in progress.last_request.splitlines() if line.strip())]
    done = [f"- [{todo.status or 'pending'}] {todo.content}" for todo in progress.todos]
    done += [f"- passing: `{command}`" for command in progress.passed]
    done += [f"- fixed: `{e.label}` (failed at step {e.first_step}, ok at step {e.fixed_step})" for e in fixed]
    steps = [f"- {todo.content}" for todo in progress.todos if todo.status in ("pending", "in_progress")]
    if progress.unanswered and progress.last_request:
        steps.append("- answer the last request (above), which has no reply yet")
    steps += [f"- fix: `{e.label}` → {e.message}" for e in unresolved]
    steps += [f"- {intent}" for intent in progress.intents]
    context = findings.context
    return {
        "Task overview": task,
        "Progress": newest_lines(done),
        "Key decisions": newest_lines([f"- {s.text} (step {s.step})" for s in findings.decisions]),
        "Constraints": [f"- {s.text} (user)" for s in findings.constraints if s.role == "user"]
        + newest_lines([f"- {s.text} (assistant)" for s in findings.constraints if s.role != "user"]),
        "Files modified": [f"- `{f.path}` — {', '.join(f.actions)} ×{f.times} (steps {f.first_step}–{f.last_step})" for f in findings.files],
        "Errors": [error_line(e) for e in unresolved] + newest_lines([error_line(e) for e in fixed]),
        "Next steps": newest_lines(steps),
        "Critical context": [
            *(f"- path `{path}` ×{count}" for path, count in context.paths),
            *(f"- command `{clip(command)}` ×{count}" for command, count in context.commands),
            *(f"- identifier `{name}` ×{count}" for name, count in context.identifiers),
        ],
    }


def error_line(error: ErrorFinding) -> str:
    """One error as a bullet: state, command, key line, when."""
    state = f"fixed at step {error.fixed_step}" if error.resolved else "UNRESOLVED"
    repeats = f" ×{error.times}" if error.times > 1 else ""
    code = f" (exit {error.exit_code})" if error.exit_code is not None else ""
    return f"- {state}: `{error.label}`{code}{repeats}, step {error.last_step} — {error.message}"


HANDOFF_PREFIX = (
    "You are writing the handoff for a coding session that is being compacted: another agent "
    "will continue the work from your summary alone, with no access to the conversation."
)

PROMPT_TEMPLATE = """{prefix}

Summarise the conversation above. Output exactly these Markdown sections, in this order, keeping every section even when empty ("(none)"):

{sections}

Rules:
- Terse bullets, no prose paragraphs; keep exact file paths, commands, identifiers and error strings.
- Files modified and Errors: start from the checkpoint below, which deepmem extracted from every tool call; keep every file and every UNRESOLVED error it lists unless the conversation shows it was fixed later.
- Next steps: concrete actions, most urgent first.
- Begin the summary with the line: "{handoff}"
- Do not mention the summary process.

<deepmem-checkpoint>
{checkpoint}</deepmem-checkpoint>
"""

HANDOFF_LINE = "Handoff: resuming a compacted session; the full checkpoint is in .deep-memory/checkpoint.md."


def compaction_prompt(checkpoint: str) -> str:
    """The prompt that replaces OpenCode's summary prompt: handoff prefix, eight sections, findings."""
    sections = "\n".join(f"## {title}" for title in SECTIONS)
    return PROMPT_TEMPLATE.format(prefix=HANDOFF_PREFIX, sections=sections, handoff=HANDOFF_LINE, checkpoint=checkpoint)


def checkpoint_sections(markdown: str) -> dict[str, list[str]]:
    """The bullet texts of each section of a rendered checkpoint (the inverse of the rendering)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:], [])
        elif current is not None and line.startswith("- ") and line != NONE:
            current.append(line[2:])
    return sections
