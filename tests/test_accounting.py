"""Billing replayed requests: any repeated prefix read from the cache, or only up to a mark."""

from __future__ import annotations

import msgspec
import pytest

from deepmem.accounting import Meter
from deepmem.context import request_units
from deepmem.prices import FAMILIES

ANY_PREFIX = FAMILIES["openai"]
AT_MARKS = msgspec.structs.replace(ANY_PREFIX, cached_at_marks=True)


def message(role: str, *texts: str) -> dict:
    """A message with one text part per text."""
    return {"info": {"role": role}, "parts": [{"type": "text", "text": text} for text in texts]}


def billed(*requests: list[dict]) -> Meter:
    """A meter after the requests, each unit counted as 100 tokens."""
    meter = Meter()
    for messages in requests:
        units, marks = request_units(messages)
        meter.add(units, [100] * len(units), marks=marks)
    return meter


def test_marks_are_the_ends_of_the_last_two_messages_that_show_anything() -> None:
    messages = [message("user", "task"), message("assistant", "a", "b"), message("assistant"), message("user", "c")]
    assert request_units(messages) == (["[user text]\ntask", "[assistant text]\na", "[assistant text]\nb", "[user text]\nc"], (3, 4))


def test_a_request_that_grows_the_last_one_reads_all_of_it_either_way() -> None:
    first = [message("user", "task"), message("assistant", "a")]
    meter = billed(first, [*first, message("assistant", "b")])
    assert meter.request_cached == meter.request_marked == [0.0, 200.0]
    assert meter.cost(ANY_PREFIX) == meter.cost(AT_MARKS)


def test_a_change_before_the_marks_loses_every_cached_message_at_marks_only() -> None:
    """An old message cut: any repeated prefix still reads up to the change; at marks, nothing."""
    history = [message("user", "task"), message("assistant", "a" * 50), message("assistant", "b"), message("assistant", "c")]
    cut = [history[0], message("assistant", "a…"), *history[2:], message("assistant", "d")]
    meter = billed(history, cut)
    assert meter.request_cached[1] == pytest.approx(100 + 100 * len("[assistant text]\na") / len("[assistant text]\na…"))
    assert meter.request_marked[1] == 0.0
    assert meter.cost(AT_MARKS) > meter.cost(ANY_PREFIX)


def test_a_trailing_message_dropped_next_time_keeps_the_mark_before_it() -> None:
    """A nudge in a message after the history is gone from the next request: the mark at the
    end of the history before it is still read."""
    history = [message("user", "task"), message("assistant", "a"), message("assistant", "b")]
    meter = billed([*history, message("user", "[deepmem] nudge")], [*history, message("assistant", "c")])
    assert meter.request_marked == [0.0, 300.0] and meter.request_cached[1] >= 300.0
