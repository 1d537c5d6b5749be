"""Findings → `checkpoint.md` (eight sections) and the compaction prompt for OpenCode."""

from __future__ import annotations

import re

from deepmem.extractors import Findings
from deepmem.extractors.context import CODE_NAME, PATH
from deepmem.extractors.errors import ErrorFinding
from deepmem.extractors.progress import Progress
from deepmem.extractors.requests import Request
from deepmem.tokens import estimate_tokens

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
"""Progress and next steps keep their newest 12; live errors, the user's constraints and files modified are
always kept whole."""
FEW_ITEMS = 5
"""Decisions, the assistant's constraints and fixed errors keep their newest 5: the work after a checkpoint
needs what is open more than what was settled."""
MAX_TEXT = 300
CHECKPOINT_TOKENS = 1_500
"""checkpoint.md's cap in the model's own tokens: the newest request is cut to fit within it, down to NEWEST_FLOOR
(nothing else is cut for it)."""
ESTIMATE_ERROR = 0.15
"""The token estimate's error bound (`deepmem.tokens`): a cap in the model's tokens is met by estimating within the
cap less this share (checkpoint Markdown counts about 13% above the estimate on claude-entire's compactions)."""
NEWEST_TOKENS = 450
"""The newest request is quoted whole up to this many tokens: what CHECKPOINT_TOKENS leaves beside a checkpoint of
median size (about 1,000 tokens on claude-entire's compactions; docs/benchmarks.md)."""
NEWEST_FLOOR = 150
"""The newest request keeps at least this many tokens however long the rest of the checkpoint is: as much as the
other requests keep (600 characters)."""
NAMES_WORK = re.compile(rf"`|{PATH.pattern}|{CODE_NAME.pattern}|^\W*(?:\d+[.)]|(?i:step) \d+)|^\s*\$ |\s--?[a-z][\w-]*(?!\S)")
"""A line that names a file, code, a command (a prompt `$`, a flag) or a numbered step."""


def newest_lines(lines: list[str], limit: int = MAX_ITEMS) -> list[str]:
    """The newest `limit` lines, after a line counting the older ones left out."""
    dropped = len(lines) - limit
    return [f"- … {dropped} older not shown", *lines[-limit:]] if dropped > 0 else lines


def clip(value: str) -> str:
    """A value cut to MAX_TEXT characters, with an ellipsis."""
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def render_checkpoint(findings: Findings, session_id: str) -> str:
    """The checkpoint as Markdown; same findings, same bytes. The newest request gets what the rest of the
    checkpoint leaves of CHECKPOINT_TOKENS, between NEWEST_FLOOR and NEWEST_TOKENS."""
    rest = estimate_tokens(markdown_of(findings, session_id, 0))
    room = int(CHECKPOINT_TOKENS / (1 + ESTIMATE_ERROR)) - rest
    return markdown_of(findings, session_id, min(NEWEST_TOKENS, max(NEWEST_FLOOR, room)))


def markdown_of(findings: Findings, session_id: str, newest_budget: int) -> str:
    """The checkpoint as Markdown, the newest request quoted within `newest_budget` tokens."""
    bodies = section_bodies(findings, newest_budget)
    shown_id = UNSHOWABLE.sub("?", session_id)[:100]
    lines = [HEADER, "", f"Session `{shown_id}` · {findings.progress.steps} steps", ""]
    for title in SECTIONS:
        lines += [f"## {title}", *(bodies[title] or [NONE]), ""]
    lines.append(END_MARK)
    return "\n".join(lines) + "\n"


def section_bodies(findings: Findings, newest_budget: int) -> dict[str, list[str]]:
    """The bullet lines of each section, the newest request quoted within `newest_budget` tokens."""
    progress = findings.progress
    live = [e for e in findings.errors if e.live]
    fixed = [e for e in findings.errors if e.resolved]
    done = [f"- [{todo.status or 'pending'}] {todo.content}" for todo in progress.todos]
    done += [f"- passing: `{command}`" for command in progress.passed]
    steps = [f"- {todo.content}" for todo in progress.todos if todo.status in ("pending", "in_progress")]
    if progress.unanswered and (progress.last_request or progress.task):
        steps.append("- answer the last request (above), which has no reply yet")
    steps += [f"- fix: `{e.label}` → {e.message}" for e in live]
    steps += [f"- {intent}" for intent in progress.intents]
    return {
        "Task overview": task_lines(progress, newest_budget),
        "Progress": newest_lines(done),
        "Key decisions": newest_lines([f"- {s.text} (step {s.step})" for s in findings.decisions], FEW_ITEMS),
        "Constraints": [f"- {s.text} (user)" for s in findings.constraints if s.role == "user"]
        + newest_lines([f"- {s.text} (assistant)" for s in findings.constraints if s.role != "user"], FEW_ITEMS),
        "Files modified": file_lines(findings),
        "Errors": [error_line(e) for e in live] + newest_lines([error_line(e) for e in fixed], FEW_ITEMS),
        "Next steps": newest_lines(steps),
        "Critical context": context_lines(findings),
    }


