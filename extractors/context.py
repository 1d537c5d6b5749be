"""Critical context: the paths, commands and identifiers the session keeps returning to."""

from __future__ import annotations

import re
from collections import Counter

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.errors import call_label

PATH = re.compile(r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|(?<![\w/.-])[\w-]+\.(?:py|js|ts|tsx|rs|go|java|rb|c|h|cpp|toml|json|ya?ml|md|cfg|ini|txt|sh)\b")
IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*[A-Za-z0-9_](?:\(\))?")
QUOTED = re.compile(r"`([^`\n]{2,200})`")
"""Prose is read only inside backticks, where paths and identifiers are quoted."""
MIN_REPEATS = 2
LIMIT = 8


class CriticalContext(msgspec.Struct, frozen=True):
    """Recurring references, most frequent first, each with its count."""

    paths: tuple[tuple[str, int], ...]
    commands: tuple[tuple[str, int], ...]
    identifiers: tuple[tuple[str, int], ...]


def find_context(timeline: Timeline) -> CriticalContext:
    """Count references in tool inputs and quoted in prose; keep those that recur."""
    paths: Counter[str] = Counter()
    commands: Counter[str] = Counter()
    identifiers: Counter[str] = Counter()
    for call in timeline.calls:
        file_path = call.input.get("filePath")
        if isinstance(file_path, str):
            paths[_relative(file_path, timeline.root)] += 1
        if call.command:
            commands[call_label(call)] += 1
            paths.update(_relative(p, timeline.root) for p in set(PATH.findall(call.command)))
    for prose in timeline.prose:
        for span in set(QUOTED.findall(prose.text)):
            if PATH.fullmatch(span):
                paths[_relative(span, timeline.root)] += 1
            elif IDENTIFIER.fullmatch(span):
                identifiers[span] += 1
    return CriticalContext(_top(paths), _top(commands), _top(identifiers))


def _relative(path: str, root: str) -> str:
    prefix = root.rstrip("/") + "/" if root else ""
    path = path.removeprefix("./")
    return path[len(prefix) :] if prefix and path.startswith(prefix) else path


def _top(counter: Counter[str]) -> tuple[tuple[str, int], ...]:
    """Items seen at least MIN_REPEATS times, most frequent first, ties by name."""
    ranked = sorted((item for item in counter.items() if item[1] >= MIN_REPEATS), key=lambda item: (-item[1], item[0]))
    return tuple(ranked[:LIMIT])
