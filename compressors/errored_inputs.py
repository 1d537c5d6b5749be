"""Inputs of old errored calls are purged: replaced by a small object naming their CCR key."""

from __future__ import annotations

import orjson

from deepmem.markers import shown_key
from deepmem.types import Context, Original, Part, Result, cache_key

NAME = "errored_inputs"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""


def compress(part: Part, ctx: Context) -> Result | None:
    """Swap an errored call's input for `{"purged": "ccr:<shown key>", "chars": N}` when that is smaller."""
    state = part.get("state") or {}
    inputs = state.get("input")
    if state.get("status") != "error" or not inputs:
        return None
    text = orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS).decode()
    key = cache_key(text, NAME)
    purged = {"purged": f"ccr:{shown_key(key)}", "chars": len(text), "restore": "deep_expand"}
    if len(orjson.dumps(purged)) >= len(text):
        return None
    return Result(part={**part, "state": {**state, "input": purged}}, originals=(Original(key, text),))
