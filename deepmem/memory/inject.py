"""What memory puts into a model's context: the stable block, the whisper, and search results as text."""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from deepmem.memory.age import coarse_date, relative_age
from deepmem.memory.entries import Entry
from deepmem.memory.episodes import brief
from deepmem.tokens import estimate_tokens

STABLE_BUDGET_TOKENS = 330
"""With the mean whisper, memory stays under 400 tokens per request on the later half of claude-entire (368; 423 at
370); the hot files keep their place, rules fill what is left."""
MAX_COMMANDS = 5
MAX_HOT_FILES = 14
"""On claude-entire, 14 name at start 0.48 of the files a session then uses that earlier sessions touched (0.50
early, 0.46 late; 12: 0.45, 0.44 late), at a precision of 0.18 either way."""
MIN_HOT_SESSIONS = 2
"""A file is hot when recent sessions changed it at least this often."""
MAX_ROLES = 1
MAX_RULES = 4
MAX_DECISIONS = 2
RULE_CHARS = 160
WHISPER_BUDGET_TOKENS = 300
WHISPER_HITS = 3
"""Hits the whisper considers; it shows at most WHISPER_SHOWN of those the session was not shown yet (on the
session's first user message, which opens the work, WHISPER_SHOWN_FIRST)."""
WHISPER_SHOWN = 1
WHISPER_SHOWN_FIRST = 2
WHISPER_CHARS = 180
WHISPER_GOAL_CHARS = 60
"""A whispered episode keeps this much of its goal, so that the files it changed fit the line."""
WHISPER_MIN_SIMILARITY = 0.5
WHISPER_MIN_COVERAGE = 0.5
"""A whisper hit needs this cosine similarity, or this share of the query's terms with some BM25 score."""
ENTRY_CHARS = 400

BLOCK_TOKENS = 40
"""The block's own wrapping, counted against its budget."""


def _line(entry: Entry, when: str, chars: int = ENTRY_CHARS) -> str:
    """One entry on one line, cut to `chars` characters, with its scope and `when` it was stored."""
    text = " ".join(entry.text.split())
    text = text if len(text) <= chars else text[: chars - 1] + "…"
    notes = ", ".join(part for part in ("global" if entry.scope == "global" else "", when) if part)
    return f"- [{entry.id}]{f' ({notes})' if notes else ''} {text}"


def stable_text(commands: list[tuple[str, int]], files: list[tuple[str, list[str]]], rules: list[Entry],
                decisions: list[Entry], left_out: int = 0, budget: int = STABLE_BUDGET_TOKENS) -> str:
    """The system-prompt block: the project's commands, its hot files and their roles, its top rules; '' when none
    clears its bar (the tool schemas say what the tools do).

    Each part is capped and the whole stays under the budget; entries carry the month they were stored,
    never a relative age: the block must not change with the clock.
    """
    used = BLOCK_TOKENS
    sections: list[str] = []
    if commands:
        sections.append("Commands that worked in this project (exit 0; sessions): " + ", ".join(
            f"`{command}` ({count})" for command, count in commands))
    if files:
        sections.append("Files changed most in recent sessions: " + file_list(files))
    used += sum(estimate_tokens(section) for section in sections)
    for title, group in (("Rules (always respect):", rules), ("Key decisions:", decisions)):
        lines = []
        for entry in group:
            line = _line(entry, coarse_date(entry.time), RULE_CHARS)
            cost = estimate_tokens(line) + 1
            if used + cost > budget:
                left_out += 1
                continue
            used += cost
            lines.append(line)
        if lines:
            sections.append("\n".join([title, *lines]))
    if not sections:
        return ""
    if left_out:
        sections.append(f"({left_out} more stored; memory_search finds them, and past sessions.)")
    body = "\n\n".join(sections)
    return f"<deep-memory>\n{body}\n</deep-memory>"


def common_folder(paths: list[str]) -> str:
    """The folder, ending in `/`, that holds the most of the paths under one top folder ('' when fewer than two)."""
    tops = Counter(path.split("/", 1)[0] for path in paths if "/" in path)
    if not tops:
        return ""
    top = min(tops, key=lambda name: (-tops[name], name))
    group = [path for path in paths if path.startswith(top + "/")]
    folder = posixpath.dirname(posixpath.commonprefix(group)) if len(group) > 1 else ""
    return folder + "/" if folder else ""


def file_list(files: list[tuple[str, list[str]]]) -> str:
    """Hot files with their roles: those under the most shared folder after it, the others in full."""
    folder = common_folder([path for path, _ in files])

    def shown(path: str, names: list[str]) -> str:
        return f"`{path}`" + (f" ({', '.join(f'`{name}`' for name in names)})" if names else "")

    inside = [shown(path[len(folder):], names) for path, names in files if folder and path.startswith(folder)]
    outside = [shown(path, names) for path, names in files if not (folder and path.startswith(folder))]
    groups = ([f"in `{folder}`: " + ", ".join(inside)] if inside else []) + ([", ".join(outside)] if outside else [])
    return "; ".join(groups)


def whisper_text(hits: list[tuple[Entry, float]], now: datetime, shown: int = WHISPER_SHOWN_FIRST) -> str | None:
    """The end-of-context reminder for the newest user message (ages relative to `now`), or None without hits."""
    lines = []
    used = 30
    for entry, _score in hits[:shown]:
        if entry.type == "episode":
            entry = Entry(entry.id, entry.type, brief(entry.text, WHISPER_GOAL_CHARS), entry.time, entry.scope)
        line = _line(entry, relative_age(entry.time, now), WHISPER_CHARS)
        if used + estimate_tokens(line) > WHISPER_BUDGET_TOKENS:
            break
        used += estimate_tokens(line)
        lines.append(line)
    if not lines:
        return None
    return "<deep-memory-recall>\nMemories that may bear on this:\n" + "\n".join(
        lines
    ) + "\n</deep-memory-recall>"


MAX_TOGETHER = 4
"""Files named as changing together with one a query names."""


def together_text(found: dict[str, Counter[str]]) -> str:
    """One line per file: the files past sessions changed with it, most often first ('' for none)."""
    lines = []
    for path, others in sorted(found.items()):
        ranked = sorted(others.items(), key=lambda pair: (-pair[1], pair[0]))[:MAX_TOGETHER]
        lines.append(f"`{path}` changed together with " + ", ".join(f"`{other}` ({count} sessions)" for other, count in ranked))
    return "\n".join(lines)


def format_hits(hits: Iterable[dict[str, Any]], now: datetime) -> str:
    """Search results as compact text for the model (the memory_search tool result), ages relative to `now`."""
    hits = list(hits)
    if not hits:
        return "No stored memory matches."
    lines = [f"{len(hits)} {'memory' if len(hits) == 1 else 'memories'}:"]
    for number, hit in enumerate(hits, 1):
        age = relative_age(hit.get("time", ""), now)
        meta = " · ".join(part for part in (hit["type"], hit["scope"], hit.get("time", ""), age) if part)
        lines.append(f"{number}. [{hit['id']}] {meta}")
        lines.extend(f"   {line}" for line in hit["text"].split("\n"))
    return "\n".join(lines)
