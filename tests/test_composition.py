"""The composition runner: its rows add up to the replay's tokens, and each old view lands in the row its file's story says."""

from __future__ import annotations

from bench.contenders import Session, make_contenders
from bench.corpora import load_messages
from bench.runners.composition import (
    OLD_ROWS,
    Result,
    compose_session,
    is_whole,
    next_quote,
    old_row,
    session_results,
    without_system_blocks,
)
from bench.tokens_o200k import TokenCounter
from deepmem.bill.prices import FAMILIES
from deepmem.replay.loop import replay_session

from .conftest import FIXTURES

SESSION = FIXTURES / "sessions" / "django-15499.json"


def test_the_rows_add_up_to_the_replays_message_tokens() -> None:
    """The rows sum to what a separate replay of deepmem meters; the old whole rows and the quote timings each sum to their total."""
    messages = load_messages(SESSION)
    tally, meter = compose_session(SESSION, messages, TokenCounter(), {}, "anthropic")
    players, _ = make_contenders(["deepmem"], Session(messages, (FAMILIES["anthropic"],)))
    alone = replay_session(messages, players, TokenCounter())["deepmem@anthropic"]
    assert tally.total == meter.tokens == alone.tokens > 0
    old = [tokens for row, tokens in tally.rows.items() if row in OLD_ROWS and row != "shell_views"]
    assert 0 < tally.rows["shell_views"] <= tally.rows["read_edited_since"] + tally.rows["read_latest"] + tally.rows["read_again_since"]
    assert sum(old) == tally.rows["old_whole"] == sum(tally.quotes.values()) > 0
    assert tally.rows["cut"] > 0 and tally.rows["recent_whole"] > 0
    assert tally.unmatched == 0


def tool(step: int, name: str, inputs: dict, output: str) -> dict:
    """An assistant message of one step with one completed tool call."""
    part = {"id": f"p{step}", "type": "tool", "tool": name, "state": {"status": "completed", "input": inputs, "output": output}}
    return {"info": {"id": f"m{step}", "role": "assistant"}, "parts": [part]}


READ_A = "1: def alpha_function_name():\n2:     return compute_the_value()"
STORY = [
    {"info": {"id": "u", "role": "user"}, "parts": [{"type": "text", "text": "fix a.py"}]},
    tool(1, "read", {"filePath": "a.py"}, READ_A),
    tool(2, "read", {"filePath": "b.py"}, "1: something long enough here"),
    tool(3, "edit", {"filePath": "a.py", "oldString": "    return compute_the_value()", "newString": "    return 1"}, "Edit applied."),
    tool(4, "read", {"filePath": "b.py"}, "1: something long enough here"),
    tool(5, "bash", {"command": "pytest -q tests"}, "3 passed"),
    tool(6, "bash", {"command": "sed -n '1,2p' a.py"}, "def alpha_function_name():\n    return 1"),
]


def test_a_views_row_follows_what_became_of_its_file() -> None:
    """A read edited later is superseded from the step after the edit; a file read again, by the
    later read; the newest view of a file (a read, or a shell command printing it) is the latest;
    an edit's quote is found at its step."""
    results = session_results(STORY)
    read_a, read_b, edit, read_b_again, run, sed_a = (results[f"p{step}"] for step in range(1, 7))
    assert (read_a.edited_at, read_a.read_again_at, read_a.quoted_at) == (3, 6, (3,))
    assert (read_b.edited_at, read_b.read_again_at) == (None, 4)
    assert old_row(read_a, 3) == "read_latest"
    assert old_row(read_a, 20) == "read_edited_since"
    assert old_row(read_b, 20) == "read_again_since"
    assert old_row(read_b_again, 20) == "read_latest"
    assert old_row(sed_a, 20) == "read_latest" and sed_a.group == "shell_view"
    assert old_row(edit, 20) == old_row(run, 20) == "edits_and_runs"


def test_the_next_quote_is_soon_later_or_never() -> None:
    """Quoted at the request's own step or the 12 after it: soon; 13 or more steps on: later; none left: never."""
    result = Result("text", "text", 1, "read", "read a.py", quoted_at=(20, 40))
    assert next_quote(result, 8) == "soon"
    assert next_quote(result, 20) == "soon"
    assert next_quote(result, 7) == "later"
    assert next_quote(result, 21) == "later"
    assert next_quote(result, 41) == "never"


def test_a_view_without_its_system_reminder_is_still_whole() -> None:
    """The host's reminder taken out (deepmem's marker in its place) leaves the view whole; a line cut does not."""
    recorded = "1: alpha\n2: beta\n<system-reminder>\nbe careful\n</system-reminder>\n"
    result = Result(recorded, without_system_blocks(recorded), 1, "read", "read a.py")
    marker = "[… 1 system-reminder block (42 chars) removed · ccr:5c6b5b5730109185 · deep_expand to restore]"
    assert is_whole(recorded, result)
    assert is_whole(f"1: alpha\n2: beta\n{marker}", result)
    assert not is_whole(f"1: alpha\n{marker}", result)
