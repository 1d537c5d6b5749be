"""Priced jumps inside the real OpenCode: few jumps while the cache is warm, a deep one after a pause.

The working-set session (`test_working_set_e2e`) with a pause in the middle: one command
runs longer than the cache lives (the lifetime is set to 2 s for the test, as `[cost]
cache_ttl_seconds` would for a user). The model carries Anthropic-like prices in
opencode.json, which OpenCode hands the plugin. The fake model records every request.

Played once by a model of no known family, whose cache reads any repeated prefix, and once
by a model named like Anthropic's, whose requests OpenCode marks for the cache: that one is
billed from the requests themselves, reading only up to the marks OpenCode placed.
"""

from __future__ import annotations

import json

import msgspec

from deepmem.bill.prices import FAMILIES
from deepmem.tokens import estimate_tokens
from deepmem.transform.plan import plan_transform
from deepmem.types import Settings
from tests.e2e.test_cache_marks_e2e import marked
from tests.e2e.test_working_set_e2e import bash, quoted, request_tokens, run_both, session_script

PAUSE_AT = 20
"""Index of the scripted step that pauses (a command outlasting the cache)."""
ENGINE_ENV = {"DEEPMEM_DEADLINE_MS": "20000", "DEEPMEM_COST_CACHE_TTL_SECONDS": "2"}
CONTEXT_LIMIT = 1_000_000
"""A window this session never presses (window pressure has its own tests): every jump here is priced."""
PRICES = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}
ANTHROPIC_MODEL = "claude-fake"
"""A model id OpenCode takes for Anthropic's: its requests carry cache marks, and deepmem prices it so."""


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


def without_marks(value):
    """A provider message with its cache marks taken out (a mark changes nothing the model reads)."""
    if isinstance(value, dict):
        return {key: without_marks(item) for key, item in value.items() if key != "cache_control"}
    if isinstance(value, list):
        return [without_marks(item) for item in value]
    return value


def marked_reads(requests: list[list[dict]], cold: int) -> list[tuple[int, int]]:
    """Per request: (estimated tokens, those read from the cache) as a cache read only at marks
    bills it: the previous request's messages up to the last of its marks that this one repeats
    whole. Request `cold` (after the pause) reads nothing."""
    rows, before, marks = [], [], []
    for number, messages in enumerate(requests):
        plain = [without_marks(message) for message in messages]
        sizes = [estimate_tokens(json.dumps(message)) for message in plain]
        pairs = enumerate(zip(before, plain, strict=False))
        same = next((index for index, (old, new) in pairs if old != new), min(len(before), len(plain)))
        reached = max((mark + 1 for mark in marks if mark < same), default=0)
        rows.append((sum(sizes), 0 if number == cold else sum(sizes[:reached])))
        before, marks = plain, [index for index, message in enumerate(messages) if marked(message)]
    return rows


def marked_cost(rows: list[tuple[int, int]]) -> float:
    """What `marked_reads` rows cost at PRICES: reads at the cache-read price, the rest written."""
    return sum(PRICES["cache_read"] * read + PRICES["cache_write"] * (tokens - read) for tokens, read in rows)


def assert_edits_see_their_lines(script: list[dict], llm) -> None:
    """Every edit's request showed each line the edit quotes."""
    requests = {request.step: request for request in llm.agent_requests()}
    for index, step in enumerate(script):
        if step.get("tool") == "edit":
            missing = [line for line in quoted(step["args"]["oldString"]) if line not in requests[index].text()]
            assert not missing, f"step {index}: the edit quotes lines its request did not show: {missing}"


def test_jumps_pay_and_the_pause_cuts_deep(opencode_project) -> None:
    script = paused_script()
    plain, project, _ = run_both(opencode_project, script, ENGINE_ENV, context_limit=CONTEXT_LIMIT, cost=PRICES)
    llm = project.llm
    requests = {request.step: request for request in llm.agent_requests()}
    assert_edits_see_their_lines(script, llm)
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


def jump_steps(messages: list[dict], cached_at_marks: bool) -> list[int]:
    """The steps at which deepmem's schedule jumps in an exported session priced as Anthropic
    (the test's cache lifetime), reading its cache only at marks or at any repeated prefix."""
    prices = msgspec.structs.replace(FAMILIES["anthropic"], ttl_seconds=2, cached_at_marks=cached_at_marks)
    settings = Settings()
    return [boundary + settings.tail_steps for boundary in plan_transform(messages, settings, prices=prices).layout.jumps[1:]]


def test_a_claude_session_billed_at_opencode_marks_costs_less(opencode_project) -> None:
    """The same session to a model OpenCode marks: billed from its own requests at their marks,
    deepmem costs less than no plugin, cuts deep at the pause, and jumps where the schedule
    priced at marks says, not where one priced for any repeated prefix would."""
    script = paused_script()
    options = {"context_limit": CONTEXT_LIMIT, "cost": PRICES, "model_id": ANTHROPIC_MODEL}
    plain, project, run = run_both(opencode_project, script, ENGINE_ENV, **options)
    assert_edits_see_their_lines(script, project.llm)
    mine = [request.body["messages"] for request in project.llm.agent_requests()]
    theirs = [request.body["messages"] for request in plain.llm.agent_requests()]
    assert all(any(marked(message) for message in messages) for messages in mine + theirs), "a request went unmarked"
    after_pause = PAUSE_AT + 1
    rows = marked_reads(mine, after_pause)
    ratio = marked_cost(rows) / marked_cost(marked_reads(theirs, after_pause))
    # A request that reads under half of the one before it wrote the old messages again: a jump.
    jumps = [n for n in range(1, len(rows)) if n == after_pause or rows[n][1] < 0.5 * rows[n - 1][0]]
    warm = [row for number, row in enumerate(rows) if number not in (0, after_pause)]
    read_share = sum(read for _, read in warm) / sum(tokens for tokens, _ in warm)
    exported = project.export(run.session_id)["messages"]
    at_marks, at_any_prefix = jump_steps(exported, True), jump_steps(exported, False)
    print(
        f"{ANTHROPIC_MODEL}, billed at OpenCode's marks: cost {ratio:.3f}× of no plugin, "
        f"{sum(tokens for tokens, _ in rows):,} tokens, {read_share:.3f} of warm requests read from the cache; "
        f"jumps at {jumps} (the pause at {after_pause}); "
        f"the schedule priced at marks jumps at {at_marks}, for any repeated prefix at {at_any_prefix}"
    )
    assert rows[after_pause][0] < rows[after_pause - 1][0], "no jump at the pause"
    assert ratio < 0.5, f"the session cost {ratio:.3f}× of no plugin at Anthropic's marks"
    assert jumps == [step for step in at_marks if step < len(rows)], "the plugin did not jump where the schedule at marks does"
    # On this session a schedule blind to the marks jumps earlier near its end: the plugin
    # took the model for Anthropic's from its id, as the real OpenCode passed it.
    assert at_marks != at_any_prefix
