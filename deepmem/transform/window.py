"""Where the host compacts: the request size past which OpenCode summarises a session, in deepmem's estimate.

OpenCode 1.18.33 compacts once a step's tokens, as the provider counted them (the request's
input, cached or not, plus its answer), reach the model's usable window:

- a model with an input limit: that limit less a reserve, the one the user configured
  (`compaction.reserved`, which the plugin reads from OpenCode's config), else the smaller of
  20,000 tokens and the model's output cap;
- any other: its context less its output cap;
- the output cap is the model's output limit, at most 32,000 tokens; a model that gives
  none takes 32,000;
- a model whose context is unknown (0) is never compacted.

For a 200K Claude model with a 64K output limit that is 168,000 Claude tokens. deepmem
counts in its own estimate (`deepmem.tokens`, close to o200k), and a provider's tokenizer
counts more: each family's ratio was measured against the usage the shared corpora recorded
(`python -m bench.runners.token_ratio`) and is kept at its 90th percentile with a margin; a
provider never measured takes the highest. The pressure point is the usable window, less
room for the step's answer, over that ratio: a whole request (frame and messages) estimated
past it forces a jump (`deepmem.transform.jumps`), so the host never sees the window filled.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

OUTPUT_TOKEN_MAX = 32_000
"""OpenCode's cap on the output it reserves for (its `OUTPUT_TOKEN_MAX`), also the reserve of a model with no output limit."""
INPUT_RESERVE_MAX = 20_000
"""The most OpenCode keeps free below a model's input limit."""
ANSWER_TOKENS = 8_192
"""Room left for the step's own answer, which the host counts with the request (the corpora's
answers, thinking included: at most 6,679 tokens in 99 of 100 steps on every corpus;
`bench/results/token_ratio.json`)."""
MARGIN = 1.10
"""Each family's measured ratio is kept this much higher."""
MEASURED_RATIOS = {"anthropic": 2.371, "openai": 1.228, "gemini": 1.159, "deepseek": 1.105}
"""Provider tokens per estimated token, the 90th percentile of the sessions of each family's corpora
(`bench/results/token_ratio.json`). Anthropic's spans two kinds of session: claude-entire's
(median 1.32) record what the model wrote; the later corpora (median 2.2 to 2.4) leave out the
model's thinking, which the provider keeps in the context and counts (their recorded answers are
3.4 to 3.6 times the text they show), as it may for thinking deepmem sees only summarised."""
TOKEN_RATIOS = {family: math.ceil(ratio * MARGIN * 100) / 100 for family, ratio in MEASURED_RATIOS.items()}
"""The ratios kept, with the margin."""
CAUTIOUS_RATIO = max(TOKEN_RATIOS.values())
"""The ratio of a provider whose tokenizer was never measured: the highest kept."""

RELIEF = 0.25
"""A jump forced by the window must remove at least this share of the pressure point, so that the
session grows a while before the next one; one that would free less is not forced (the tail and
the views kept whole fill the window, and a jump at every step would write the whole history
again each time)."""


class ModelLimits(msgspec.Struct, frozen=True):
    """A model's limits as OpenCode's catalogue gives them (`model.limit`), in the provider's tokens; 0 when not given."""

    context: int = 0
    input: int = 0
    output: int = 0
    reserved: int | None = None
    """The reserve the user configured below an input limit (OpenCode's `compaction.reserved`); None for OpenCode's own."""


def whole_count(value: Any) -> int:
    """A limit as a count of tokens: a positive whole number, else 0 (not given)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


def model_limits(model: Any, context_window: int = 0) -> ModelLimits:
    """The limits of the model OpenCode handed the plugin (`{"limit": {context, input, output, reserved?}}`);
    a configured `context_window` replaces its context."""
    limit = model.get("limit") if isinstance(model, dict) else None
    limit = limit if isinstance(limit, dict) else {}
    context = whole_count(context_window) or whole_count(limit.get("context"))
    reserved = limit.get("reserved")
    configured = reserved if isinstance(reserved, int) and not isinstance(reserved, bool) and reserved >= 0 else None
    return ModelLimits(context, whole_count(limit.get("input")), whole_count(limit.get("output")), configured)


def output_reserve(limits: ModelLimits) -> int:
    """The output OpenCode reserves: the model's output limit, at most `OUTPUT_TOKEN_MAX`; that cap when none."""
    return min(limits.output, OUTPUT_TOKEN_MAX) or OUTPUT_TOKEN_MAX


def usable_tokens(limits: ModelLimits) -> int:
    """The provider tokens at which OpenCode compacts a step (0: it never does, the context being unknown)."""
    if not limits.context:
        return 0
    if limits.input:
        reserve = min(INPUT_RESERVE_MAX, output_reserve(limits)) if limits.reserved is None else limits.reserved
        return max(limits.input - reserve, 1)
    return max(limits.context - output_reserve(limits), 1)


def token_ratio(family: str) -> float:
    """Provider tokens per estimated token for a price family (`deepmem.bill.prices`); the cautious one when unmeasured."""
    return TOKEN_RATIOS.get(family, CAUTIOUS_RATIO)


def pressure_tokens(limits: ModelLimits, family: str) -> int:
    """The estimated tokens of a whole request past which it must jump; 0 when the host never compacts.

    At least 1 when it does: a window too small to hold even the answer forces a jump at every step.
    """
    usable = usable_tokens(limits)
    if not usable:
        return 0
    return max(math.floor((usable - ANSWER_TOKENS) / token_ratio(family)), 1)
