"""Billing replayed requests: any repeated prefix read from the cache, or only up to a mark."""

from __future__ import annotations

import ast
from pathlib import Path

import msgspec
import pytest

from deepmem.bill.accounting import Meter
from deepmem.bill.prices import FAMILIES, PriceModel
from deepmem.transform.cache_mark import with_mark
from deepmem.transform.context import request_units

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


def test_a_request_reads_its_repeated_prefix_or_up_to_its_mark_and_nothing_once_the_cache_expired() -> None:
    """1,000 tokens, 600 repeated, 400 of them up to a mark."""
    assert ANY_PREFIX.request_dollars(1_000, 600, 400, 0) == ANY_PREFIX.dollars(1_000, 600)
    assert AT_MARKS.request_dollars(1_000, 600, 400, 0) == AT_MARKS.dollars(1_000, 400)
    expired = (ANY_PREFIX.ttl_seconds + 1) * 1000
    assert ANY_PREFIX.request_dollars(1_000, 600, 400, expired) == ANY_PREFIX.dollars(1_000, 0) == 1_000 * ANY_PREFIX.cache_write


PRICE_FIELDS = {"read", "input", "cache_read", "cache_write", "ttl_seconds", "cached_at_marks"}
"""What a price model holds; what those numbers mean is `deepmem.bill.prices`' to say."""


def test_only_the_prices_module_reads_what_a_price_means() -> None:
    """A change to what a price means touches one module: the rest asks `PriceModel`'s methods.
    (`deepmem.project.config` builds a model from `[cost]`, field by field.)"""
    root = Path(__file__).resolve().parent.parent
    readers = set()
    for path in [*root.glob("deepmem/**/*.py"), *root.glob("compressors/*.py"), *root.glob("bench/**/*.py")]:
        if path.name in ("prices.py", "config.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in PRICE_FIELDS and isinstance(node.value, ast.Name) and "price" in node.value.id:
                readers.add(f"{path.relative_to(root)}: {node.value.id}.{node.attr}")
    assert not readers


def test_a_marked_part_before_a_change_is_read_up_to_it_at_marks() -> None:
    """A mark of our own on an old text part: a change after it still reads everything before it."""
    marked = with_mark({"type": "text", "text": "a"})
    history = [message("user", "task"), {"info": {"role": "assistant"}, "parts": [marked]}, message("assistant", "b" * 50)]
    cut = [*history[:2], message("assistant", "b…"), message("assistant", "c")]
    assert request_units(history)[1] == (2, 3)
    meter = billed([*history, message("assistant", "x")], cut)
    assert meter.request_marked[1] == 200.0


def test_the_frame_is_written_cold_then_read_and_billed_apart_from_the_messages() -> None:
    """A frame of 1,000 tokens: the first request writes it, the next reads it; the messages alone leave it out."""
    meter = Meter()
    for messages in ([message("user", "task")], [message("user", "task"), message("assistant", "a")]):
        units, marks = request_units(messages)
        meter.add(units, [100] * len(units), marks=marks, frame=1_000)
    assert meter.request_frame == [1_000, 1_000] and meter.request_frame_read == [0, 1_000]
    whole, alone = meter.cost(AT_MARKS), meter.cost(AT_MARKS, whole=False)
    assert whole == pytest.approx(alone + AT_MARKS.dollars(1_000, 0) + AT_MARKS.dollars(1_000, 1_000))
    assert meter.cold_cost(AT_MARKS) == AT_MARKS.dollars_uncached(2_300)


def test_a_session_with_one_hour_entries_pays_their_price_and_keeps_its_cache_an_hour() -> None:
    """Writes at twice the input price, and a 30-minute pause still reads the cache."""
    meters = {}
    for hour in (False, True):
        meter = Meter(one_hour=hour)
        for pause, messages in ((0, [message("user", "task")]), (30 * 60_000, [message("user", "task"), message("assistant", "a")])):
            units, marks = request_units(messages)
            meter.add(units, [100] * len(units), pause_ms=pause, marks=marks)
        meters[hour] = meter
    anthropic = FAMILIES["anthropic"]
    assert meters[False].cost(anthropic) == anthropic.dollars(100, 0) + anthropic.dollars(200, 0)
    assert meters[True].cost(anthropic) == pytest.approx(2 * anthropic.input * 200 + anthropic.cache_read * 100)
    assert meters[True].cost(ANY_PREFIX) == meters[False].cost(ANY_PREFIX)


def figures(prices: PriceModel, pauses_ms: tuple[int, ...]) -> tuple[object, ...]:
    """Every figure a price model gives: requests billed after each pause (1,000 tokens, 600
    repeated, 400 of them up to a mark), the same without a cache, and the schedule's terms."""
    billed_requests = tuple(prices.request_dollars(1_000, 600, 400, pause) for pause in pauses_ms)
    return billed_requests, prices.dollars_uncached(1_000), prices.rent_steps, prices.kept_prefix(1_000)


@pytest.mark.parametrize("field", [f.name for f in msgspec.structs.fields(PriceModel) if f.name != "name"])
def test_every_field_of_a_price_model_changes_a_figure(field: str) -> None:
    """A field that no bill and no schedule term reads (an unpriced field) fails here, and so does
    one that the reader guard above does not know."""
    pauses = (0, ANY_PREFIX.ttl_seconds * 1_500)
    value = getattr(ANY_PREFIX, field)
    changed = msgspec.structs.replace(ANY_PREFIX, **{field: not value if isinstance(value, bool) else value * 2 + 1})
    assert figures(changed, pauses) != figures(ANY_PREFIX, pauses)
    assert field in PRICE_FIELDS
