"""The way-back measure: a missing quoted line is found by a cut run, by a key only, or not at all."""

from __future__ import annotations

import pytest

from bench.locate import where_shown

LINES = [f"    value_{n} = compute(value_{n - 1})  # line {n}" for n in range(1, 301)]


def history(shown_output: str) -> tuple[list[dict], list[dict]]:
    """One `nl` read of a 300-line file, as recorded and as the request shows it."""

    def message(output: str) -> dict:
        state = {"status": "completed", "input": {"command": "nl -ba src/values.py"}, "output": output}
        return {"info": {"role": "assistant"}, "parts": [{"type": "tool", "tool": "bash", "state": state}]}

    numbered = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(LINES, 1))
    return [message(numbered)], [message(shown_output)]


@pytest.mark.parametrize(
    ("shown", "expected"),
    [
        ("head\n[… lines 100-200 cut]\ntail\n[… 101 of 300 lines cut · ccr:0123456789abcdef · deep_expand to restore]", "range"),
        ("head\n[… lines 201-290 cut]\ntail\n[… 90 of 300 lines cut · ccr:0123456789abcdef · deep_expand to restore]", "key"),
        ("[output cleared]", "none"),
    ],
)
def test_a_missing_line_is_found_by_its_run_its_key_or_not_at_all(shown: str, expected: str) -> None:
    """Line 150 of the read: inside a cut run, outside every run but under a key, or nowhere."""
    raw, sent = history(shown)
    assert where_shown(raw, sent, LINES[149].strip()) == expected
