"""Properties of the transform: deterministic, idempotent, reversible, user text untouched."""

from __future__ import annotations

import copy

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepmem.history import is_user_typed, visible_text
from deepmem.tokens import estimate_tokens
from deepmem.transform.cache_mark import opening_parts
from deepmem.transform.plan import apply_transform, plan_transform
from deepmem.types import TIERS, Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages
from deepmem.vault.sessionio import encode_json, read_session

from .conftest import FIXTURES

SMALL = Settings(tail_steps=1, batch_steps=2)

words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
lines = st.lists(words, max_size=30).map("\n".join)
BLOCK = "<system-reminder>remember the plan</system-reminder>\n"
blocks = st.sampled_from(["", BLOCK, "<thinking>maybe x</thinking> "])


@st.composite
def parts(draw, message_id: str, role: str, index: int) -> dict:
    """One part of a kind OpenCode sends to the model."""
    base = {"id": f"prt_{message_id}_{index:03d}", "sessionID": "ses_x", "messageID": message_id}
    if role == "user":
        return {**base, "type": "text", "text": draw(blocks) + draw(lines), "synthetic": draw(st.booleans())}
    kind = draw(st.sampled_from(["text", "reasoning", "tool", "tool-error", "step-start"]))
    if kind == "text":
        return {**base, "type": "text", "text": draw(blocks) + draw(lines)}
    if kind == "reasoning":
        return {**base, "type": "reasoning", "text": draw(lines), "metadata": {"anthropic": {"signature": "s"}}}
    if kind == "step-start":
        return {**base, "type": "step-start"}
    tool = draw(st.sampled_from(["bash", "read", "grep", "edit", "task"]))
    inputs = {"command": draw(words)} if tool == "bash" else {"filePath": "/p/" + draw(words)}
    if kind == "tool-error":
        state = {"status": "error", "input": inputs, "error": draw(lines)}
    else:
        state = {"status": "completed", "input": inputs, "output": draw(blocks) + draw(lines), "title": "t"}
    return {**base, "type": "tool", "tool": tool, "callID": f"call_{message_id}_{index}", "state": state}


@st.composite
def histories(draw) -> list[dict]:
    """A history of user and assistant messages with mixed parts."""
    messages = []
    for index in range(draw(st.integers(1, 14))):
        role = "user" if index == 0 or draw(st.integers(0, 5)) == 0 else "assistant"
        message_id = f"msg_{index:03d}"
        count = draw(st.integers(1, 4))
        messages.append(
            {
                "info": {"id": message_id, "sessionID": "ses_x", "role": role},
                "parts": [draw(parts(message_id, role, i)) for i in range(count)],
            }
        )
    return messages


def compress(messages: list[dict], store: CCRStore, tier=None, config: Settings = SMALL) -> list[dict]:
    """Plan, store originals, apply."""
    plan = plan_transform(messages, config, tier)
    store.put_all(plan.originals)
    return apply_transform(messages, plan)


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(histories())
def test_deterministic(messages: list[dict]) -> None:
    """The same input gives the same bytes, and the input is not mutated."""
    before = copy.deepcopy(messages)
    first = encode_json(compress(messages, CCRStore(None)))
    second = encode_json(compress(messages, CCRStore(None)))
    assert first == second
    assert messages == before


@PROPERTY
@given(histories())
def test_idempotent(messages: list[dict]) -> None:
    """Compressing an already compressed history changes nothing."""
    once = compress(messages, CCRStore(None))
    assert compress(once, CCRStore(None)) == once


