"""Where the host compacts, as OpenCode 1.18.33 reads a model's limits, and deepmem's pressure point below it."""

from __future__ import annotations

import math

import pytest

from deepmem.transform.window import (
    ANSWER_TOKENS,
    CAUTIOUS_RATIO,
    TOKEN_RATIOS,
    ModelLimits,
    model_limits,
    pressure_tokens,
    token_ratio,
    usable_tokens,
)


def test_a_200k_claude_model_compacts_at_168k_provider_tokens() -> None:
    """Context less the output cap, the cap at most 32K: 200K − min(64K, 32K)."""
    assert usable_tokens(ModelLimits(context=200_000, output=64_000)) == 168_000
    assert usable_tokens(ModelLimits(context=200_000, output=8_192)) == 200_000 - 8_192


def test_a_model_whose_limits_give_no_output_cap_reserves_32k() -> None:
    assert usable_tokens(ModelLimits(context=128_000)) == 96_000


def test_a_model_with_an_input_limit_keeps_the_smaller_of_20k_and_its_output_cap_below_it() -> None:
    assert usable_tokens(ModelLimits(context=400_000, input=272_000, output=128_000)) == 252_000
    assert usable_tokens(ModelLimits(context=400_000, input=272_000, output=4_000)) == 268_000
    assert usable_tokens(ModelLimits(context=400_000, input=272_000)) == 252_000


def test_a_configured_reserve_replaces_opencode_s_own_below_an_input_limit_only() -> None:
    """OpenCode's `compaction.reserved` is kept below an input limit; a model without one keeps its output cap."""
    assert usable_tokens(ModelLimits(context=400_000, input=272_000, output=128_000, reserved=50_000)) == 222_000
    assert usable_tokens(ModelLimits(context=400_000, input=272_000, output=128_000, reserved=0)) == 272_000
    assert usable_tokens(ModelLimits(context=200_000, output=64_000, reserved=50_000)) == 168_000
    wide = pressure_tokens(ModelLimits(context=400_000, input=272_000, output=128_000), "openai")
    assert pressure_tokens(ModelLimits(context=400_000, input=272_000, output=128_000, reserved=50_000), "openai") < wide


def test_a_1m_window_presses_far_later_and_still_before_the_host() -> None:
    limits = ModelLimits(context=1_000_000, output=64_000)
    assert usable_tokens(limits) == 968_000
    point = pressure_tokens(limits, "anthropic")
    assert point * TOKEN_RATIOS["anthropic"] + ANSWER_TOKENS <= 968_000
    assert point > pressure_tokens(ModelLimits(context=200_000, output=64_000), "anthropic") * 5


def test_an_unknown_context_never_compacts_and_never_presses() -> None:
    assert usable_tokens(ModelLimits()) == 0
    assert pressure_tokens(ModelLimits(input=100_000, output=8_000), "anthropic") == 0


def test_a_window_too_small_for_the_reserve_presses_at_every_step() -> None:
    assert usable_tokens(ModelLimits(context=10_000, output=32_000)) == 1
    assert pressure_tokens(ModelLimits(context=10_000), "openai") == 1


@pytest.mark.parametrize("family", [*TOKEN_RATIOS, "unknown"])
def test_the_pressure_point_leaves_the_answer_and_the_ratio_below_the_host(family: str) -> None:
    limits = ModelLimits(context=200_000, output=64_000)
    point = pressure_tokens(limits, family)
    assert point * token_ratio(family) + ANSWER_TOKENS <= usable_tokens(limits)
    assert (point + 1) * token_ratio(family) + ANSWER_TOKENS > usable_tokens(limits)


def test_a_provider_never_measured_takes_the_cautious_end() -> None:
    assert token_ratio("unknown") == token_ratio("") == CAUTIOUS_RATIO == max(TOKEN_RATIOS.values())
    limits = ModelLimits(context=200_000, output=64_000)
    assert pressure_tokens(limits, "unknown") == min(pressure_tokens(limits, family) for family in TOKEN_RATIOS)


def test_a_claude_token_counts_more_than_the_estimate() -> None:
    """The ratio the issue saw (1.28 at the median) is inside what is kept: the jump fires before 168K Claude tokens."""
    point = pressure_tokens(ModelLimits(context=200_000, output=64_000), "anthropic")
    assert point * 1.28 < 168_000 and point < 0.75 * 200_000


@pytest.mark.parametrize(
    ("model", "window", "expected"),
    [
        ({"limit": {"context": 200_000, "input": 0, "output": 64_000}}, 0, ModelLimits(200_000, 0, 64_000)),
        ({"limit": {"context": 200_000, "output": 64_000}}, 150_000, ModelLimits(150_000, 0, 64_000)),
        ({"limit": {"context": "200000", "input": -5, "output": math.inf}}, 0, ModelLimits()),
        ({"limit": {"context": True, "output": 1.5e5}}, 0, ModelLimits(0, 0, 150_000)),
        ({"limit": None}, 90_000, ModelLimits(90_000)),
        ({}, 0, ModelLimits()),
        ({"limit": {"context": 400_000, "input": 272_000, "reserved": 30_000}}, 0, ModelLimits(400_000, 272_000, 0, 30_000)),
        ({"limit": {"context": 400_000, "reserved": True}}, 0, ModelLimits(400_000)),
        ({"limit": {"context": 400_000, "reserved": -1}}, 0, ModelLimits(400_000)),
        (None, 0, ModelLimits()),
        ("claude", 0, ModelLimits()),
    ],
)
def test_model_limits_read_what_opencode_passes_and_drop_what_is_no_count(model, window: int, expected: ModelLimits) -> None:
    assert model_limits(model, window) == expected