def quoted(text: str) -> list[str]:
    """A text as `> ` quote lines, each clipped."""
    return [f"> {clip(line)}" for line in text.splitlines() if line.strip()]


def task_lines(progress: Progress, newest_budget: int) -> list[str]:
    """The first request (or the summary the session was carried on from), the newest request whole, then the
    other latest requests and refusals: what matters most first, since a resume block cut short keeps a
    section's first lines."""
    lines = quoted(progress.task) if progress.task and not progress.first_is_newest else []
    if progress.carried and not progress.task:
        lines = ["- carried on from an earlier summary:", *quoted(progress.carried)]
    if progress.newest:
        lines += newest_request_lines(progress.newest, newest_budget)
    if progress.requests:
        lines.append("- other latest requests, oldest first:")
    for request in progress.requests:
        if request.refused:
            lines.append(f"- refused `{request.refused}` (step {request.step})" + (", saying:" if request.text else ""))
        else:
            lines.append(f"- step {request.step}:")
        lines += quoted(request.text)
    return lines


def newest_request_lines(request: Request, budget: int) -> list[str]:
    """The newest request as quote lines within `budget` tokens, after a line naming it (and what was left out).

    When the budget binds, the lines that name files, code, commands and numbered steps are kept first,
    then the others in order; the first line that does not fit is cut to the room left."""
    lines = [line for line in request.text.splitlines() if line.strip()]
    ranked = sorted(range(len(lines)), key=lambda i: NAMES_WORK.search(lines[i]) is None)
    kept: dict[int, str] = {}
    room = budget
    for i in ranked:
        quote = f"> {lines[i]}"
        cost = estimate_tokens(quote + "\n")
        if cost > room:
            kept[i] = cut_to(quote, room)
            break
        kept[i], room = quote, room - cost
    else:
        return [f"- newest request (step {request.step}):", *(f"> {line}" for line in lines)]
    shown = [kept[i] for i in sorted(kept) if kept[i]]
    return [f"- newest request (step {request.step}), {len(shown)} of {len(lines)} lines, those naming files, code, "
            "commands and steps first:", *shown]


def cut_to(line: str, budget: int) -> str:
    """The line's words from the start while they fit `budget` tokens, marked as cut ('' when none fit)."""
    words = line.split(" ")
    low, high = 0, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if estimate_tokens(" ".join(words[:middle]) + " …") <= budget:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + " …" if low > 1 else ""


def file_lines(findings: Findings) -> list[str]:
    """Each file changed, how and when, with the code names its edits hold; the most recently changed first, since
    a resume block cut short keeps a section's first lines."""
    names: dict[str, list[str]] = {}
    for name, where in findings.context.names:
        names.setdefault(where, []).append(name)
    return [
        f"- `{f.path}` — {', '.join(f.actions)} ×{f.times} (steps {f.first_step}–{f.last_step})"
        + (" · " + ", ".join(f"`{name}`" for name in names[f.path]) if names.get(f.path) else "")
        for f in sorted(findings.files, key=lambda f: -f.last_step)
    ]


def context_lines(findings: Findings) -> list[str]:
    """Files only read that are in hand, commands that worked, and code names not shown beside a changed file."""
    context = findings.context
    changed = {f.path for f in findings.files}
    loose = [name for name, where in context.names if where not in changed]
    return [
        *(f"- read `{r.path}` ×{r.times}, last at step {r.last_step}" + (", named in a request or todo" if r.named else "")
          for r in context.reads),
        *(f"- command `{clip(command)}` ×{count}" for command, count in context.commands),
        *(["- code names: " + ", ".join(f"`{name}`" for name in loose)] if loose else []),
    ]


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
