"""The hindsight oracle finds the cheapest schedule: checked against every schedule of small sessions."""

from __future__ import annotations

import random

import msgspec
import pytest

from bench.contenders.hindsight import hindsight_jumps, schedule_cost
from deepmem.bill.prices import FAMILIES, PriceModel
from deepmem.transform.jumps import RequestFrame, Sizes, pressure_ceiling, request_tokens, step_cost
from deepmem.types import Settings


def small_session(seed: int, steps: int) -> Sizes:
    """Running totals of a made-up session: each step adds a few hundred tokens its compressors shrink."""
    rng = random.Random(seed)
    tokens, probed, cold = [0], [0], [True]
    for _ in range(steps):
        added = rng.randrange(50, 2_000)
        tokens.append(tokens[-1] + added)
        probed.append(probed[-1] + added * rng.randrange(5, 101) // 100)
        cold.append(rng.random() < 0.15)
    return Sizes(tuple(tokens), tuple(probed), tuple(cold))


def cheapest_by_brute_force(sizes: Sizes, settings: Settings, prices: PriceModel) -> float:
    """The least cost over every schedule (a step jumps to step − tail or keeps its boundary;
    keeping a request above the pressure point of the window is not allowed)."""
    limit = pressure_ceiling(sizes, settings) or float("inf")

    def best(step: int, boundary: int) -> float:
        if step == len(sizes.tokens):
            return 0.0
        stay = float("inf")
        if request_tokens(sizes, step, boundary) <= limit:
            stay = step_cost(sizes, step, boundary, boundary, prices) + best(step + 1, boundary)
        target = step - settings.tail_steps
        if target <= boundary:
            return stay
        return min(stay, step_cost(sizes, step, boundary, target, prices) + best(step + 1, target))

    return best(1, 0)


PRICES = [FAMILIES["anthropic"], FAMILIES["openai"], FAMILIES["gemini"], FAMILIES["deepseek"]]


@pytest.mark.parametrize("prices", PRICES, ids=lambda prices: prices.name)
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tail", [1, 2, 4])
def test_the_oracle_costs_what_the_cheapest_of_all_schedules_costs(prices: PriceModel, seed: int, tail: int) -> None:
    sizes = small_session(seed, 11)
    settings = Settings(tail_steps=tail, context_window=0)
    found = schedule_cost(sizes, hindsight_jumps(sizes, settings, prices), settings, prices)
    assert found == pytest.approx(cheapest_by_brute_force(sizes, settings, prices), rel=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_the_oracle_keeps_requests_under_the_window(seed: int) -> None:
    """A pressure point below the longest request forces jumps; the oracle still finds the cheapest that fit."""
    sizes = small_session(seed, 10)
    sizes = msgspec.structs.replace(sizes, frame=RequestFrame(ceiling=sizes.tokens[-1] // 2))
    settings = Settings(tail_steps=1, context_window=0)
    prices = FAMILIES["openai"]
    jumps = hindsight_jumps(sizes, settings, prices)
    assert len(jumps) > 1
    assert schedule_cost(sizes, jumps, settings, prices) == pytest.approx(cheapest_by_brute_force(sizes, settings, prices), rel=1e-12)


def test_a_schedule_that_never_jumps_costs_its_stays() -> None:
    """The brute force is not the oracle in disguise: with reads free, staying costs only the newest steps."""
    free = msgspec.structs.replace(FAMILIES["openai"], cache_read=0.0)
    sizes = Sizes((0, 10, 30, 60), (0, 5, 10, 20), (True, False, False, False))
    settings = Settings(tail_steps=1, context_window=0)
    assert schedule_cost(sizes, (0,), settings, free) == 10 + 20 + 30
    assert cheapest_by_brute_force(sizes, settings, free) == 10 + 20 + 30
