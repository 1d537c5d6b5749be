"""What a request gains from deepmem, and the rule that admits each addition.

deepmem adds to a session's requests, in the order a request carries them:

- its tool schemas (`deepmem.bridge.tools`), in the tool list of every request;
- the memory block (`deepmem.memory.api.stable_block`), joined to the system prompt, empty
  when nothing the project remembers clears its bars;
- the resume block (`deepmem.checkpoints.api.resume_block`), joined to it only when the
  session's first request continues the latest checkpoint (`continues`);
- a whisper after a user message, when a memory clears the whisper's relevance bar, carried
  until a jump leaves that message behind the boundary (`passed_ids`; the first request's
  whisper is part of the opening that every jump reads, and stays);
- a nudge after the last message, when the request's cuts pay for it (`deepmem.transform.nudges`).

The blocks in the system prompt are decided once, at the session's first request, and kept
frozen: changing them later would rewrite the provider's cache. `Additions` is what the
bill (`deepmem.replay.loop`, `deepmem.replay.audit`, `bench/frames.py`) reads of them; nudges ride in
the messages, so the bill sees them there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import msgspec

from deepmem.history import Layout, is_user_typed
from deepmem.transform.cache_mark import opening_parts
from deepmem.types import Message

TOOL_TOKENS_LIMIT = 300
"""o200k tokens deepmem's 4 tool schemas may take, as OpenCode sends them to the provider."""
RESUME_MIN_NAMES = 1
"""The first request continues the latest checkpoint when it names this many of the files
or code names only that checkpoint shows (chosen leaving each corpus out in turn:
`python -m bench.runners.resume_rule`)."""

BACKTICKED = re.compile(r"`([^`\n]+)`")
CODE_NAME = re.compile(r"[A-Za-z_][\w.]*[A-Za-z0-9_]")
FILE_PATH = re.compile(r"[\w.-]*/[\w./-]*\.\w{1,8}|[\w-]+\.\w{1,8}")
MIN_NAME_CHARS = 4
"""Shorter backticked names (`id`, `ok`, `s1`) are left out: any request may hold them."""
WORD = re.compile(r"[\w./-]+")
CHANGED_SECTION = "Files modified"
"""The checkpoint's section naming the files its session changed, each with the code names its edits touched."""


class Additions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What deepmem adds to one session's requests, in tokens, and its whispers."""

    tools: int = 0
    """Its tool schemas, in the tool list."""
    memory: int = 0
    """The memory block, in the system prompt."""
    resume: int = 0
    """The resume block, in the system prompt."""
    whispers: dict[str, str] = {}
    """User message id → the whisper appended after it (memory hits for that message)."""

    @property
    def frame(self) -> int:
        """Tokens before the messages: the tool schemas and the blocks in the system prompt."""
        return self.tools + self.memory + self.resume


def checkpoint_names(checkpoint: str) -> dict[str, str]:
    """Each way the files a checkpoint's session changed (path, file name) and their code names may be written →
    what it names: the backticked names of its `Files modified` section."""
    names: dict[str, str] = {}
    section = ""
    for line in checkpoint.splitlines():
        if line.startswith("## "):
            section = line.removeprefix("## ").strip()
        if section != CHANGED_SECTION:
            continue
        for span in map(str.strip, BACKTICKED.findall(line)):
            if FILE_PATH.fullmatch(span):
                spellings = (span, span.rsplit("/", 1)[-1])
            elif CODE_NAME.fullmatch(span):
                spellings = (span,)
            else:
                continue
            names.update((spelling, span) for spelling in spellings if len(spelling) >= MIN_NAME_CHARS)
    return names


def named_in(names: dict[str, str], text: str) -> set[str]:
    """The files and code names a text holds, each written as a whole word."""
    words = set(WORD.findall(text))
    words |= {word.strip("./-") for word in words}
    return {names[word] for word in words if word in names}


def specific_names(checkpoint: str, earlier: Iterable[str]) -> dict[str, str]:
    """The checkpoint's names that no earlier checkpoint of the project shows (`patch.txt`, `ValueError` and the
    like name every session's work, so they say nothing of this one's)."""
    seen = {name for text in earlier for name in checkpoint_names(text).values()}
    return {spelling: name for spelling, name in checkpoint_names(checkpoint).items() if name not in seen}


def continues(checkpoint: str, earlier: Iterable[str], first_request: str, least: int = RESUME_MIN_NAMES) -> bool:
    """True when the first request names at least `least` of the files or code names only this checkpoint shows."""
    return len(named_in(specific_names(checkpoint, earlier), first_request)) >= least


def passed_ids(messages: list[Message], shape: Layout) -> frozenset[str]:
    """Ids of the messages a jump has left behind the boundary, whose whispers are no longer carried.

    A whisper answers its user message; once a jump makes that message old, the jump rewrites
    what follows its first cut part anyway, so dropping the whisper there costs the cache
    nothing, and every later request is smaller by it (memory_search still finds its entries).
    The whispers of the session's opening (`deepmem.transform.cache_mark.opening_parts`) stay: every
    jump reads the opening from the cache, up to a request that writes everything anyway.
    """
    start = 0 if shape.rebased else opening_parts(messages)[0]
    old = messages[start : shape.first_young] if shape.boundary else []
    return frozenset(str(message["info"].get("id", "")) for message in old)


def first_request(messages: list[Message]) -> str:
    """What the user typed in the session's first user message that holds any text ('' when none does)."""
    for message in messages:
        if message["info"].get("role") == "user":
            text = "\n".join(part["text"] for part in message["parts"] if is_user_typed(message, part)).strip()
            if text:
                return text
    return ""
