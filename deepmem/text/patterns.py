"""Line patterns the compressors keep: errors, failing tests, exit status, definitions, headers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import msgspec

# The alternatives that can start anywhere come first and `AssertionError` is left to
# `Error\b`: whether a line matches is unchanged, and the search is about twice as fast.
ERROR_LINE = re.compile(
    r"(?:error|exception|warning)\b|\b(?:fatal|panic|failed|failure)\b|traceback \(most recent call last\)|"
    r"^\s*(?:file \".*\", line \d+|assert\b)|^e\s{2,}",
    re.IGNORECASE,
)
# `\S::` rather than `\S+::`: the same lines match, without re-scanning long words.
FAILING_TEST = re.compile(
    r"^(?:FAILED|ERROR|FAIL:|ERROR:)\s+\S|\S::\S+\s+(?:FAILED|ERROR)\b|^_{3,} \S.* _{3,}$"
)
SUMMARY = re.compile(
    r"^=+ .*\b(?:passed|failed|errors?|skipped|xfailed)\b.* =+$|^(?:Ran \d+ tests?|OK\b|FAILED \()|"
    r"<returncode>|returncode|exit (?:code|status)",
    re.IGNORECASE,
)
DIFF_FILE = re.compile(r"^diff --git ")
"""The header naming each file a diff changes (`git diff` before a commit or a submission)."""
DEFINITION = re.compile(
    r"^(?:\s*\d+(?::\s|\t|→|\|\s))?\s*(?:@\w|(?:async\s+)?def\s|class\s|function\s|export\s|interface\s|"
    r"struct\s|enum\s|impl\b|fn\s|pub\s+fn\s|func\s|type\s+\w+\s*=|type\s+\w+\s+(?:struct|interface)\b)"
)
HEADER = re.compile(r"^\s*#{1,6}\s+\S|^\s*\*\*[^*]+\*\*\s*:?\s*$")
PATH = re.compile(r"(?:^|[\s`'\"(])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b")


SCAN_CHARS = 1_000
"""Patterns look at the first characters of a line only (a 10 MB line stays linear)."""


def fold(text: str) -> str:
    """The text casefolded, dotted and dotless i made plain `i`: any text a case-insensitive
    pattern matches holds, once folded, the lower-case ASCII words of that pattern."""
    return text.casefold().replace("ı", "i").replace("\u0307", "")


def lines_holding(text: str, words: Iterable[str]) -> list[int]:
    """Numbers of the lines of `text` in which one of the words occurs, in order."""
    positions = []
    for word in words:
        at = text.find(word)
        while at >= 0:
            positions.append(at)
            at = text.find(word, at + 1)
    numbers, number, previous = [], 0, 0
    for at in sorted(positions):
        number += text.count("\n", previous, at)
        previous = at
        if not numbers or numbers[-1] != number:
            numbers.append(number)
    return numbers


class Needles(msgspec.Struct, frozen=True):
    """What every match of a line pattern holds: one of `words` somewhere in its line, or
    one of `starts` at its start (both looked for in the folded text when `folded`)."""

    words: tuple[str, ...]
    starts: tuple[str, ...] = ()
    folded: bool = False


ERROR_WORDS = ("error", "exception", "warning", "fatal", "panic", "fail", "traceback", 'file "', "assert")
NEEDLES: dict[re.Pattern[str], Needles] = {
    FAILING_TEST: Needles(("::",), starts=("FAIL", "ERROR", "___")),
    SUMMARY: Needles(("returncode", "exit "), starts=("=", "r", "o", "f"), folded=True),
    ERROR_LINE: Needles(ERROR_WORDS, starts=("e",), folded=True),
    DIFF_FILE: Needles((), starts=("diff --git ",)),
    DEFINITION: Needles(
        ("@", "def", "class", "function", "export", "interface", "struct", "enum", "impl", "fn", "func", "type")
    ),
}
"""Patterns whose candidate lines are found first by plain substring search over the whole
text: the pattern then runs on those lines only (most lines of an output are none)."""


def candidate_lines(haystack: str, needles: Needles) -> list[int]:
    """Numbers of the lines that may match a pattern with these needles, in order (`haystack`
    is the text, folded when the needles are)."""
    numbers = set(lines_holding(haystack, needles.words))
    numbers.update(number + 1 for number in lines_holding(haystack, ["\n" + start for start in needles.starts]))
    if haystack.startswith(needles.starts):
        numbers.add(0)
    return sorted(numbers)


def names_a_path(text: str) -> bool:
    """True when the start of a text holds a path (`PATH`, which needs a `/`)."""
    return "/" in text and PATH.search(text, 0, SCAN_CHARS) is not None


def lines_matching(lines: list[str], *patterns: re.Pattern[str]) -> Iterator[int]:
    """Indices of the lines each pattern finds, pattern by pattern (priority order), lazily:
    a reader that has enough key lines stops the search."""
    haystacks: dict[bool, str] = {}
    for pattern in patterns:
        needles = NEEDLES.get(pattern)
        if needles is None:
            indices: Iterable[int] = range(len(lines))
        else:
            if needles.folded not in haystacks:
                text = "\n".join(lines)
                haystacks[needles.folded] = fold(text) if needles.folded else text
            indices = candidate_lines(haystacks[needles.folded], needles)
        for index in indices:
            if pattern.search(lines[index], 0, SCAN_CHARS):
                yield index


def command_key_lines(lines: list[str]) -> Iterator[int]:
    """Failing tests first, then summary/exit lines, the files a diff changes, then error lines
    (indices, by priority)."""
    return lines_matching(lines, FAILING_TEST, SUMMARY, DIFF_FILE, ERROR_LINE)
