"""Priced jumps inside the real OpenCode: few jumps while the cache is warm, a deep one after a pause.

The working-set session (`test_working_set_e2e`) with a pause in the middle: one command
runs longer than the cache lives (the lifetime is set to 2 s for the test, as `[cost]
cache_ttl_seconds` would for a user). The model carries Anthropic-like prices in
opencode.json, which OpenCode hands the plugin. The fake model records every request.
"""

from __future__ import annotations

import json

from tests.e2e.test_working_set_e2e import bash, quoted, request_tokens, run_both, session_script

PAUSE_AT = 20
"""Index of the scripted step that pauses (a command outlasting the cache)."""
ENGINE_ENV = {"DEEPMEM_DEADLINE_MS": "20000", "DEEPMEM_COST_CACHE_TTL_SECONDS": "2"}
CONTEXT_LIMIT = 200_000
"""A window this session never presses (window pressure has its own tests): every jump here is priced."""
PRICES = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}


def paused_script() -> list[dict]:
    """The working-set session with a 3-second command at step PAUSE_AT."""
    script = session_script()
    return [*script[:PAUSE_AT], bash("sleep 3 && echo rested"), *script[PAUSE_AT:]]


def shared_chars(before: str, after: str) -> int:
    """Characters of `before` that `after` starts with."""
    count = 0
    for old, new in zip(before, after, strict=False):
        if old != new:
            break
        count += 1
    return count


def prefix_reuse(requests: list[str]) -> list[float]:
    """Per request after the first: the share of the previous request it starts with."""
    return [shared_chars(before, after) / len(before) for before, after in zip(requests, requests[1:], strict=False)]


def warm_cost(requests: list[str], cold: int) -> float:
    """Characters billed as a cache would: what repeats the previous request at 0.1, the rest at 1.25;
    request `cold` (after the pause) finds the cache gone and is written whole."""
    total, before = 0.0, ""
    for number, text in enumerate(requests):
        shared = 0 if number == cold else shared_chars(before, text)
        total += 0.1 * shared + 1.25 * (len(text) - shared)
        before = text
    return total


def test_jumps_pay_and_the_pause_cuts_deep(opencode_project) -> None:
    script = paused_script()
    plain, project = run_both(opencode_project, script, ENGINE_ENV, context_limit=CONTEXT_LIMIT, cost=PRICES)
    llm = project.llm
    requests = {request.step: request for request in llm.agent_requests()}
    for index, step in enumerate(script):
        if step.get("tool") == "edit":
            missing = [line for line in quoted(step["args"]["oldString"]) if line not in requests[index].text()]
            assert not missing, f"step {index}: the edit quotes lines its request did not show: {missing}"
    texts = [json.dumps(llm.agent_requests()[index].messages) for index in range(len(requests))]
    reuse = prefix_reuse(texts)
    after_pause = PAUSE_AT + 1
    # The request after the pause finds the cache cold: the schedule jumps there, so it is
    # smaller than the request before it although a step was added.
    assert len(texts[after_pause]) < len(texts[after_pause - 1]), "no jump at the pause"
    warm = [share for number, share in enumerate(reuse, 1) if number != after_pause]
    jumps = [number for number, share in enumerate(reuse, 1) if share < 0.9]
    overall = sum(share * len(texts[number - 1]) for number, share in enumerate(reuse, 1) if number != after_pause)
    overall /= sum(len(texts[number - 1]) for number in range(1, len(texts)) if number != after_pause)
    with_plugin, without = request_tokens(llm), request_tokens(plain.llm)
    ratio = warm_cost(texts, after_pause) / warm_cost(
        [json.dumps(request.messages) for request in plain.llm.agent_requests()], after_pause
    )
    print(
        f"tokens with deepmem {with_plugin:,}, without {without:,}; prefix reuse of warm requests {overall:.3f} "
        f"(lowest {min(warm):.3f}); requests that lost over 10%: {jumps}; after the pause: {reuse[after_pause - 1]:.3f}; "
        f"warm-cache cost {ratio:.3f}× (characters, cache read 0.1×, write 1.25×)"
    )
    print("prefix reuse per request: " + " ".join(f"{share:.2f}" for share in reuse))
    assert ratio < 0.75, f"the session cost {ratio:.3f}× of no compression"
    assert with_plugin <= 0.5 * without, f"{with_plugin:,} tokens with deepmem, {without:,} without"
    # Each jump gives up most of one request's cached prefix, and each here paid for itself;
    # a schedule that slid every step would fall far below this.
    assert overall >= 0.85 and len(jumps) <= 6, f"prefix reuse of warm requests {overall:.3f}, jumps at {jumps}"
