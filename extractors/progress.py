"""Progress and next steps: the task, the requests still open, the todo list, tests that passed,
and the work the assistant said it would do next.

Which requests are still open cannot be read from words alone, so the newest ones are kept
(`OPEN_REQUESTS`), the user's refusals and corrections among them: the work after a compaction
most often goes on with what was asked last, and a request answered already costs a few lines.
The first, the newest and the other open requests are held whole (up to `HELD_CHARS` each): the
work goes on from all of a pasted plan, review or bug report, and a short "Continue" leaves the
request it continues open; the checkpoint chooses what it quotes of them within its own token budget."""

from __future__ import annotations

import re

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.errors import call_label
from deepmem.extractors.requests import Request, find_requests, handoff
from deepmem.extractors.statements import sentences
from deepmem.toolcalls.touches import TODO_TOOLS

TEST_COMMAND = re.compile(r"\b(?:pytest|tox|nox|unittest|runtests\.py|manage\.py test|npm test|go test|cargo test|make test|bin/test)\b")
INTENT = re.compile(
    r"(?i)\b(?:next|now I|then I|I(?:'ll| will) (?:now |then |next )?(?!use\b)\w+|I need to|we need to|"
    r"let me|remaining|still need|TODO)\b|接下来|下一步|然后|还需要|待办"
)
TASK_CHARS = 700
REQUEST_CHARS = 400
OPEN_REQUESTS = 4
"""The newest requests kept as open ones."""
HELD_CHARS = 60_000
"""Each open request is held up to this many characters (5,000 words of long ones), so the lines that name
files, code and steps near its end can still be quoted."""
MAX_INTENTS = 4
MAX_PASSED = 3


class Todo(msgspec.Struct, frozen=True):
    """One item of the newest todo list."""

    content: str
    status: str
    priority: str = ""


class Progress(msgspec.Struct, frozen=True):
    """Where the work stands."""

    task: str
    last_request: str
    todos: tuple[Todo, ...]
    passed: tuple[str, ...]
    """Test commands whose newest run succeeded (newest last)."""
    intents: tuple[str, ...]
    """What the assistant said it would do next, from its last words."""
    unanswered: bool
    """True when the last user request has no assistant reply yet."""
    steps: int
    requests: tuple[Request, ...] = ()
    """The newest requests and refusals, oldest first, but the first and the newest typed request: what the user
    may still be waiting for."""
    newest: Request | None = None
    """The newest typed request: the one the work most likely goes on with."""
    first: Request | None = None
    """The first typed request: the task, which a short follow-up ("Continue") leaves open."""
    first_is_newest: bool = False
    """True when the first request is also the newest (the only one typed): it is quoted once, whole."""
    carried: str = ""
    """The start of a summary handed over at an earlier compaction, when the session began from one."""


def find_progress(timeline: Timeline) -> Progress:
    """The task, todo state, passing tests, the last request and the assistant's stated next moves."""
    asked = find_requests(timeline)
    typed = [request for request in asked if not request.refused]
    assistant = [p for p in timeline.prose if p.role == "assistant"]
    task = clip(typed[0].text, TASK_CHARS) if typed else ""
    last_request = clip(typed[-1].text, REQUEST_CHARS) if len(typed) > 1 else ""
    unanswered = bool(typed) and typed[-1].step == timeline.steps
    first, newest = (typed[0], typed[-1]) if typed else (None, None)
    others = [request for request in asked[-OPEN_REQUESTS:] if request is not first and request is not newest]
    intents = [s for s in sentences(assistant[-1].text) if INTENT.search(s)] if assistant else []
    return Progress(
        task=task,
        last_request=last_request,
        todos=latest_todos(timeline),
        passed=passing_tests(timeline),
        intents=tuple(intents[-MAX_INTENTS:]),
        unanswered=unanswered,
        steps=timeline.steps,
        requests=tuple(held(request) for request in others),
        newest=held(newest) if newest else None,
        first=held(first) if first else None,
        first_is_newest=len(typed) == 1,
        carried=clip(handoff(timeline), TASK_CHARS),
    )


def held(request: Request) -> Request:
    """The request with its text clipped to HELD_CHARS."""
    return Request(clip(request.text, HELD_CHARS), request.step, request.refused)


def latest_todos(timeline: Timeline) -> tuple[Todo, ...]:
    """The newest todowrite list."""
    for call in reversed(timeline.calls):
        if call.tool in TODO_TOOLS and isinstance(call.input.get("todos"), list):
            return tuple(
                Todo(str(item.get("content", "")), str(item.get("status", "")), str(item.get("priority", "")))
                for item in call.input["todos"]
                if isinstance(item, dict)
            )
    return ()


def passing_tests(timeline: Timeline) -> tuple[str, ...]:
    """Test commands whose newest run succeeded, newest last."""
    newest: dict[str, bool] = {}
    for call in timeline.calls:
        if call.command and TEST_COMMAND.search(call.command):
            label = call_label(call)
            newest.pop(label, None)
            newest[label] = call.status == "completed" and not call.failed
    return tuple(label for label, passed in newest.items() if passed)[-MAX_PASSED:]


def clip(text: str, limit: int) -> str:
    """The text's first `limit` characters, cut at a line end when possible, marked when cut."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip() + " …"
