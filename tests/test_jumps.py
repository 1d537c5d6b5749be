"""The priced schedule of boundary jumps and the price models it weighs (`deepmem.transform.jumps`, `deepmem.bill.prices`)."""

from __future__ import annotations

import logging
import math
from bisect import bisect_right

import msgspec
import pytest

from bench.contenders.hindsight import hindsight_jumps, schedule_cost
from bench.corpora import SHARED
from deepmem.bill import prices as prices_module
from deepmem.bill.prices import (
    FAMILIES,
    PriceModel,
    family_of,
    family_of_messages,
    from_opencode,
    resolve_prices,
    with_lifetime,
)
from deepmem.history import message_steps, step_indexes
from deepmem.transform.jumps import (
    NO_FRAME,
    RequestFrame,
    Sizes,
    cold_steps,
    fixed_jumps,
    jump_premium,
    marked_read,
    pressure_ceiling,
    priced_jumps,
    release_pays,
    removed_tokens,
    request_pauses,
    request_times,
    running_bills,
    step_cost,
    whole_request_tokens,
)
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.transform.schedule import session_sizes
from deepmem.transform.window import RELIEF, ModelLimits, pressure_tokens
from deepmem.types import Settings
from deepmem.vault.sessionio import read_session

from .conftest import FIXTURES

DJANGO = FIXTURES / "sessions" / "django-15499.json"
ANTHROPIC = FAMILIES["anthropic"]
OPENAI = FAMILIES["openai"]
ANY_PREFIX = msgspec.structs.replace(ANTHROPIC, cached_at_marks=False)
"""Anthropic's prices, with any repeated prefix read from the cache."""
DEFAULTS = Settings()
MINUTE = 60_000


def sizes_of(
    messages: list[dict], settings: Settings = DEFAULTS, prices: PriceModel = ANTHROPIC, frame: RequestFrame = NO_FRAME
) -> Sizes:
    return session_sizes(messages, settings, prices, frame)


def django() -> list[dict]:
    return read_session(str(DJANGO)).messages


def with_times(messages: list[dict], pause_after_step: int, pause_ms: int) -> list[dict]:
    """The session's messages with every timestamp after assistant `pause_after_step` moved later."""
    shifted, steps = [], message_steps(messages)
    for message, step in zip(messages, steps, strict=True):
        if step > pause_after_step or (step == pause_after_step and message["info"]["role"] == "user"):
            message = orjson_copy(message)
            move(message, pause_ms)
        shifted.append(message)
    return shifted


def orjson_copy(value):
    return msgspec.json.decode(msgspec.json.encode(value))


def move(value, delta: int) -> None:
    """Add `delta` to every integer timestamp under a `time` key, in place."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "time" and isinstance(item, dict):
                for name, stamp in item.items():
                    if isinstance(stamp, int):
                        item[name] = stamp + delta
            else:
                move(item, delta)
    elif isinstance(value, list):
        for item in value:
            move(item, delta)


def test_families_are_named_by_model_before_router() -> None:
    assert family_of("openrouter", "google/gemini-3-pro-preview").name == "gemini"
    assert family_of("anthropic", "claude-sonnet-4").name == "anthropic"
    assert family_of("deepseek", "deepseek-chat").name == "deepseek"
    assert family_of("acme", "mystery-1").name == "unknown"
    assert family_of_messages(django()).name == "gemini"
    assert family_of_messages([]).name == "unknown"


@pytest.mark.parametrize(
    "cost",
    [
        {"input": 0, "cache": {"read": 0, "write": 0}},
        {"input": -3, "cache": {"read": 0.3}},
        {"input": math.inf},
        {"input": 5_000},
        {"input": 3, "cache": {"read": 9}},
        {"input": 3, "cache": {"write": 1}},
        {"input": 3, "cache": {"write": 300}},
    ],
)
def test_absurd_opencode_prices_fall_back_to_the_family(cost: dict, caplog) -> None:
    """Missing, zero, negative, infinite or absurd prices: the family's model, the reason logged once."""
    family = FAMILIES["openai"]
    with caplog.at_level(logging.WARNING, logger="deepmem.prices"):
        found = from_opencode({"id": "m", "cost": cost}, family)
    assert found is None or found == family


