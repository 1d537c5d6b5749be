"""Line patterns the compressors keep: errors, failing tests, exit status, definitions, headers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

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
DEFINITION = re.compile(
    r"^(?:\s*\d+(?::\s|\t))?\s*(?:@\w|(?:async\s+)?def\s|class\s|function\s|export\s|interface\s|"
    r"struct\s|enum\s|impl\b|fn\s|pub\s+fn\s|func\s|type\s+\w+\s*=)"
)
HEADER = re.compile(r"^\s*#{1,6}\s+\S|^\s*\*\*[^*]+\*\*\s*:?\s*$")
PATH = re.compile(r"(?:^|[\s`'\"(])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b")


SCAN_CHARS = 1_000
"""Patterns look at the first characters of a line only (a 10 MB line stays linear)."""


def fold(text: str) -> str:
    """The text casefolded, dotted and dotless i made plain `i`: any text a case-insensitive
    pattern matches holds, once folded, the lower-case ASCII words of that pattern."""
    return text.casefold().replace("ı", "i").replace("\u0307", "")


def may_fail_test(line: str) -> bool:
    """False for a line FAILING_TEST cannot match."""
    return line.startswith(("FAIL", "ERROR", "___")) or "::" in line


def may_summarise(line: str) -> bool:
    """False for a line SUMMARY cannot match."""
    if line[:1] in "=rRoOfF":
        return True
    folded = fold(line[:SCAN_CHARS])
    return "returncode" in folded or "exit " in folded


ERROR_WORDS = ("error", "exception", "warning", "fatal", "panic", "fail", "traceback", 'file "', "assert")


def may_be_error(line: str) -> bool:
    """False for a line ERROR_LINE cannot match."""
    if line[:1] in "eE":
        return True
    folded = fold(line[:SCAN_CHARS])
    return any(word in folded for word in ERROR_WORDS)


def any_line(line: str) -> bool:
    """The check of a pattern without a cheaper one: every line may match."""
    return True


PREFILTERS: dict[re.Pattern[str], Callable[[str], bool]] = {
    FAILING_TEST: may_fail_test,
    SUMMARY: may_summarise,
    ERROR_LINE: may_be_error,
}
"""Cheap checks that rule a line out before a pattern's search (most lines are ruled out)."""


def names_a_path(text: str) -> bool:
    """True when the start of a text holds a path (`PATH`, which needs a `/`)."""
    return "/" in text and PATH.search(text, 0, SCAN_CHARS) is not None


def lines_matching(lines: list[str], *patterns: re.Pattern[str]) -> Iterator[int]:
    """Indices of the lines each pattern finds, pattern by pattern (priority order), lazily:
    a reader that has enough key lines stops the search."""
    return (
        i
        for pattern in patterns
        for i, line in enumerate(lines)
        if PREFILTERS.get(pattern, any_line)(line) and pattern.search(line, 0, SCAN_CHARS)
    )


def command_key_lines(lines: list[str]) -> Iterator[int]:
    """Failing tests first, then summary/exit lines, then error lines (indices, by priority)."""
    return lines_matching(lines, FAILING_TEST, SUMMARY, ERROR_LINE)