def test_a_repeated_call_too_short_to_point_at_is_compressed_in_one_pass() -> None:
    """A duplicate whose pointer would not be shorter still gets its kind's compressors at
    once: a second pass would otherwise find the newer copy changed and cut the older one."""

    def message(index: int, part: dict) -> dict:
        base = {"id": f"prt_{index}", "sessionID": "ses_x", "messageID": f"msg_{index:03d}"}
        return {"info": {"id": f"msg_{index:03d}", "sessionID": "ses_x", "role": part.pop("role")}, "parts": [base | part]}

    call = {"status": "completed", "input": {"command": ""}, "output": BLOCK, "title": "t"}
    user = {"role": "user", "type": "text", "text": "", "synthetic": False}
    messages = [
        message(0, dict(user)),
        message(1, {"role": "assistant", "type": "tool", "tool": "bash", "callID": "call_1", "state": dict(call)}),
        message(2, dict(user)),
        message(3, {"role": "assistant", "type": "tool", "tool": "bash", "callID": "call_3", "state": dict(call)}),
        message(4, {"role": "assistant", "type": "text", "text": ""}),
    ]
    fixed = msgspec.structs.replace(SMALL, schedule="fixed")
    once = compress(messages, CCRStore(None), config=fixed)
    assert BLOCK not in once[1]["parts"][0]["state"]["output"]
    assert compress(once, CCRStore(None), config=fixed) == once


@PROPERTY
@given(histories())
def test_reversible(messages: list[dict]) -> None:
    """Restoring through CCR gives the original history exactly."""
    store = CCRStore(None)
    assert restore_messages(compress(messages, store), store) == messages


@PROPERTY
@given(histories())
def test_user_text_untouched(messages: list[dict]) -> None:
    """User-typed text parts come out exactly as they went in (a nudge may follow, in a trailing message)."""
    out = compress(messages, CCRStore(None), "high")
    assert len(out) - len(messages) in (0, 1)
    for original, compressed in zip(messages, out[: len(messages)], strict=True):
        for a, b in zip(original["parts"], compressed["parts"], strict=True):
            if is_user_typed(original, a):
                assert a == b


@PROPERTY
@given(histories())
def test_higher_tier_never_more_tokens(messages: list[dict]) -> None:
    """Tokens of the history's own parts shrink (or stay) as the tier rises (nudges aside)."""
    totals = []
    for tier in TIERS:
        out = compress(messages, CCRStore(None), tier)
        own = (p for m, o in zip(messages, out, strict=False) for p in o["parts"][: len(m["parts"])])
        totals.append(sum(estimate_tokens(visible_text(p)) for p in own))
    assert totals == sorted(totals, reverse=True)


REAL = ["opencode-demo.json", "opencode-transform.json", "django-15499.json"]


@pytest.mark.parametrize("fixture", REAL)
@pytest.mark.parametrize("overrides", [{}, {"schedule": "fixed"}, {"tail_steps": 1, "batch_steps": 1, "schedule": "fixed"}])
def test_real_sessions(fixture: str, overrides: dict, tmp_path) -> None:
    """On real sessions: same bytes twice, exactly restorable, old reasoning gone but the opening's; a second pass
    changes nothing already cut (on the fixed schedule nothing at all: the priced one weighs the
    smaller history it is given and may jump elsewhere)."""
    config = msgspec.structs.replace(Settings(), **overrides)
    messages = read_session(str(FIXTURES / "sessions" / fixture)).messages
    store = CCRStore(tmp_path, config)
    once = compress(messages, store, config=config)
    assert encode_json(once) == encode_json(compress(messages, CCRStore(None), config=config))
    twice = compress(once, CCRStore(None), config=config)
    if config.schedule == "fixed":
        assert twice == once
    cut = [(m, p) for m, message in enumerate(once) for p, part in enumerate(message["parts"]) if "deepmem" in (part.get("metadata") or {})]
    assert all(twice[m]["parts"][p] == once[m]["parts"][p] for m, p in cut)
    assert restore_messages(once, CCRStore(tmp_path, config)) == messages
    plan = plan_transform(messages, config)
    old = once[: plan.layout.first_young]
    _, opening = opening_parts(messages)
    assert all(p["text"] == "" for m in old for p in m["parts"] if p["type"] == "reasoning" and p["id"] not in opening)
