"""Findings → `checkpoint.md` (eight sections) and the compaction prompt for OpenCode."""

from __future__ import annotations

import re

from deepmem.checkpoints.fit import QUOTE, fit_sections
from deepmem.checkpoints.quotes import open_requests, request_lines, wanted_tokens
from deepmem.extractors import Findings
from deepmem.extractors.context import CODE_NAME
from deepmem.extractors.errors import ErrorFinding
from deepmem.extractors.progress import Progress
from deepmem.tokens import tokens_for_cap

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
LEFT_OUT_OF_BLOCKS = re.compile(rf"^(?:Session `[^`\n]*` · \d+ steps\n\n?|## [^\n]*\n{re.escape(NONE)}\n\n?)", re.M)
"""What a block made from a checkpoint leaves out: the line naming the session checkpointed (whose id and length are
nothing to go on with) and the sections with nothing in them."""
UNSHOWABLE = re.compile(r"[\x00-\x1f\x7f`]")
"""Characters of a session id that could break the Markdown (newlines, backticks)."""


MAX_ITEMS = 12
"""Progress and next steps keep their newest 12; live errors, the user's constraints and files modified are
always kept whole."""
FEW_ITEMS = 5
"""Decisions, the assistant's constraints and fixed errors keep their newest 5: the work after a checkpoint
needs what is open more than what was settled."""
MAX_TEXT = 300
MAX_LOOKED = 4
"""The files read and not changed named on one line beside those in hand."""
MAX_FOUND = 3
"""The files searches found, never read nor changed, named after them."""
CHECKPOINT_TOKENS = 1_500
"""checkpoint.md's cap in the model's own tokens: what does not fit is cut by section shares (`SECTION_WEIGHTS`)."""
LONG_REQUEST_TOKENS = 1_500
"""What long open requests may add to the checkpoint's cap, in the model's own tokens: checkpoint.md stays within
3,000. Just after the 222 requests of more than 100 words of the seven corpora, the open requests are then quoted
whole at 92% of them (87% with 1,000 more)."""
SECTION_WEIGHTS = {"Task overview": 3.0, "Files modified": 2.0, "Errors": 2.0, "Critical context": 1.5,
                   "Next steps": 0.5, "Progress": 0.1, "Key decisions": 0.1, "Constraints": 0.1}
"""A section's share of a checkpoint or block cut to fit, in tokens (`deepmem.checkpoints.fit`): what the next
session goes on with (the latest requests, the files, live errors, commands and code names) before what was
settled."""
ESTIMATE_ERROR = 0.16
"""The token estimate's error bound: a cap in the model's tokens is met by estimating within the cap less this
share (`tokens_for_cap` counts checkpoint.md and the resume block at most 15.3% low on every session of the seven
corpora: a resume block of claude-entire, dense in paths and code names)."""
def newest_lines(lines: list[str], limit: int = MAX_ITEMS) -> list[str]:
    """The newest `limit` lines, after a line counting the older ones left out."""
    dropped = len(lines) - limit
    return [f"- … {dropped} older not shown", *lines[-limit:]] if dropped > 0 else lines


def clip(value: str) -> str:
    """A value cut to MAX_TEXT characters, with an ellipsis."""
    return value if len(value) <= MAX_TEXT else value[: MAX_TEXT - 1] + "…"


def render_checkpoint(findings: Findings, session_id: str) -> str:
    """The checkpoint as Markdown within CHECKPOINT_TOKENS (the estimate's error counted); same findings, same
    bytes. The open requests are quoted within what the rest of it leaves, each at least REQUEST_FLOOR, and not cut
    again: the other sections share what they leave. Long requests that want more than that (`wanted_tokens`) grow
    the checkpoint by what they want, up to LONG_REQUEST_TOKENS more, spent on the newest first."""
    room = int(CHECKPOINT_TOKENS / (1 + ESTIMATE_ERROR))
    unquoted = [line for line in markdown_of(findings, session_id, 0).splitlines() if not line.startswith(QUOTE)]
    budget = room - tokens_for_cap("\n".join(unquoted) + "\n" + END_MARK + "\n")
    wanted = sum(wanted_tokens(request.text) for request in open_requests(findings.progress))
    grown = min(max(wanted - budget, 0), int(LONG_REQUEST_TOKENS / (1 + ESTIMATE_ERROR)))
    markdown = markdown_of(findings, session_id, budget + grown)
    return fit_sections(markdown, room + grown, SECTION_WEIGHTS, END_MARK + "\n", ("Task overview",)) + END_MARK + "\n"


