"""Anthropic's context editing as a contender: nothing cleared up to the trigger, past it every tool result but the newest 3."""

from __future__ import annotations

import orjson

from bench.contenders import Session, make_contenders
from bench.contenders.context_editing import CLEARED, ContextEditing, tool_results
from bench.corpora import load_messages
from bench.tokens_o200k import TokenCounter
from deepmem.bill.prices import FAMILIES
from deepmem.replay.loop import Uncompressed, replay_session, session_steps
from deepmem.transform.context import request_units

from .conftest import FIXTURES

DJANGO = load_messages(FIXTURES / "sessions" / "django-15499.json")


def results_of(history: list) -> list[dict]:
    """The state of every tool part with a result, in order."""
    return [history[m]["parts"][p]["state"] for m, p in tool_results(history)]


def input_tokens(history: list) -> int:
    """The history's o200k tokens as the client sends it."""
    return sum(TokenCounter().count_many(request_units(history)[0]))


def test_the_defaults_are_anthropics() -> None:
    """Trigger 100,000 input tokens, keep 3 tool uses."""
    contender = ContextEditing()
    assert (contender.trigger, contender.keep, contender.frame) == (100_000, 3, 0)


def test_nothing_is_cleared_up_to_the_trigger_and_all_but_3_past_it() -> None:
    """With the trigger between two steps' sizes, the smaller request goes as recorded, the larger
    with exactly its 3 newest results whole and every older one the placeholder, inputs kept."""
    steps = [step.history for step in session_steps(DJANGO)]
    small, large = steps[20], steps[40]
    trigger = (input_tokens(small) + input_tokens(large)) // 2
    contender = ContextEditing(trigger=trigger)
    assert contender.messages(small) is small
    sent = contender.messages(large)
    recorded, edited = results_of(large), results_of(sent)
    assert len(recorded) > 3
    whole = [state for state, before in zip(edited, recorded, strict=True) if state == before]
    assert whole == recorded[-3:]
    assert all(CLEARED in (state.get("output"), state.get("error")) for state in edited[:-3])
    assert [state["input"] for state in edited] == [state["input"] for state in recorded]


def test_the_frame_counts_toward_the_trigger() -> None:
    """A history of 10K tokens passes a 100K trigger when the host's frame carries 95K."""
    history = next(step.history for step in session_steps(DJANGO) if len(tool_results(step.history)) > 5)
    assert input_tokens(history) <= 100_000
    assert ContextEditing().messages(history) is history
    assert len([s for s in results_of(ContextEditing(100_000).messages(history)) if CLEARED in s.values()]) == len(
        tool_results(history)
    ) - 3


def test_the_registry_passes_the_frame_and_the_replay_bills_less() -> None:
    """Made from the registry with a session's frame past the trigger, it sends fewer tokens than none."""
    players, skipped = make_contenders(["context-editing"], Session(DJANGO, (FAMILIES["anthropic"],), frame=100_000))
    assert not skipped
    meters = replay_session(DJANGO, [Uncompressed(), *players], TokenCounter(), frame=100_000)
    assert meters["context-editing"].tokens < meters["none"].tokens
    assert meters["context-editing"].steps == meters["none"].steps


def test_the_runner_writes_each_contenders_figures(tmp_path) -> None:
    """On the fixtures, whose requests stay under 100K, context editing costs what none costs; deepmem less."""
    from bench.runners.context_editing import main

    assert main(["--corpus", "fixtures", "--out", str(tmp_path)]) == 0
    figures = orjson.loads((tmp_path / "context-editing.json").read_bytes())["fixtures"]
    rows = figures["contenders"]
    assert set(rows) == {"deepmem", "mask-last-10-every-10", "context-editing"}
    assert rows["context-editing"]["cost"] == rows["context-editing"]["reread"] == 1.0
    assert rows["deepmem"]["cost"] < 1.0
    assert figures["sessions"] == 6
