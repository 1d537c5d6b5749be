"""Memory entries and their Markdown form: one `- [id] (time) text` line each, grouped by type."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Literal

import msgspec
import xxhash

from deepmem.types import InputError

EntryType = Literal["decision", "constraint", "gotcha", "fact", "note", "episode"]
TYPES: tuple[EntryType, ...] = ("decision", "constraint", "gotcha", "fact", "note", "episode")
"""An episode is one past session (goal, files changed, what worked); episodes live in episodes.md."""
HEADINGS = {kind: kind.capitalize() + "s" for kind in TYPES}
MAX_ENTRY_CHARS = 8_000

TITLE = "# Memory"
HELP = (
    "<!-- One entry per line: `- [id] (time) text`; indent follow-up lines by two spaces. "
    "Edit freely: ids keep entries stable; deepmem re-reads this file on the next search. -->"
)
UNPARSED_HEADING = "## Unparsed lines"
ENTRY_LINE = re.compile(r"^- \[(?P<id>[^\]\s]+)\](?: \((?P<time>[^()\n]*)\))? (?P<text>\S.*)$")
PLAIN_LINE = re.compile(r"^- (?P<text>\S.*)$")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
ID_TEXT = re.compile(r"^[^\]\s]{1,64}$")


class Entry(msgspec.Struct, frozen=True):
    """One memory: a stable id, its type, the text, when it was stored, and its scope."""

    id: str
    type: EntryType
    text: str
    time: str = ""
    scope: str = "project"


class Problem(msgspec.Struct, frozen=True):
    """A line of a memory file that could not be read as an entry; kept verbatim."""

    line: int
    text: str
    reason: str


class Parsed(msgspec.Struct):
    """The entries of a memory file plus the lines that did not parse."""

    entries: list[Entry]
    problems: list[Problem]


def clean_text(text: str) -> str:
    """Validate and tidy an entry's text: no control characters, no blank lines, bounded size."""
    if len(text) > MAX_ENTRY_CHARS:
        raise InputError(f"memory text is {len(text):,} characters; the limit is {MAX_ENTRY_CHARS:,}")
    text = text.replace("\r\n", "\n").replace("\t", " ")
    if CONTROL.search(text):
        raise InputError("memory text contains control characters")
    lines = [line.rstrip() for line in text.strip().split("\n")]
    cleaned = "\n".join(line for line in lines if line.strip())
    if not cleaned:
        raise InputError("memory text is empty")
    return cleaned


def check_id(entry_id: str) -> str:
    """An id is 1–64 characters with no whitespace and no `]`."""
    if not isinstance(entry_id, str) or not ID_TEXT.match(entry_id):
        raise InputError(f"bad memory id {entry_id!r}: 1-64 characters, no spaces or ']'")
    return entry_id


def check_time(time: str) -> str:
    """A time text fits on the entry line: one line, no parentheses, at most 64 characters."""
    if not isinstance(time, str) or len(time) > 64 or any(char in time for char in "()\n\r"):
        raise InputError(f"bad memory time {time!r}: one line, no parentheses, at most 64 characters")
    if CONTROL.search(time):
        raise InputError("memory time contains control characters")
    return time.strip()


def check_type(kind: str) -> EntryType:
    """The entry type, or an InputError listing the valid ones."""
    if kind not in TYPES:
        raise InputError(f"unknown memory type {kind!r}; choose one of: {', '.join(TYPES)}")
    return kind  # type: ignore[return-value]


