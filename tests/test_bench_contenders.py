"""The benchmark's contenders that re-implement someone else's rule: OpenCode's prune, the OpenAI-format view for headroom."""

from __future__ import annotations

from bench.contenders.headroom import chat_messages
from bench.contenders.opencode_prune import PRUNED, OpenCodePrune, prune_candidates


def user(text: str) -> dict:
    """A user message."""
    return {"info": {"role": "user"}, "parts": [{"type": "text", "text": text}]}


def assistant(call: str, output_chars: int, tool: str = "bash") -> dict:
    """An assistant message with one completed tool call of the given output size."""
    part = {
        "type": "tool",
        "tool": tool,
        "callID": call,
        "state": {"status": "completed", "input": {"command": "ls"}, "output": "x" * output_chars},
    }
    return {"info": {"role": "assistant"}, "parts": [{"type": "text", "text": f"calling {call}"}, part]}


TURN_ONE = [user("first"), *(assistant(f"a{n}", 40_000) for n in range(8))]
"""Eight outputs of 10,000 estimated tokens each."""


def test_prune_keeps_the_newest_40k_and_needs_20k_to_act() -> None:
    """Of eight 10K outputs, with two later turns protected, the oldest four go (the fifth crosses 40K)."""
    history = [*TURN_ONE, user("second"), assistant("b", 100), user("third")]
    assert sorted(prune_candidates(history, set())) == [(1, 1), (2, 1), (3, 1), (4, 1)]
    assert prune_candidates([*TURN_ONE[:6], user("second"), user("third")], set()) == []  # 50K: only 10K to free


def test_prune_protects_the_last_two_turns_and_the_skill_tool() -> None:
    """Nothing is pruned within the last two turns; skill outputs are never counted or pruned."""
    assert prune_candidates([*TURN_ONE, user("second")], set()) == []
    skills = [user("first"), *(assistant(f"s{n}", 40_000, tool="skill") for n in range(8)), user("2"), user("3")]
    assert prune_candidates(skills, set()) == []


def test_prune_runs_when_a_turn_ends_and_stays() -> None:
    """Nothing changes within a turn; when the third turn has ended, the first is pruned, for good."""
    contender = OpenCodePrune()
    assert contender.messages(TURN_ONE) == TURN_ONE
    later = [*TURN_ONE, user("second"), assistant("b", 100), user("third"), assistant("c", 100), user("fourth")]
    assert contender.messages(later[:-2]) == later[:-2]
    seen = contender.messages(later)
    outputs = [part["state"]["output"] for message in seen for part in message["parts"] if part["type"] == "tool"]
    assert outputs[:4] == [PRUNED] * 4
    assert PRUNED not in outputs[4:]
    assert contender.messages([*later, assistant("d", 100)])[1]["parts"][1]["state"]["output"] == PRUNED


def test_chat_messages_pair_each_call_with_its_output() -> None:
    """Assistant text + tool_calls, then one tool message per call; outputs located by call id."""
    chat, places = chat_messages([user("fix it"), assistant("c1", 5)])
    assert [entry["role"] for entry in chat] == ["user", "assistant", "tool"]
    assert chat[1]["tool_calls"][0]["id"] == "c1"
    assert chat[2] == {"role": "tool", "tool_call_id": "c1", "content": "xxxxx"}
    assert places == {"c1": (1, 1)}
