"""Runs that are only a status: a command run again later keeps its failures and its summary.

A test or build run whose output a later run of the same command replaced
(`Facts.replaced_runs`) says what was failing then; the later run says what is failing now.
Once old, a run that shows a test runner's summary (`TEST_SUMMARY`) keeps its failures (failing
tests, then error lines), its summary and exit lines, and its last line; any other output (a script's prints, which
later steps quote) is left to `command_output`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from deepmem.text.fields import main_text
from deepmem.text.lines import Budget, shorten_part
from deepmem.text.patterns import ERROR_LINE, FAILING_TEST, SUMMARY, lines_matching
from deepmem.types import Context, Part, Result

NAME = "status_runs"
READS_FACTS = True
"""It applies by `ctx.facts`, so the pipeline never reuses it across batches."""

TEST_SUMMARY = re.compile(
    r"^(?:=+ .*)?\b\d+ (?:passed|failed|tests?)\b|^Ran \d+ tests?\b|^(?:ok|FAIL|PASS|---\s?FAIL:)\s|^test result:|^Tests?:\s",
    re.MULTILINE,
)
"""A line a test runner or build ends with: `3 passed`, `Ran 12 tests`, `ok  pkg`, `--- FAIL:`, `test result:`."""
BUDGET = Budget(head=0, tail=1, key=20, line_chars=240)
"""The last line (the summary most runners end with), and up to 20 failures, summary and error lines."""


def status_lines(lines: list[str]) -> Iterator[int]:
    """Failing tests first, then summary and exit lines, then error lines (indices, by priority)."""
    return lines_matching(lines, FAILING_TEST, SUMMARY, ERROR_LINE)


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep the failures, the summary lines and the last line of a test or build run replaced
    later (an output with a summary line); None for any other output (`command_output` cuts it)."""
    if TEST_SUMMARY.search(main_text(part)) is None:
        return None
    return shorten_part(part, NAME, BUDGET, status_lines)