@lru_cache(maxsize=1 << 18)
def normalise(text: str) -> str:
    """The form two texts share when they are exact duplicates: NFKC, casefolded, words only."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.findall(r"\w+", folded))


def new_id(text: str, taken: set[str] | dict[str, object]) -> str:
    """A short id derived from the text, lengthened until it is not taken."""
    digest = xxhash.xxh3_128_hexdigest(normalise(text).encode())
    for width in range(8, 33):
        if digest[:width] not in taken:
            return digest[:width]
    raise InputError("cannot derive a free memory id")


def section_type(heading: str) -> EntryType | None:
    """The entry type a `## Heading` names (singular or plural, any case), or None."""
    word = heading.strip().casefold()
    for kind in TYPES:
        if word in (kind, kind + "s"):
            return kind
    return None


def parse_markdown(text: str, scope: str = "project") -> Parsed:
    """Read a MEMORY.md; unreadable lines become problems (with their 1-based line number)."""
    entries: list[Entry] = []
    problems: list[Problem] = []
    taken: set[str] = set()
    kind: EntryType | None = None
    lines: list[str] = []
    in_unparsed = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if line.startswith("## "):
            in_unparsed = line.rstrip() == UNPARSED_HEADING
            kind = section_type(line[3:])
            lines = []
            if kind is None and not in_unparsed:
                problems.append(Problem(number, line, "unknown section heading"))
            continue
        if not stripped or (line.startswith("# ") and number == 1) or stripped.startswith("<!--"):
            continue
        if line.startswith("  ") and lines and kind is not None:
            lines.append(line[2:].rstrip())
            entries[-1] = msgspec.structs.replace(entries[-1], text="\n".join(lines))
            continue
        match = ENTRY_LINE.match(line) or PLAIN_LINE.match(line)
        if in_unparsed or kind is None or match is None:
            reason = "kept from an earlier unreadable line" if in_unparsed else (
                "entry outside a type section" if match else "not a `- [id] (time) text` entry"
            )
            problems.append(Problem(number, line, reason))
            lines = []
            continue
        body = match["text"]
        entry_id = match.groupdict().get("id") or new_id(body, taken)
        if entry_id in taken:
            problems.append(Problem(number, line, f"duplicate id {entry_id}; given a new id"))
            entry_id = new_id(body + f"\x00{number}", taken)
        taken.add(entry_id)
        lines = [body]
        entries.append(Entry(entry_id, kind, body, (match.groupdict().get("time") or "").strip(), scope))
    return Parsed(entries, problems)


@lru_cache(maxsize=1 << 18)
def render_entry(entry: Entry) -> str:
    """One entry as Markdown: the first line carries id and time, follow-up lines are indented.

    An entry without a time (written by hand) shows none, unless its text starts with `(`,
    which would then read as a time."""
    first, *rest = entry.text.split("\n")
    when = f" ({entry.time})" if entry.time or first.startswith("(") else ""
    return "\n".join([f"- [{entry.id}]{when} {first}", *(f"  {line}" for line in rest)])


def _blocks(entries: list[Entry], problems: list[Problem], title: str) -> list[tuple[EntryType | None, str]]:
    """The blocks of a memory file, each with the entry type of its section (None for the others)."""
    blocks: list[tuple[EntryType | None, str]] = [(None, title), (None, HELP)]
    groups: dict[EntryType, list[str]] = {kind: [] for kind in TYPES}
    for entry in entries:
        groups[entry.type].append(render_entry(entry))
    blocks.extend((kind, f"## {HEADINGS[kind]}\n\n" + "\n".join(lines)) for kind, lines in groups.items() if lines)
    kept = [problem.text for problem in problems if problem.text.strip() != UNPARSED_HEADING]
    if kept:
        blocks.append((None, UNPARSED_HEADING + "\n\n" + "\n".join(kept)))
    return blocks


def render_markdown(entries: list[Entry], problems: list[Problem] = (), title: str = TITLE) -> str:  # type: ignore[assignment]
    """MEMORY.md text: entries grouped by type in a fixed order; unreadable lines kept at the end."""
    return "\n\n".join(block for _, block in _blocks(entries, problems, title)) + "\n"


def render_with_ends(entries: list[Entry], problems: list[Problem], title: str) -> tuple[bytes, dict[EntryType, int]]:
    """The rendered file as UTF-8 and, per type section, the byte offset just after its last entry."""
    parts, ends, offset = [], {}, 0
    for kind, block in _blocks(entries, problems, title):
        raw = block.encode("utf-8")
        offset += len(raw)
        if kind is not None:
            ends[kind] = offset
        parts.append(raw)
        offset += 2
    return b"\n\n".join(parts) + b"\n", ends