def test_opencode_prices_are_taken_and_completed() -> None:
    """OpenCode's prices per million tokens are used; a missing write price means no premium."""
    own = from_opencode({"id": "gpt-x", "cost": {"input": 2.0, "output": 8.0, "cache": {"read": 0.5}}}, FAMILIES["openai"])
    assert own == PriceModel("gpt-x", 2.0, 0.5, 2.0, FAMILIES["openai"].ttl_seconds)
    no_read = from_opencode({"id": "c", "cost": {"input": 3.0, "cache": {"write": 3.75}}}, ANTHROPIC)
    assert no_read is not None and no_read.cache_read == pytest.approx(0.3)


def test_the_schedule_is_deterministic_and_never_jumps_into_the_tail() -> None:
    messages = django()
    settings = Settings()
    first = priced_jumps(sizes_of(messages), settings, ANTHROPIC)
    assert first == priced_jumps(sizes_of(messages), settings, ANTHROPIC)
    steps = message_steps(messages)[-1]
    assert first[0] == 0 and list(first) == sorted(set(first)) and first[-1] <= steps - settings.tail_steps
    # A decision reads only its own past: the schedule of a prefix is a prefix of the schedule.
    half = messages[: len(messages) // 2]
    early = priced_jumps(sizes_of(half), settings, ANTHROPIC)
    assert first[: len(early)] == early


def test_cheaper_cache_reads_make_cuts_pay_sooner() -> None:
    """Under Gemini's dearer reads (0.25×) a cut repays faster than under Anthropic's (0.1× with a write premium)."""
    sizes = sizes_of(django())
    anthropic = priced_jumps(sizes, Settings(), ANTHROPIC)
    gemini = priced_jumps(sizes, Settings(), FAMILIES["gemini"])
    assert anthropic[1] > gemini[1]


def test_a_long_pause_is_a_free_deep_cut() -> None:
    """After a pause longer than the cache lives, the cache is cold: the schedule jumps there."""
    messages = django()
    quiet = priced_jumps(sizes_of(messages), Settings(), ANTHROPIC)
    paused = with_times(messages, 30, 30 * MINUTE)
    steps = message_steps(paused)
    assert cold_steps(paused, steps, steps[-1], ANTHROPIC).index(True, 1) == 31
    jumps = priced_jumps(sizes_of(paused), Settings(), ANTHROPIC)
    assert 31 - Settings().tail_steps in jumps and 31 - Settings().tail_steps not in quiet
    # DeepSeek's cache outlives a 30-minute pause: no free cut there.
    assert True not in cold_steps(paused, steps, steps[-1], FAMILIES["deepseek"])[1:]


def test_no_timestamps_and_clock_skew_count_as_no_pause() -> None:
    messages = django()
    stripped = orjson_copy(messages)
    for message in stripped:
        message["info"].pop("time", None)
        for part in message["parts"]:
            (part.get("state") or {}).pop("time", None)
    steps = message_steps(stripped)
    assert cold_steps(stripped, steps, steps[-1], FAMILIES["openai"]) == (True,) + (False,) * steps[-1]
    backwards = with_times(messages, 10, -60 * MINUTE)
    times = request_times(backwards, steps, steps[-1])
    assert all(pause >= 0 for pause in request_pauses(times))
    assert True not in cold_steps(backwards, steps, steps[-1], FAMILIES["openai"])[1:]


def test_a_model_switch_makes_the_cache_cold() -> None:
    """User turns asking for another model from some point on: the cache is cold once there, warm after."""
    messages = orjson_copy(django())
    users = [index for index, message in enumerate(messages) if message["info"]["role"] == "user"]
    for index in users[1:]:
        messages[index]["info"]["model"] = {"providerID": "anthropic", "modelID": "claude"}
    steps = message_steps(messages)
    cold = cold_steps(messages, steps, steps[-1], msgspec.structs.replace(FAMILIES["openai"], ttl_seconds=10**9))
    assert cold.count(True) == 2 and cold[steps[users[1]]]


def test_window_pressure_forces_a_jump_whatever_the_price() -> None:
    """With reads free of charge no cut would pay, yet a pressure point below the session's size still forces
    jumps, each freeing at least the relief share of it; a request left over it is one whose deepest cut
    would free less."""
    free = PriceModel("free-reads", 1.0, 0.0, 1.0, 300)
    sizes = sizes_of(django())
    assert priced_jumps(sizes, Settings(), free) == (0,)
    frame = RequestFrame(host=7_018, added=500, ceiling=7_518 + sizes.tokens[-1] // 3)
    pressed = msgspec.structs.replace(sizes, frame=frame)
    forced = priced_jumps(pressed, DEFAULTS, free)
    assert len(forced) > 1
    boundary = 0
    for step in range(1, len(sizes.tokens)):
        target = step - DEFAULTS.tail_steps
        if target <= boundary:
            continue
        if target in forced:
            assert removed_tokens(pressed, boundary, target) >= frame.ceiling * RELIEF
            boundary = target
        elif whole_request_tokens(pressed, step, boundary) > frame.ceiling:
            assert removed_tokens(pressed, boundary, target) < frame.ceiling * RELIEF


def test_a_jump_that_would_free_little_is_not_forced() -> None:
    """A pressure point far below the session: forcing a jump at every step would write the whole history each
    time; only jumps that free the relief share of the point are forced, so they are few."""
    free = PriceModel("free-reads", 1.0, 0.0, 1.0, 300)
    sizes = msgspec.structs.replace(sizes_of(django()), frame=RequestFrame(host=7_018, added=500, ceiling=8_000))
    forced = priced_jumps(sizes, DEFAULTS, free)
    assert 1 < len(forced) < (len(sizes.tokens) - DEFAULTS.tail_steps) // 2


def test_a_window_alone_presses_at_the_cautious_point_of_a_model_without_limits() -> None:
    """`context_window` without the model's limits: OpenCode's 32K output reserve, the unmeasured ratio."""
    sizes = sizes_of(django())
    window = Settings(context_window=200_000)
    assert pressure_ceiling(sizes, window) == pressure_tokens(ModelLimits(200_000), "")
    assert pressure_ceiling(sizes, Settings()) == 0
    framed = msgspec.structs.replace(sizes, frame=RequestFrame(ceiling=1_234))
    assert pressure_ceiling(framed, window) == 1_234


def test_the_hindsight_schedule_is_never_dearer_than_the_online_ones() -> None:
    sizes, settings = sizes_of(django()), Settings()
    for prices in (ANTHROPIC, FAMILIES["openai"], FAMILIES["gemini"]):
        best = schedule_cost(sizes, hindsight_jumps(sizes, settings, prices), settings, prices)
        for jumps in (priced_jumps(sizes, settings, prices), fixed_jumps(len(sizes.tokens) - 1, settings), (0,)):
            assert best <= schedule_cost(sizes, jumps, settings, prices) + 1e-6


def test_a_plan_given_no_prices_says_once_which_family_it_weighs_the_jumps_at(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No price model passed (no model, no [cost]): the messages' family, noted in the log once per process."""
    monkeypatch.setattr(prices_module, "_warned", set())
    messages = django()
    with caplog.at_level(logging.WARNING, logger="deepmem.prices"):
        plan_transform(messages, Settings())
        plan_transform(messages[:-1], Settings())
        plan_transform(messages, Settings(), prices=ANTHROPIC)
    notes = [record.getMessage() for record in caplog.records if "no price model given" in record.getMessage()]
    assert notes == [f"no price model given: the jumps are weighed at the {family_of_messages(messages).name} family's prices"]


def test_imposed_jumps_are_followed() -> None:
    messages = django()
    plan = plan_transform(messages, Settings(), jumps=(0, 7, 30))
    assert plan.layout.boundary == 30 and plan.layout.jumps == (0, 7, 30)


def test_a_release_is_bought_once_keeping_the_output_has_cost_its_rewrite() -> None:
    """0.1 × 1,000 saved tokens × 8 requests = 800 < 0.9 × 1,000 rewritten tokens; at 9 requests it pays."""
    tenth = PriceModel("tenth", 1.0, 0.1, 1.0, 300)
    assert not release_pays(1_000, 8, 1_000, tenth)
    assert release_pays(1_000, 9, 1_000, tenth)
    assert release_pays(1_000, 0, 0, tenth), "nothing to rewrite besides the jump's own: the cut is free"
    assert not release_pays(0, 50, 0, tenth), "nothing to save, nothing to cut"
    assert not release_pays(1_000, -3, 10, tenth), "a clock running backwards counts as no wait"


def old_edits(
    messages: list[dict], prices: PriceModel, jumps: tuple[int, ...] | None = None, settings: Settings = DEFAULTS
) -> dict[str, dict]:
    """Part id → replaced part, for the old parts of the history's plan (`jumps` imposed when given)."""
    plan = plan_transform(messages, settings, prices=prices, jumps=jumps)
    return {edit.part_id: edit.part for edit in plan.edits if edit.message_index < plan.layout.first_young}


def test_a_cold_jump_compresses_every_old_part_with_the_newest_facts() -> None:
    """The jump at the request after a 30-minute pause rewrites everything anyway, so every
    part that was old is compressed again with that boundary's facts and tier: the same
    edits as if all of it had become old at that one jump."""
    paused = with_times(django(), 20, 30 * MINUTE)
    quiet = django()
    index = next(i for i in step_indexes(paused) if plan_transform(paused[:i], DEFAULTS, prices=ANY_PREFIX).layout.rebased)
    plan = plan_transform(paused[:index], DEFAULTS, prices=ANY_PREFIX)
    rebased, jumps = plan.layout.rebased, plan.layout.jumps
    assert rebased == jumps[-1] and len(jumps) > 2
    assert old_edits(paused[:index], ANY_PREFIX) == old_edits(quiet[:index], ANY_PREFIX, (0, rebased))
    assert old_edits(paused[:index], ANY_PREFIX) != old_edits(quiet[:index], ANY_PREFIX, jumps), (
        "without the pause the older batches keep their cuts"
    )


def test_where_the_cache_is_read_only_at_marks_and_we_place_no_mark_every_jump_cuts_every_old_part_again() -> None:
    """Anthropic reads a cached prefix only up to a mark, and OpenCode marks none before the
    last two messages: without a mark of ours a warm jump writes every message again, so it
    re-cuts every old part with the newest facts, as a single jump would. Where any repeated
    prefix is read, the older batches keep their cuts."""
    messages = django()
    unmarked = msgspec.structs.replace(DEFAULTS, cache_mark=False)
    index = next(
        i for i in step_indexes(messages) if len(plan_transform(messages[:i], unmarked, prices=ANTHROPIC).layout.jumps) > 2
    )
    jumps = plan_transform(messages[:index], unmarked, prices=ANTHROPIC).layout.jumps
    assert ANTHROPIC.cached_at_marks and not OPENAI.cached_at_marks
    assert old_edits(messages[:index], ANTHROPIC, settings=unmarked) == old_edits(
        messages[:index], ANTHROPIC, (0, jumps[-1]), unmarked
    )
    assert old_edits(messages[:index], ANY_PREFIX, jumps) != old_edits(messages[:index], ANY_PREFIX, (0, jumps[-1]))


def test_with_our_mark_a_jump_keeps_what_precedes_the_mark_and_cuts_again_what_follows() -> None:
    """The jump's request reads everything up to our mark from the cache: the parts before
    it keep the bytes of the request before the jump, the old parts after it are cut again.
    The first jump reads up to the opening's text."""
    messages = django()
    indexes = list(step_indexes(messages))
    index = next(i for i in indexes if any(read > 0 for read, _ in plan_transform(messages[:i], DEFAULTS, prices=ANTHROPIC).layout.rebases))
    plan = plan_transform(messages[:index], DEFAULTS, prices=ANTHROPIC)
    read, boundary = plan.layout.rebases[-1]
    assert boundary == plan.layout.jumps[-1] and 0 < read < boundary
    earlier = messages[: indexes[indexes.index(index) - 1]]
    before = apply_transform(earlier, plan_transform(earlier, DEFAULTS, prices=ANTHROPIC))
    after = apply_transform(messages[:index], plan)
    assert plan.mark is not None and plan.mark[0] < bisect_right(plan.layout.message_steps, read)
    message, part = plan.mark
    assert after[:message] == before[:message]
    assert after[message]["parts"][: part + 1] == before[message]["parts"][: part + 1]
    assert old_edits(messages[:index], ANTHROPIC) != old_edits(messages[:index], ANY_PREFIX, plan.layout.jumps)


def test_a_jump_from_our_mark_leaves_every_message_before_it_as_the_previous_request_sent_it() -> None:
    """A real session (1-hour cache entries, as its usage shows) where a later message copies a
    line an earlier one of the same batch copied: the rebase moves the later one into a new batch,
    and the earlier one, before our mark, must keep the copied lines it had, or the jump would
    write the whole history again instead of reading it up to the mark."""
    messages = read_session(str(next((SHARED / "claude-authgo").glob("*831c86c18fdb.json")))).messages
    prices = with_lifetime(ANTHROPIC, True)
    previous, checked = None, 0
    for index in step_indexes(messages):
        plan = plan_transform(messages[:index], DEFAULTS, prices=prices)
        sent = apply_transform(messages[:index], plan)
        if previous is not None and plan.layout.jumps != previous[1].layout.jumps:
            read, boundary = plan.layout.rebases[-1]
            if read > 0 and boundary == plan.layout.jumps[-1]:
                kept = bisect_right(plan.layout.message_steps, read)
                assert sent[:kept] == previous[0][:kept]
                checked += 1
        previous = sent, plan
    assert checked


def test_the_running_bills_carry_the_frame_and_deepmem_s_additions() -> None:
    """Without jumps the two bills differ by deepmem's additions alone: written at the cold first
    request, read at every other; the host's frame is on both."""
    sizes = Sizes((1000, 3000, 6000), (1000, 3000, 6000), (True, False, False), (), 4, RequestFrame(host=7000, added=500))
    bills = running_bills(sizes, (0,), DEFAULTS, ANTHROPIC)
    rent = ANTHROPIC.rent
    assert bills.none == pytest.approx(1000 + 7000 + rent(1000) + 2000 + rent(7000) + rent(3000) + 3000 + rent(7000))
    assert bills.deepmem - bills.none == pytest.approx(500 + 2 * rent(500))
    assert bills.dollars(ANTHROPIC) == pytest.approx((bills.deepmem * 3.75e-6, bills.none * 3.75e-6))


def test_the_bills_show_a_session_built_to_be_unprofitable_behind() -> None:
    """A few long requests, with 2,500 tokens of additions, then the session stops (its first 44
    steps): its last jump has not paid back what it wrote again, and the bills say so. The same
    session going on for 13 more steps pays it back."""
    frame = RequestFrame(host=7_018, added=2_500)
    for steps, behind in ((44, True), (57, False)):
        sizes = sizes_of(django()[: list(step_indexes(django()))[steps - 1] + 1], frame=frame)
        jumps = priced_jumps(sizes, DEFAULTS, ANTHROPIC)
        assert len(jumps) == 3
        bills = running_bills(sizes, jumps, DEFAULTS, ANTHROPIC)
        assert (bills.deepmem > bills.none) is behind


def test_a_jump_costs_more_where_the_cache_is_read_only_at_marks() -> None:
    """Its premium adds the old steps before the boundary, written instead of read: all of them
    without a mark of ours, those after our mark with one."""
    unmarked = sizes_of(django(), msgspec.structs.replace(DEFAULTS, cache_mark=False))
    marked = sizes_of(django())
    step, boundary, target = 30, 10, 26
    marks = msgspec.structs.replace(OPENAI, cached_at_marks=True)
    assert unmarked.marked == () and 0 < marked.marked[boundary] < marked.probed[boundary]
    for sizes, read in ((unmarked, 0), (marked, marked.marked[boundary])):
        extra = jump_premium(sizes, step, boundary, target, marks) - jump_premium(sizes, step, boundary, target, OPENAI)
        assert extra == pytest.approx((1 - OPENAI.read) * (sizes.probed[boundary] - read)) and extra > 0
        assert step_cost(sizes, step, boundary, target, marks) - step_cost(sizes, step, boundary, target, OPENAI) == pytest.approx(extra)


def test_a_jump_at_the_request_after_a_jump_reads_nothing_at_our_mark() -> None:
    """The mark moves to a new boundary at the request after the jump that made it; an entry
    is written there only then, so a jump at that very request cannot read it yet."""
    sizes = sizes_of(django())
    boundary = 10
    made = boundary + sizes.tail_steps
    assert marked_read(sizes, made + 2, boundary) == sizes.marked[boundary] > 0
    assert marked_read(sizes, made + 1, boundary) == 0


def test_what_a_jump_reads_up_to_our_mark_never_exceeds_the_old_history() -> None:
    """Views kept whole make the old history's size rise and fall from boundary to boundary; the
    tokens before the mark count them cut, and never more than the history they sit in."""
    for messages in (django(), with_times(django(), 20, 30 * MINUTE)):
        sizes = sizes_of(messages)
        assert any(sizes.marked) and all(read <= old for read, old in zip(sizes.marked, sizes.probed, strict=True))


def test_a_model_of_unknown_prices_is_weighed_at_the_cautious_defaults_said_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model no family names and OpenCode gives no prices: the cautious `unknown` model, noted in the log once."""
    monkeypatch.setattr(prices_module, "_warned", set())
    model = {"providerID": "acme", "id": "mystery-1"}
    messages = [{"info": {"id": "m1", "role": "user"}, "parts": [{"type": "text", "text": "hi"}]}]
    with caplog.at_level(logging.WARNING, logger="deepmem.prices"):
        found = [resolve_prices(messages, model) for _ in range(3)]
    assert found == [FAMILIES["unknown"]] * 3
    assert [record.getMessage() for record in caplog.records if "no prices known" in record.getMessage()] == [
        "no prices known for acme/mystery-1: its jumps are weighed at the cautious defaults (unknown)"]