def markdown_of(findings: Findings, session_id: str, requests_budget: int) -> str:
    """The checkpoint's sections as Markdown, the open requests quoted within `requests_budget` tokens."""
    bodies = section_bodies(findings, requests_budget)
    shown_id = UNSHOWABLE.sub("?", session_id)[:100]
    lines = [HEADER, "", f"Session `{shown_id}` · {findings.progress.steps} steps", ""]
    for title in SECTIONS:
        lines += [f"## {title}", *(bodies[title] or [NONE]), ""]
    return "\n".join(lines) + "\n"


def section_bodies(findings: Findings, requests_budget: int) -> dict[str, list[str]]:
    """The bullet lines of each section, the open requests quoted within `requests_budget` tokens."""
    progress = findings.progress
    live = [e for e in findings.errors if e.live]
    fixed = [e for e in findings.errors if e.resolved]
    done = [f"- [{todo.status or 'pending'}] {todo.content}" for todo in progress.todos]
    done += [f"- passing: `{command}`" for command in progress.passed]
    steps = [f"- {todo.content}" for todo in progress.todos if todo.status in ("pending", "in_progress")]
    if progress.unanswered and (progress.last_request or progress.task):
        steps.append("- answer the last request (above), which has no reply yet")
    steps += [f"- fix the {len(live)} UNRESOLVED under Errors (above)"] if live else []
    steps += [f"- {intent}" for intent in progress.intents]
    task = task_lines(progress, requests_budget)
    return {
        "Task overview": task,
        "Progress": newest_lines(done),
        "Key decisions": newest_lines([f"- {s.text} (step {s.step})" for s in findings.decisions], FEW_ITEMS),
        "Constraints": [f"- {s.text} (user)" for s in findings.constraints if s.role == "user"]
        + newest_lines([f"- {s.text} (assistant)" for s in findings.constraints if s.role != "user"], FEW_ITEMS),
        "Files modified": file_lines(findings),
        "Errors": [error_line(e) for e in live] + newest_lines([error_line(e) for e in fixed], FEW_ITEMS),
        "Next steps": newest_lines(steps),
        "Critical context": context_lines(findings, "\n".join(task)),
    }


def quoted(text: str) -> list[str]:
    """A text as `> ` quote lines, each clipped."""
    return [f"> {clip(line)}" for line in text.splitlines() if line.strip()]


def task_lines(progress: Progress, budget: int) -> list[str]:
    """The summary the session was carried on from, when no request was typed after it, then the open requests
    quoted within `budget` tokens (`deepmem.checkpoints.quotes`)."""
    carried = ["- carried on from an earlier summary:", *quoted(progress.carried)] if progress.carried and not progress.task else []
    return carried + request_lines(progress, budget)


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


def context_lines(findings: Findings, quoted_requests: str) -> list[str]:
    """Files only read that are in hand, commands that worked, the other files looked at on one line, and code
    names not shown beside a changed file or in the requests quoted."""
    context = findings.context
    changed = {f.path for f in findings.files}
    shown = set(CODE_NAME.findall(quoted_requests))
    loose = [name for name, where in context.names if where not in changed and name not in shown]
    in_hand = {r.path for r in context.reads}
    looked = [f.path for f in findings.looked if f.path not in in_hand and f.times][:MAX_LOOKED]
    looked += [f.path for f in findings.looked if not f.times][:MAX_FOUND]
    return [
        *(f"- read `{r.path}` ×{r.times}, last at step {r.last_step}" + (", named in a request or todo" if r.named else "")
          for r in context.reads),
        *(f"- command `{clip(command)}` ×{count}" for command, count in context.commands),
        *([f"- also read, the most used first, then found by searches: {by_folder(looked)}"] if looked else []),
        *(["- code names: " + ", ".join(f"`{name}`" for name in loose)] if loose else []),
    ]


def by_folder(paths: list[str]) -> str:
    """Paths grouped by folder, `folder/{a.go, b.go}`, the folders in the order of their first path."""
    folders: dict[str, list[str]] = {}
    for path in paths:
        folder, _, name = path.rpartition("/")
        folders.setdefault(folder, []).append(name)
    return "; ".join(f"{folder}/{{{', '.join(names)}}}" if folder else ", ".join(names) for folder, names in folders.items())


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
