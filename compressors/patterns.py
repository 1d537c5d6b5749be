"""Line patterns the compressors keep: errors, failing tests, exit status, definitions, headers."""

from __future__ import annotations

import re
from collections.abc import Iterator

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


def names_a_path(text: str) -> bool:
    """True when the start of a text holds a path (`PATH`, which needs a `/`)."""
    return "/" in text and PATH.search(text, 0, SCAN_CHARS) is not None


def lines_matching(lines: list[str], *patterns: re.Pattern[str]) -> Iterator[int]:
    """Indices of the lines each pattern finds, pattern by pattern (priority order), lazily:
    a reader that has enough key lines stops the search."""
    return (i for pattern in patterns for i, line in enumerate(lines) if pattern.search(line, 0, SCAN_CHARS))


def command_key_lines(lines: list[str]) -> Iterator[int]:
    """Failing tests first, then summary/exit lines, then error lines (indices, by priority)."""
    return lines_matching(lines, FAILING_TEST, SUMMARY, ERROR_LINE)
