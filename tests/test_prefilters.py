"""The substring checks that let a search skip lines or paragraphs never skip a match."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepmem.phrasing import KEY_SENTENCE, KEY_SENTENCE_ANCHORS
from deepmem.text.patterns import (
    DEFINITION,
    ERROR_LINE,
    FAILING_TEST,
    NEEDLES,
    SCAN_CHARS,
    SUMMARY,
    candidate_lines,
    fold,
    lines_matching,
)

PATTERNS = (FAILING_TEST, SUMMARY, ERROR_LINE, DEFINITION)

PIECES = [
    "Error", "ERROR", "error:", "exception", "Warning", "fatal", "panic", "FAILED", "failure", "FAIL:",
    "Traceback (most recent call last)", 'File "a.py", line 3', "assert", "E   ", "e  ", "tests/t.py::test_x",
    "::", "___ test_y ___", "=== 1 failed, 2 passed in 0.1s ===", "Ran 3 tests", "OK", "FAILED (failures=1)",
    "<returncode>1</returncode>", "exit code 2", "exit status", "faİled", "erroR", "traceback", "fıle \"",
    "aſſert", "İ", "ı", "ſ", " ", "\t", "x", "=", "_", ".", ":", "\u0307", "def f():", "  12\tclass A:",
    "@wrap", "async def g", "pub fn h", "func main", "type T = int", "impl X", "enum E", "export const",
]
SENTENCE_PIECES = [
    "We decided", "instead", "MUST", "should not", "shouldn't", "never", "root cause", "The fix", "fixed",
    "the issue was", "the bug is", "because", "fails", "failed", "Error", "decİded", "fıxed", "ſhould not",
    "决定", "必须", "不能", "不要", "修复", "原因", " ", ".", "x", "İ", "ı",
]
lines = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


def assert_never_skipped(line: str) -> None:
    """A pattern finds nothing in a line its needles rule out."""
    for pattern in PATTERNS:
        needles = NEEDLES[pattern]
        if 0 not in candidate_lines(fold(line) if needles.folded else line, needles):
            assert pattern.search(line, 0, SCAN_CHARS) is None, (pattern.pattern, line)


@pytest.mark.parametrize("line", PIECES)
def test_a_piece_ruled_out_never_matches(line: str) -> None:
    """Each piece alone: every word the checks look for is covered."""
    assert_never_skipped(line)


@given(lines)
def test_a_line_ruled_out_never_matches(line: str) -> None:
    """Lines made of several pieces."""
    assert_never_skipped(line)


@given(st.lists(lines, max_size=8))
def test_lines_matching_equals_a_plain_scan(text_lines: list[str]) -> None:
    """With the needles, the same lines come out in the same order."""
    plain = [i for p in PATTERNS for i, line in enumerate(text_lines) if p.search(line, 0, SCAN_CHARS)]
    assert list(lines_matching(text_lines, *PATTERNS)) == plain


@given(st.lists(st.sampled_from(SENTENCE_PIECES), max_size=12).map("".join))
def test_every_decision_holds_an_anchor(text: str) -> None:
    """A paragraph without any of the anchors holds no KEY_SENTENCE match."""
    if KEY_SENTENCE.search(text):
        assert any(anchor in fold(text) for anchor in KEY_SENTENCE_ANCHORS)
