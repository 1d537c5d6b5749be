"""What a session's recorded usage says about the requests its agent really sent.

`claude-entire` carries on every assistant message the usage the provider billed for that
request (`info.tokens`: `input`, `cache.read`, `cache.write`; exact, unlike `output`), and
its `manifest.json` splits each session's cache writes by lifetime (`cache_write_5m`,
`cache_write_1h`). Two facts follow per session:

- **the real prefix**: what the agent sent before the messages (its system prompt and tool
  definitions), in tokens: a request's recorded tokens less our o200k count of its messages.
  The prefix is the same in every request while the gap between the provider's tokenizer
  and ours grows with the history, so it is read from the first requests: the median over
  the first `PREFIX_REQUESTS` of them, so that one odd request does not decide it;
- **the cache lifetime**: a session that wrote 1-hour entries is billed at Anthropic's
  1-hour price (writes at 2× input) and lifetime, any other at the 5-minute ones.
"""

from __future__ import annotations

import functools
import statistics
from pathlib import Path

import msgspec
import orjson

from deepmem.bill.prices import PriceModel, with_lifetime
from deepmem.replay.loop import TokenCounter, session_steps
from deepmem.transform.context import context_units
from deepmem.types import Message

PREFIX_REQUESTS = 5
"""Requests at the start of a session whose recorded tokens the real prefix is read from."""


class Usage(msgspec.Struct, frozen=True):
    """What the provider billed for one request, in tokens."""

    input: int
    """Tokens neither read from nor written to the cache (billed at the input price)."""
    cache_read: int
    cache_write: int

    @property
    def tokens(self) -> int:
        """Every input token of the request."""
        return self.input + self.cache_read + self.cache_write


class SessionUsage(msgspec.Struct, frozen=True):
    """What one session's recorded usage tells about its requests."""

    prefix: int
    """Tokens each request carried before its messages (system prompt, tool definitions)."""
    one_hour: bool
    """Whether the session wrote 1-hour cache entries."""
    requests: list[Usage | None]
    """Per step, what the provider billed (None where nothing was recorded)."""

    def prices(self, family: PriceModel) -> PriceModel:
        """The family's prices with this session's cache lifetime (and its write price)."""
        return with_lifetime(family, self.one_hour)


def recorded_usage(message: Message) -> Usage | None:
    """The usage an assistant message records for its request; None when it records none."""
    tokens = message["info"].get("tokens")
    cache = tokens.get("cache") if isinstance(tokens, dict) else None
    if not isinstance(cache, dict):
        return None
    usage = Usage(int(tokens.get("input") or 0), int(cache.get("read") or 0), int(cache.get("write") or 0))
    return usage if usage.tokens else None


def real_prefix(messages: list[Message], requests: list[Usage | None], counter: TokenCounter) -> int:
    """Tokens a session's requests carried before their messages: the median, over its first
    recorded requests, of recorded tokens less our count of the messages (0 when none recorded)."""
    gaps = []
    for step, usage in zip(session_steps(messages), requests, strict=True):
        if usage is not None:
            gaps.append(usage.tokens - sum(counter.count_many(context_units(step.history))))
        if len(gaps) == PREFIX_REQUESTS:
            break
    return max(0, round(statistics.median(gaps))) if gaps else 0


@functools.cache
def one_hour_sessions(folder: Path) -> frozenset[str]:
    """File names of the sessions in a corpus folder that wrote 1-hour cache entries, from its
    `manifest.json` (none without one)."""
    manifest = folder / "manifest.json"
    if not manifest.is_file():
        return frozenset()
    sessions = orjson.loads(manifest.read_bytes()).get("sessions", [])
    return frozenset(row["file"] for row in sessions if (row.get("usage") or {}).get("cache_write_1h", 0) > 0)


def session_usage(path: Path, messages: list[Message], counter: TokenCounter) -> SessionUsage:
    """The recorded usage of the session exported at `path` (`messages` read from it): its real
    prefix, its cache lifetime and what each request was billed."""
    requests = [recorded_usage(step.message) for step in session_steps(messages)]
    return SessionUsage(real_prefix(messages, requests, counter), path.name in one_hour_sessions(path.parent), requests)
