"""What a request costs: a price model per token (input, cache read, cache write) and the cache's lifetime.

The schedule of boundary jumps weighs what a jump saves at the cache-read price against
what it rewrites at the cache-write price, so it needs the user's own prices. They come,
first found first used, from `[cost]` in config.toml, from the model OpenCode hands the
plugin (`model.cost`, dollars per million tokens), from the provider family named in the
messages (`providerID` / `modelID`), and last from the cautious end of every family: the
deepest cache discount, the highest write premium and the longest lifetime, so that an
unknown provider is never cut more eagerly than a known one.

What a provider reads from its cache depends on what OpenCode 1.18.33 sends it, which
depends on the model and its AI SDK package (`model.api.npm`):
- a Claude model, whatever the package, and any model of `@ai-sdk/anthropic`: OpenCode marks
  `system[0]` and the last two messages (`cache_control`), and the cache is read up to a mark
  only (`cached_at_marks`);
- `@ai-sdk/openai`, `azure`, `xai`, `mistral`, `venice-ai-sdk-provider`, `deepinfra`,
  `cerebras`: OpenCode sends the session id as the cache key (`promptCacheKey`,
  `prompt_cache_key`), so a session's requests reach the server that holds its prefix, read
  up to wherever they agree;
- `@ai-sdk/openai-compatible`, the package of any provider configured without one: nothing
  cache-related unless the provider sets `setCacheKey: true`. Whether such a server caches
  is its own affair: some cache any repeated prefix by its content (DeepSeek, one vLLM server
  with prefix caching), some not at all, a load-balanced one only when a request happens to
  reach the machine that served the previous one. deepmem cannot count on that cache, nor on
  its absence (`keyless`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import msgspec

from deepmem.types import Message

log = logging.getLogger("deepmem.prices")

MAX_INPUT_PRICE = 1_000.0
"""Dollars per million input tokens above which a price is taken for a mistake."""
MAX_WRITE_PREMIUM = 5.0
"""A cache write dearer than this many times the input price is taken for a mistake."""
MAX_RENT_STEPS = 50
"""A cache that reads for free would rent forever: `PriceModel.rent_steps` is capped here."""


class PriceModel(msgspec.Struct, frozen=True):
    """Prices per million tokens and how long a cached prefix lives without being used."""

    name: str
    input: float
    """An input token the provider has not cached (no write premium)."""
    cache_read: float
    """An input token that repeats a cached prefix."""
    cache_write: float
    """An input token written to the cache (the input price when there is no premium)."""
    ttl_seconds: int
    """Idle time after which the cached prefix is gone and the next request pays in full."""
    cached_at_marks: bool = False
    """The provider reads a cached prefix only up to a place an earlier request marked for the
    cache, not up to wherever the requests agree. OpenCode marks, for Anthropic's models only,
    the system prompt and the last two messages; so a message changed anywhere before the
    last two makes the request write every message again, not only those from the change on."""

    @property
    def read(self) -> float:
        """The cache-read price as a share of the write price (what a cached token costs)."""
        return self.cache_read / self.cache_write

    def rent(self, tokens: float) -> float:
        """What keeping `tokens` in a cached prefix costs one more request, in write-price units."""
        return self.read * tokens

    def kept_prefix(self, tokens: float, marked: float = 0.0) -> float:
        """What the unchanged `tokens` before a request's first change cost it, in write-price units:
        read from the cache, or, where the cache is read only at marks, the first `marked` of them
        (up to the last mark before the change) read and the rest written again."""
        return self.rent(marked) + tokens - marked if self.cached_at_marks else self.rent(tokens)

    @property
    def rent_steps(self) -> int:
        """Requests after which renting tokens at the cache-read price has cost as much as writing
        them again once (capped at `MAX_RENT_STEPS` for a cache that reads nearly free)."""
        return MAX_RENT_STEPS if self.read <= 1 / MAX_RENT_STEPS else math.ceil(1 / self.read)

    @property
    def marks_pay(self) -> bool:
        """Whether a mark of our own lets a request read further from the cache (cache read only at marks)."""
        return self.cached_at_marks

    @property
    def jumps_write_everything(self) -> bool:
        """Whether a request that cuts anything writes every message again (cache read only at marks)."""
        return self.cached_at_marks

    def rewrite_premium(self, tokens: float) -> float:
        """What writing `tokens` again costs over reading them from the cache, in write-price units."""
        return (1.0 - self.read) * tokens

    def expired(self, pause_ms: float) -> bool:
        """Whether a cached prefix is gone after `pause_ms` milliseconds idle."""
        return pause_ms > self.ttl_seconds * 1000

    def dollars(self, tokens: float, cached: float) -> float:
        """What a request of `tokens` costs (per million) when `cached` of them are read from the cache."""
        return self.cache_read * cached + self.cache_write * (tokens - cached)

    def read_tokens(self, repeated: float, marked: float, pause_ms: float) -> float:
        """What a request reads from the cache when it repeats the previous one's first `repeated`
        tokens, `marked` of them up to a place it marked, after `pause_ms` idle."""
        return 0.0 if self.expired(pause_ms) else marked if self.cached_at_marks else repeated

    def request_dollars(self, tokens: float, repeated: float, marked: float, pause_ms: float) -> float:
        """What a request costs (per million) that repeats the previous one's first `repeated` tokens,
        `marked` of them up to a place it marked, after `pause_ms` idle."""
        return self.dollars(tokens, self.read_tokens(repeated, marked, pause_ms))

    def write_units_dollars(self, units: float) -> float:
        """What `units` tokens at the cache-write price cost, in dollars."""
        return self.cache_write * units / 1e6

    def dollars_uncached(self, tokens: float) -> float:
        """What `tokens` cost (per million) without a prompt cache."""
        return self.input * tokens

    def input_units(self, read: float, written: float, uncached: float) -> float:
        """What tokens read from the cache, written to it and sent past it cost, in units of the input price."""
        return (self.cache_read * read + self.cache_write * written + self.input * uncached) / self.input


FAMILIES: dict[str, PriceModel] = {
    "anthropic": PriceModel("anthropic", 3.0, 0.30, 3.75, 300, cached_at_marks=True),
    "openai": PriceModel("openai", 1.25, 0.125, 1.25, 300),
    "deepseek": PriceModel("deepseek", 0.28, 0.028, 0.28, 3_600),
    "gemini": PriceModel("gemini", 1.25, 0.3125, 1.25, 300),
    "unknown": PriceModel("unknown", 1.0, 0.1, 1.25, 3_600),
}
"""Provider families: Anthropic (write 1.25×, read 0.1×, 5-minute cache, read only at the
places OpenCode marks), OpenAI and DeepSeek (read 0.1×, no write premium, any repeated prefix;
DeepSeek's disk cache lasts hours), Gemini (read 0.25×), and the cautious end of their prices
for a provider we do not know. OpenCode marks requests only for Anthropic's models, so any
other model's cache, if it has one, reads whatever prefix repeats."""

ONE_HOUR_WRITE = 2.0
"""Anthropic bills a write to its 1-hour cache at this many times the input price (a 5-minute one at 1.25×)."""
ONE_HOUR = 3_600
"""The lifetime of Anthropic's 1-hour cache entries, in seconds."""


def one_hour_cache(prices: PriceModel) -> PriceModel:
    """The same prices with Anthropic's 1-hour cache entries: a write at twice the input price, kept an hour idle."""
    return msgspec.structs.replace(
        prices, name=f"{prices.name}-1h", cache_write=ONE_HOUR_WRITE * prices.input, ttl_seconds=ONE_HOUR
    )


def with_lifetime(prices: PriceModel, one_hour: bool) -> PriceModel:
    """The prices of a session that writes 1-hour cache entries (Anthropic's, where the cache is read
    only at marks: `one_hour_cache`), else the prices as they are."""
    return one_hour_cache(prices) if one_hour and prices.cached_at_marks else prices


KEYLESS_PACKAGE = "@ai-sdk/openai-compatible"
"""The AI SDK package OpenCode sends no cache key with (unless the provider sets `setCacheKey:
true`, which the model the plugin is handed does not show: `[cost]` can say so)."""


def keyless(prices: PriceModel) -> PriceModel:
    """Prices for a provider whose cache deepmem cannot count on, nor on its absence: its read
    price, but the cautious write premium and lifetime (`unknown`'s).

    Priced as if it had no cache, deepmem would cut at every step; on a server that does cache,
    every such cut writes the history again, and a session could cost more than without deepmem.
    Priced as if it cached, deepmem cuts only where a cut pays even then; on a server without a
    cache every cut still saves its tokens at the input price. So it prices the cache as there
    but dear to write (1.25×) and never sure to be gone after a pause (an hour), so that no
    jump is taken for free that might not be.
    """
    cautious = FAMILIES["unknown"]
    return msgspec.structs.replace(
        prices,
        name=f"{prices.name}-keyless",
        cache_write=max(prices.cache_write, prices.input * cautious.cache_write / cautious.input),
        ttl_seconds=max(prices.ttl_seconds, cautious.ttl_seconds),
    )


def sends_no_cache_key(model: Any) -> bool:
    """Whether OpenCode sends the model's requests without a cache key or marks: its package is
    `KEYLESS_PACKAGE` (a Claude model is marked whatever its package; its family says so)."""
    return isinstance(model, dict) and model.get("npm") == KEYLESS_PACKAGE


REPORTED = ("anthropic", "openai", "gemini")
"""The price models every cost report shows, besides any other asked for."""

FAMILY_WORDS = (
    ("anthropic", ("anthropic", "claude")),
    ("openai", ("openai", "gpt", "o1", "o3", "o4", "codex")),
    ("deepseek", ("deepseek",)),
    ("gemini", ("google", "gemini", "vertex")),
)
"""Words in a provider or model id that name its family (the model id decides over a router's name)."""

_warned: set[str] = set()


def warn_once(message: str) -> None:
    """Log a fallback once per process."""
    if message not in _warned:
        _warned.add(message)
        log.warning(message)


def family_of(provider: str, model: str) -> PriceModel:
    """The family of a provider / model id pair; `unknown` when neither names one."""
    for text in (model.lower(), provider.lower()):
        for family, words in FAMILY_WORDS:
            if any(word in text for word in words):
                return FAMILIES[family]
    return FAMILIES["unknown"]


def family_of_messages(messages: list[Message]) -> PriceModel:
    """The family of the newest assistant message that names its provider or model."""
    for message in reversed(messages):
        info = message["info"]
        provider, model = str(info.get("providerID") or ""), str(info.get("modelID") or "")
        if provider or model:
            return family_of(provider, model)
    return FAMILIES["unknown"]


def model_family(messages: list[Message], model: Any = None) -> PriceModel:
    """The family of the model OpenCode passed (its provider and id), else of the messages' model."""
    family = family_of(str(model.get("providerID", "")), str(model.get("id", ""))) if isinstance(model, dict) else None
    return family if family is not None and family.name != "unknown" else family_of_messages(messages)


def checked(prices: PriceModel, fallback: PriceModel) -> PriceModel:
    """`prices` when they make sense, else `fallback` (the reason logged once)."""
    problem = price_problem(prices)
    if problem:
        warn_once(f"prices {prices.name}: {problem}; using the {fallback.name} price model")
        return fallback
    return prices


def price_problem(prices: PriceModel) -> str:
    """Why a price model cannot be used ('' when it can)."""
    values = (prices.input, prices.cache_read, prices.cache_write)
    if not all(isinstance(value, (int, float)) and math.isfinite(value) for value in values):
        return "a price is not a finite number"
    if prices.input <= 0 or prices.cache_write <= 0:
        return "input and cache-write prices must be above zero"
    if prices.input > MAX_INPUT_PRICE:
        return f"input price {prices.input:g} per million tokens is beyond belief"
    if not 0 <= prices.cache_read <= prices.input:
        return "the cache-read price must be between zero and the input price"
    if not prices.input <= prices.cache_write <= prices.input * MAX_WRITE_PREMIUM:
        return f"the cache-write price must be between the input price and {MAX_WRITE_PREMIUM:g} times it"
    if prices.ttl_seconds <= 0:
        return "the cache lifetime must be above zero"
    return ""


def from_opencode(model: Any, family: PriceModel) -> PriceModel | None:
    """The prices OpenCode's model object carries (`cost.input`, `cost.cache.read/write`), or None.

    OpenCode gives 0 for a price the catalogue does not know: a missing cache-read price
    takes the family's share of the input price, a missing write price means no premium.
    """
    cost = model.get("cost") if isinstance(model, dict) else None
    if not isinstance(cost, dict):
        return None
    cache = cost.get("cache") if isinstance(cost.get("cache"), dict) else {}
    number = lambda value: float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0  # noqa: E731
    price = number(cost.get("input"))
    if price == 0 and not any(number(cache.get(key)) for key in ("read", "write")):
        return None
    read = number(cache.get("read")) or price * family.cache_read / family.input
    write = number(cache.get("write")) or price
    name = str(model.get("id") or family.name)
    return checked(PriceModel(name, price, read, write, family.ttl_seconds, family.cached_at_marks), family)


def resolve_prices(
    messages: list[Message], model: Any = None, configured: Callable[[PriceModel], PriceModel | None] | None = None
) -> PriceModel:
    """The prices a session's jumps are weighed with, first found first used: `[cost]`
    (`configured`, given what it would override), OpenCode's model (`model.cost`), the
    provider family the model or else the messages name, and last the cautious `unknown`;
    `keyless` for a model OpenCode sends no cache key or marks with."""
    family = model_family(messages, model)
    found = (from_opencode(model, family) if model else None) or family
    if found.name == "unknown":
        named = f"{model.get('providerID', '')}/{model.get('id', '')}" if model else "the messages' model"
        warn_once(f"no prices known for {named}: its jumps are weighed at the cautious defaults ({found.name})")
    if sends_no_cache_key(model) and not found.cached_at_marks:
        found = keyless(found)
    return (configured(found) if configured else None) or found
