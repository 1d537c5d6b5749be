"""What a provider reads from its cache, by what OpenCode sends it (`deepmem.bill.prices`): a cache
key, marks, or nothing."""

from __future__ import annotations

from deepmem.bill.prices import FAMILIES, KEYLESS_PACKAGE, keyless, resolve_prices, sends_no_cache_key
from deepmem.project.config import CostSettings
from deepmem.transform.jumps import priced_jumps
from deepmem.types import Settings

from .test_jumps import django, sizes_of, with_times

OPENAI = FAMILIES["openai"]
MINUTE = 60_000


def model(model_id: str, npm: str, cost: dict | None = None) -> dict:
    """A model as the plugin hands it to the engine."""
    return {"id": model_id, "providerID": "proxy", "cost": cost or {}, "npm": npm}


def test_an_openai_compatible_provider_is_priced_keyless() -> None:
    """No cache key: the family's read price, the cautious write premium and lifetime."""
    found = resolve_prices([], model("gpt-5", KEYLESS_PACKAGE))
    assert found == keyless(OPENAI)
    assert (found.input, found.cache_read, found.cache_write, found.ttl_seconds) == (1.25, 0.125, 1.5625, 3_600)
    assert not found.cached_at_marks and found.name == "openai-keyless"


def test_a_cache_key_or_marks_keep_the_family() -> None:
    """`@ai-sdk/openai` sends the session id as the key; a Claude model is marked whatever its package."""
    assert resolve_prices([], model("gpt-5", "@ai-sdk/openai")) == OPENAI
    assert resolve_prices([], model("claude-sonnet-4-5", KEYLESS_PACKAGE)) == FAMILIES["anthropic"]
    assert resolve_prices([], {"id": "gpt-5", "providerID": "proxy"}) == OPENAI, "a plugin that names no package"
    assert not sends_no_cache_key(None) and not sends_no_cache_key(model("gpt-5", "@ai-sdk/azure"))


def test_the_model_own_prices_are_kept_and_made_cautious() -> None:
    """OpenCode's prices stand; only the write premium and the lifetime move to the cautious side."""
    own = resolve_prices([], model("qwen3-coder", KEYLESS_PACKAGE, {"input": 0.4, "cache": {"read": 0.04}}))
    assert (own.input, own.cache_read, own.cache_write, own.ttl_seconds) == (0.4, 0.04, 0.5, 3_600)
    dear = resolve_prices([], model("qwen3-coder", KEYLESS_PACKAGE, {"input": 0.4, "cache": {"write": 0.8}}))
    assert dear.cache_write == 0.8, "a dearer write than the cautious one stays"


def test_cost_settings_override_keyless() -> None:
    """A provider with `setCacheKey: true` (which the plugin cannot see) is named in `[cost]`."""
    settings = CostSettings(cache_ttl_seconds=300, cache_reads="prefix")
    found = resolve_prices([], model("gpt-5", KEYLESS_PACKAGE), settings.prices)
    assert found.ttl_seconds == 300 and not found.cached_at_marks
    assert resolve_prices([], model("gpt-5", KEYLESS_PACKAGE), CostSettings(family="openai").prices) == OPENAI


def test_keyless_never_jumps_sooner_nor_takes_a_pause_for_free() -> None:
    """Against the family's own prices: no earlier jump, and a 10-minute pause is no free cut."""
    messages = with_times(django(), 20, 10 * MINUTE)
    family = priced_jumps(sizes_of(messages, prices=OPENAI), Settings(), OPENAI)
    cautious = priced_jumps(sizes_of(messages, prices=keyless(OPENAI)), Settings(), keyless(OPENAI))
    assert len(cautious) <= len(family)
    assert all(mine >= theirs for mine, theirs in zip(cautious, family, strict=False))
    assert not keyless(OPENAI).expired(10 * MINUTE) and OPENAI.expired(10 * MINUTE)
