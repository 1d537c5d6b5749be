"""What recorded usage says about a session's real requests (`bench/usage.py`), the replay's
prefix before every request, and the bill check that compares the two (`bench.runners.bill_check`)."""

from __future__ import annotations

import copy
import statistics
from pathlib import Path

import pytest

from bench.corpora import REPOSITORY, load_messages, session_paths
from bench.runners.bill_check import check_corpus, recorded_bill
from bench.usage import PREFIX_REQUESTS, Usage, one_hour_sessions, real_prefix, recorded_usage, session_usage
from deepmem.bill.prices import FAMILIES, one_hour_cache
from deepmem.replay.audit import Estimates
from deepmem.replay.loop import Uncompressed, replay_session, session_steps
from deepmem.transform.context import context_units

USAGE = REPOSITORY / "fixtures" / "usage"
ONE_HOUR = USAGE / "claude-code__2026-01-28-bc3bf53b-19fe-4209-b30a-a1acffaf6703.json"
FIVE_MINUTES = USAGE / "claude-code__2026-01-28-fff6617b-2974-4b80-8344-bb87e325a67b.json"
ANTHROPIC = FAMILIES["anthropic"]


def gaps(path: Path) -> list[int]:
    """Per step: recorded tokens less the estimate of the messages."""
    counter = Estimates()
    messages = load_messages(path)
    return [
        recorded_usage(step.message).tokens - sum(counter.count_many(context_units(step.history)))
        for step in session_steps(messages)
    ]


def test_the_manifest_names_the_sessions_with_one_hour_entries() -> None:
    assert one_hour_sessions(USAGE) == frozenset({ONE_HOUR.name})
    assert one_hour_sessions(REPOSITORY / "fixtures" / "sessions") == frozenset(), "no manifest: none"


@pytest.mark.parametrize("path", [ONE_HOUR, FIVE_MINUTES])
def test_the_real_prefix_is_the_median_gap_of_the_first_requests(path: Path) -> None:
    """Claude Code's system prompt and tools: tens of thousands of tokens the export does not hold."""
    usage = session_usage(path, load_messages(path), Estimates())
    first = gaps(path)[:PREFIX_REQUESTS]
    assert usage.prefix == round(statistics.median(first))
    assert 20_000 < usage.prefix < 60_000
    assert len(usage.requests) == len(gaps(path)) and None not in usage.requests


def test_one_odd_first_request_does_not_move_the_prefix() -> None:
    """A first request that read a huge cached context of its own: the median ignores it."""
    messages = load_messages(FIVE_MINUTES)
    requests = [recorded_usage(step.message) for step in session_steps(messages)]
    odd = [Usage(0, requests[0].cache_read + 500_000, requests[0].cache_write), *requests[1:]]
    prefix, odd_prefix = real_prefix(messages, requests, Estimates()), real_prefix(messages, odd, Estimates())
    assert abs(odd_prefix - prefix) < 0.02 * prefix, "a mean would move by 100,000"
    others = gaps(FIVE_MINUTES)[1:PREFIX_REQUESTS]
    assert min(others) <= odd_prefix <= max(others)


def test_messages_without_usage_are_not_billed_requests() -> None:
    assert recorded_usage({"info": {"role": "assistant"}, "parts": []}) is None
    assert recorded_usage({"info": {"role": "assistant", "tokens": {"input": 0, "cache": {"read": 0, "write": 0}}}}) is None
    found = recorded_usage({"info": {"tokens": {"input": 3, "cache": {"read": 100, "write": 20}}}})
    assert found == Usage(3, 100, 20) and found.tokens == 123
    messages = load_messages(FIVE_MINUTES)
    bare = copy.deepcopy(messages)
    for message in bare:
        message["info"].pop("tokens", None)
    assert real_prefix(bare, [None] * len(list(session_steps(bare))), Estimates()) == 0


def test_one_hour_entries_are_written_at_twice_the_input_price_and_last_an_hour() -> None:
    hour = one_hour_cache(ANTHROPIC)
    assert (hour.input, hour.cache_read, hour.cache_write, hour.ttl_seconds) == (3.0, 0.30, 6.0, 3_600)
    assert hour.cached_at_marks and hour.name == "anthropic-1h"
    assert session_usage(ONE_HOUR, load_messages(ONE_HOUR), Estimates()).prices(ANTHROPIC) == hour
    assert session_usage(FIVE_MINUTES, load_messages(FIVE_MINUTES), Estimates()).prices(ANTHROPIC) == ANTHROPIC
    assert not hour.expired(50 * 60_000) and ANTHROPIC.expired(50 * 60_000)


def test_the_prefix_is_billed_before_every_request_as_a_frame() -> None:
    messages = load_messages(FIVE_MINUTES)
    meter = replay_session(messages, [Uncompressed()], Estimates(), frame=40_000)["none"]
    assert meter.request_frame == [40_000] * meter.steps
    assert meter.request_frame_read == [0] + [40_000] * (meter.steps - 1), "written once, then read"


class EditsTheFirstMessage:
    """A contender that changes the first message once the history holds more than two."""

    name = "edits"
    frame = 0

    def messages(self, history: list[dict]) -> list[dict]:
        """The history, its first text edited from the third message on."""
        if len(history) <= 2:
            return history
        edited = copy.deepcopy(history)
        edited[0]["parts"] = [{"type": "text", "text": "an edited first message"}]
        return edited


def test_a_changed_message_still_reads_the_prefix() -> None:
    """At Anthropic's marks a change before the last two messages writes them again, not the
    prefix before the system mark."""
    messages = load_messages(FIVE_MINUTES)
    meter = replay_session(messages, [EditsTheFirstMessage()], Estimates(), frame=40_000)["edits"]
    changed = next(index for index, step in enumerate(session_steps(messages)) if len(step.history) > 2)
    assert meter.request_marked[changed] == 0 and meter.request_frame_read[changed] == 40_000
    result = check_corpus([FIVE_MINUTES], Estimates())
    figures = result["sessions"][0]["figures"]
    assert figures["prefix"]["read_share"] > figures["messages"]["read_share"], "the prefix is read at every later request"


def test_the_bill_check_compares_replay_and_record_per_session() -> None:
    """On the two fixture sessions: the record billed at each session's own lifetime, the
    replay's prefix counted, both first requests read an earlier session's cached prefix."""
    result = check_corpus(session_paths(USAGE), Estimates())
    assert result["sessions_checked"] == 2 and result["one_hour_sessions"] == 1
    assert result["requests"] == 11
    hour = next(row for row in result["sessions"] if row["one_hour"])
    usage = session_usage(ONE_HOUR, load_messages(ONE_HOUR), Estimates())
    written = sum(request.cache_write for request in usage.requests)
    assert hour["bills"]["recorded"]["written"] == written
    assert recorded_bill(usage, one_hour_cache(ANTHROPIC)).cost > recorded_bill(usage, ANTHROPIC).cost
    assert result["disagreements"]["first_request_read"] == 2
    assert all(row["prefix_tokens"] > 20_000 for row in result["sessions"])
