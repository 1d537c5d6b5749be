"""Nudges: short reminders appended at the end of the context, pure functions of the messages.

- memory: a decision, constraint or fix was stated (English or Chinese) → suggest `memory_store`;
- pressure: the current history is in the high tier → suggest closing finished threads;
- re-read: a file was modified in the last steps while the reads of it were compressed.

Each nudge has a cooldown in steps. Whether a nudge fired at an earlier step is worked
out again from the messages (replaying the steps), so the CLI and the bridge agree and
nothing has to be remembered between calls.

A nudge is paid for by the request it rides on: it is appended only when what that
request's cuts save, at the cache-read price, covers its tokens at the write price. So a
request that deepmem cannot shorten is sent exactly as without it, and no nudge makes a
request dearer than no plugin. A nudge left out for want of funds still counts as fired
for its cooldown (the replay knows nothing of earlier requests' savings).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

import msgspec

from deepmem.compressors import file_reads, stale_reads, working_outputs
from deepmem.history import Layout, tier_for
from deepmem.part_marks import AppendedMark, CompressedMark, part_mark
from deepmem.phrasing import NUDGE_PATTERNS
from deepmem.text.patterns import fold, lines_holding
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.paths import by_file_name, file_name, same_file
from deepmem.toolcalls.touches import shows, touches
from deepmem.transform.jumps import boundary_at
from deepmem.types import Message, Part, Settings

NUDGE_PREFIX = "prt_deepmem_nudge_"
MEMORY_COOLDOWN = 8
PRESSURE_COOLDOWN = 20
REREAD_COOLDOWN = 10
RECENT_STEPS = 3
"""An edit this many steps back or fewer counts as recent for the re-read nudge."""
SNIPPETS = 3
READ_COMPRESSORS = frozenset({file_reads.NAME, stale_reads.NAME, working_outputs.NAME})
SNIPPET_CHARS = 140

SENTENCE = re.compile(r"[^.!?。！？\n]*[.!?。！？\n]?")


class Detection(msgspec.Struct, frozen=True, gc=False):
    """A sentence worth remembering, and what kind of memory it is."""

    kind: str
    sentence: str


def is_nudge(part: Part) -> bool:
    """True for a part deepmem appended (so it is never detected, counted or compressed)."""
    return str(part.get("id", "")).startswith(NUDGE_PREFIX)


@lru_cache(maxsize=16_384)
def detect_memories(text: str) -> tuple[Detection, ...]:
    """Decisions, constraints and fixes stated in a text, one per sentence (memoized).

    Sentences never cross a line, so only the lines holding one of a kind's anchors are
    searched for it (the same detections in the same order, several times faster). The
    folded text may differ in length, never in its lines.
    """
    found = []
    folded = fold(text)
    lines: list[str] | None = None
    for kind, pattern, anchors in NUDGE_PATTERNS:
        present = [anchor for anchor in anchors if anchor in folded]
        if not present:
            continue
        if lines is None:
            lines = text.split("\n")
        for number in lines_holding(folded, present):
            found.extend(Detection(kind, snippet) for snippet in sentences_matching(pattern, lines[number]))
    return tuple(found)


def sentences_matching(pattern: re.Pattern[str], line: str) -> list[str]:
    """The sentence around each match of a pattern in one line, whitespace collapsed and capped."""
    snippets = []
    for match in pattern.finditer(line):
        start = max(line.rfind(".", 0, match.start()), line.rfind("。", 0, match.start())) + 1
        sentence = SENTENCE.match(line, start)
        snippets.append(" ".join((sentence.group(0) if sentence else "").split())[:SNIPPET_CHARS])
    return snippets


def message_memories(message: Message) -> list[Detection]:
    """Detections in the text parts of one message (tool outputs and reasoning are not read)."""
    return [
        found
        for part in message["parts"]
        if part.get("type") == "text" and not is_nudge(part) and isinstance(part.get("text"), str)
        for found in detect_memories(part["text"])
    ]


def fire_steps(current: int, cooldown: int, triggered: Callable[[int, int], bool]) -> list[int]:
    """Steps (1..current) at which a nudge fires: triggered since its last firing, cooldown over.

    `triggered(since, step)` says whether something happened in steps `since+1..step`.
    """
    fired: list[int] = []
    last = 0
    for step in range(1, current + 1):
        if (not fired or step - last >= cooldown) and triggered(last, step):
            fired.append(step)
            last = step
    return fired


def by_step(message_steps: Iterable[int], values: Iterable[list]) -> dict[int, list]:
    """Values grouped by the step of the message they come from."""
    grouped: dict[int, list] = {}
    for step, items in zip(message_steps, values, strict=True):
        if items:
            grouped.setdefault(step, []).extend(items)
    return grouped


def memory_nudge(steps: dict[int, list[Detection]], current: int) -> str | None:
    """Suggest `memory_store` for the decisions/constraints/fixes stated since the last nudge."""
    seen = list(itertools.accumulate(len(steps.get(s, ())) for s in range(current + 1)))
    fired = fire_steps(current, MEMORY_COOLDOWN, lambda since, step: seen[step] > seen[since])
    if not fired or fired[-1] != current:
        return None
    previous = fired[-2] if len(fired) > 1 else 0
    found = [d for s in range(previous + 1, current + 1) for d in steps.get(s, [])]
    listed = "; ".join(f'{d.kind}: "{d.sentence}"' for d in found[-SNIPPETS:])
    return (
        "Worth remembering across sessions? If these hold beyond this task, save them with "
        f"memory_store (type decision/constraint/fact): {listed}"
    )


def pressure_nudge(step_tokens: dict[int, int], current: int, settings: Settings) -> str | None:
    """At the high tier of the current history, suggest closing finished threads."""
    totals: dict[int, int] = {}
    running = step_tokens.get(0, 0)
    for step in range(1, current + 1):
        running += step_tokens.get(step, 0)
        totals[step] = running
    fired = fire_steps(
        current, PRESSURE_COOLDOWN, lambda since, step: tier_for(totals[step], settings) == "high"
    )
    if not fired or fired[-1] != current:
        return None
    return (
        f"The context is large (~{totals[current]:,} tokens). Finish or close threads that are done, "
        "store what must survive with memory_store, and avoid re-reading large outputs."
    )


def reread_nudge(
    edits: dict[int, list[str]], reads: list[tuple[int, str]], current: int, jumps: tuple[int, ...], settings: Settings
) -> str | None:
    """Files modified in the last steps whose earlier reads are now compressed: read them again."""

    reads_by_name = by_file_name((path, read_step) for read_step, path in reads)

    def files(step: int) -> list[str]:
        recent = {path for s in range(max(step - RECENT_STEPS, 0) + 1, step + 1) for path in edits.get(s, [])}
        cutoff = boundary_at(jumps, settings, step)
        return sorted(
            {
                path
                for edited in recent
                for path, read_step in reads_by_name.get(file_name(edited), ())
                if read_step <= cutoff and same_file(path, edited)
            }
        )

    # Only a step with an edit in its last RECENT_STEPS steps can have files to name.
    recent = {step + ahead for step, paths in edits.items() if paths for ahead in range(RECENT_STEPS)}
    fired = fire_steps(current, REREAD_COOLDOWN, lambda since, step: step in recent and bool(files(step)))
    if not fired or fired[-1] != current:
        return None
    return (
        "Earlier reads of files you just modified are shown shortened: read "
        + ", ".join(files(current)[:SNIPPETS])
        + " again before editing them further."
    )


class Signals(msgspec.Struct, frozen=True, gc=False):
    """What one message holds for the nudges, computed once with its compression."""

    memories: tuple[Detection, ...] = ()
    edited: tuple[str, ...] = ()
    compressed_reads: tuple[str, ...] = ()


def message_signals(message: Message, replaced: dict[int, Part]) -> Signals:
    """Statements to remember, files edited, and files whose reads the transform shortened."""
    reads = []
    for index, part in replaced.items():
        mark = part_mark(part)
        by = mark.by if isinstance(mark, CompressedMark) else ()
        source = shows(message["parts"][index]) if READ_COMPRESSORS & set(by) else None
        if source is not None:
            reads.append(source[0])
    return Signals(
        tuple(message_memories(message)),
        tuple(path for part in message["parts"] for path in touches(part).changed),
        tuple(reads),
    )


def funded(lines: list[str], funds: float) -> list[str]:
    """The lines, in their order, whose estimated tokens (a newline each) fit in `funds`."""
    kept, spent = [], 0
    for line in lines:
        cost = estimate_tokens(line) + 1
        if spent + cost <= funds:
            kept.append(line)
            spent += cost
    return kept


def nudge_parts(
    messages: list[Message],
    shape: Layout,
    message_tokens: list[int],
    signals: list[Signals],
    settings: Settings,
    funds: float,
) -> list[Part]:
    """The synthetic text part (zero or one) to append at the end of the context for this step.

    Reads, per message, its step (`shape`), its estimated tokens and its `Signals`; `funds`
    is what this request's cuts save, in write-price tokens (see `funded`).
    """
    current = shape.step
    if current < 1 or not messages:
        return []
    steps = shape.message_steps
    memories = by_step(steps, (list(s.memories) for s in signals))
    step_tokens: dict[int, int] = {}
    for step, tokens in zip(steps, message_tokens, strict=True):
        step_tokens[step] = step_tokens.get(step, 0) + tokens
    edited = by_step(steps, (list(s.edited) for s in signals))
    reads = [(steps[index], path) for index, s in enumerate(signals) for path in s.compressed_reads]
    texts = [
        text
        for text in (
            memory_nudge(memories, current),
            pressure_nudge(step_tokens, current, settings),
            reread_nudge(edited, reads, current, shape.jumps, settings),
        )
        if text
    ]
    lines = funded([f"[deepmem] {text}" for text in texts], funds)
    if not lines:
        return []
    last = messages[-1]
    return [
        {
            "id": f"{NUDGE_PREFIX}{current}",
            "sessionID": last["info"].get("sessionID", ""),
            "messageID": last["info"].get("id", ""),
            "type": "text",
            "synthetic": True,
            "text": "\n".join(lines),
            "metadata": {"deepmem": msgspec.to_builtins(AppendedMark("nudge"))},
        }
    ]
