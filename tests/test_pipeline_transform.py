"""The transform end to end: every compressor restorable, idempotent, deterministic, tier-monotone,
cache-stable between boundary jumps, and failing open on malformed outputs."""

from __future__ import annotations

import inspect
import json

import msgspec
import pytest

from deepmem.bill.prices import PriceModel, family_of_messages
from deepmem.compressors import FACT_FREE, REGISTRY
from deepmem.history import tier_for, visible_text
from deepmem.lru import LRU
from deepmem.markers import marker_keys
from deepmem.project.config import load_settings
from deepmem.tokens import estimate_tokens
from deepmem.transform.outcomes import CACHES
from deepmem.transform.plan import apply_edits, apply_transform, freeze_batches, plan_transform
from deepmem.transform.schedule import MessageTokens
from deepmem.types import TIERS, Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages
from deepmem.vault.sessionio import encode_json, read_session

from .conftest import FIXTURES

ONE_STEP = Settings(tail_steps=1, batch_steps=1, schedule="fixed")
ONE_BATCH = Settings(tail_steps=1, batch_steps=15, schedule="fixed")
NO_DISCOUNT = PriceModel("no-discount", 1.0, 1.0, 1.0, 300)
"""The kitchen sink's old steps in one batch, so later edits and repeats are known to earlier parts."""


def transform_tools() -> dict[str, dict]:
    """Tool parts of the captured OpenCode payload, by a short name."""
    messages = json.loads((FIXTURES / "sessions" / "opencode-transform.json").read_text())
    tools = [p for m in messages for p in m["parts"] if p.get("type") == "tool"]
    return {
        "read": tools[0],
        "json": next(p for p in tools if "Emit JSON" in json.dumps(p["state"]["input"])),
    }


def tool(index: int, tool_name: str, output: str, status: str = "completed", **inputs: object) -> dict:
    """A tool part with a unique id."""
    state = {"status": status, "input": inputs, "title": "t", "metadata": {}}
    state["error" if status == "error" else "output"] = output
    return {
        "id": f"prt_{index:04d}",
        "type": "tool",
        "tool": tool_name,
        "callID": f"call_{index}",
        "state": state,
    }


def kitchen_sink() -> list[dict]:
    """A session whose old steps exercise every compressor, then a protected tail (a list is
    one message holding several parts)."""
    shapes = transform_tools()
    long_prose = (
        "I checked `pkg/mod.py` and the writer. It is long. Filler words go here. " * 12 + "\n\n"
    ) * 3
    pytest_run = (
        "<returncode>1</returncode>\n<output>\n"
        + "\n".join(
            [f"tests/test_a.py::test_{n} PASSED" for n in range(80)]
            + [
                "FAILED tests/test_a.py::test_x - AssertionError: boom",
                "===== 1 failed, 80 passed in 2.00s =====",
            ]
        )
        + "\n</output>"
    )
    grep = "\n".join(f"pkg/m{f}.py:{n}:def f_{n}():" for f in range(20) for n in range(6))
    task = (
        "task_id: ses_1\n\n<task_result>\n## Found\n"
        + "\n".join(f"note {n}" for n in range(90))
        + "\n</task_result>"
    )
    skill = (
        "---\nname: s\n---\n# Skill\n" + "\n".join(f"plain step {n}" for n in range(90)) + "\nYou MUST test."
    )
    heredoc = "cat <<'EOF' > gen.py\n" + "\n".join(f"print({n})" for n in range(60)) + "\nEOF"
    parts = [
        {**shapes["read"], "id": "prt_0001"},
        {**shapes["read"], "id": "prt_0002", "callID": "call_2"},
        tool(3, "bash", pytest_run, command="pytest tests/test_a.py"),
        [
            tool(4, "grep", grep, pattern="def f_", path="pkg"),
            tool(18, "bash", pytest_run.replace("1 failed, 80", "2 failed, 79"), command="pytest tests/test_a.py"),
        ],
        {**shapes["json"], "id": "prt_0005"},
        tool(6, "task", task, description="look", prompt="p", subagent_type="general"),
        tool(7, "skill", skill, name="s"),
        tool(8, "bash", "written", command=heredoc),
        tool(9, "bash", "Command timed out after 120 seconds.\n" * 6 + "killed", "error", command=heredoc),
        tool(
            10,
            "edit",
            "Edit applied successfully.",
            filePath="/home/user/demo/jsonpkg/decoder.py",
            oldString="a",
            newString="b",
        ),
        {"id": "prt_0011", "type": "text", "text": long_prose + "<thinking>hmm</thinking> done"},
        {
            "id": "prt_0012",
            "type": "reasoning",
            "text": "secret",
            "metadata": {"anthropic": {"signature": "s"}},
        },
        {"id": "prt_0013", "type": "text", "text": "<system-reminder>x</system-reminder>\nok"},
        [
            tool(
                14,
                "bash",
                "\n".join(f"def f{n}():\n    return {n}\n" for n in range(400)),
                command="cat pkg/other.py",
            ),
            tool(16, "bash", "\n".join(f"export const u{n} = {n};" for n in range(200)), command="cat node_modules/lib/util.js"),
        ],
        [
            tool(15, "bash", "\n".join(f"export const v{n} = {n};" for n in range(200)), command="cat node_modules/lib/index.js"),
            tool(
                17,
                "edit",
                "Edit applied successfully.",
                filePath="/home/user/demo/node_modules/lib/util.js",
                oldString="export const u1 = 1;",
                newString="export const u1 = 2;",
            ),
        ],
    ]
    messages = [
        {
            "info": {"id": "msg_000", "sessionID": "ses_k", "role": "user"},
            "parts": [{"id": "prt_u", "type": "text", "text": "fix it"}],
        }
    ]
    for index, part in enumerate(
        parts + [{"id": f"prt_t{n}", "type": "text", "text": "tail"} for n in range(3)]
    ):
        messages.append(
            {
                "info": {"id": f"msg_{index + 1:03d}", "sessionID": "ses_k", "role": "assistant"},
                "parts": part if isinstance(part, list) else [part],
            }
        )
    return messages


def compress(messages: list[dict], settings: Settings, store: CCRStore, tier=None) -> list[dict]:
    """Plan, store originals, apply."""
    plan = plan_transform(messages, settings, tier)
    store.put_all(plan.originals)
    return apply_transform(messages, plan)


def test_every_compressor_runs_and_restores_exactly(tmp_path) -> None:
    """The kitchen-sink session uses every compressor but capture, and restores byte for byte.
    (Priced with no cache discount, renting a view costs as much as reading it again: no view
    stays whole past the young steps, so the working set's compressor meets the file it read.)"""
    messages = kitchen_sink()
    plan = plan_transform(messages, ONE_BATCH, prices=NO_DISCOUNT)
    used = {name for edit in plan.edits for name in edit.part["metadata"]["deepmem"]["by"]}
    assert used == set(REGISTRY) - {"capture"}
    assert plan.failures == 0
    store = CCRStore(tmp_path)
    out = compress(messages, ONE_BATCH, store)
    assert restore_messages(out, CCRStore(tmp_path)) == messages


def test_every_marker_key_expands_to_text_it_cut(tmp_path) -> None:
    """Every `ccr:` key in the compressed session is stored and returns an original."""
    store = CCRStore(tmp_path)
    out = compress(kitchen_sink(), ONE_BATCH, store)
    text = encode_json(out).decode()
    keys = set(marker_keys(text))
    assert len(keys) > 10
    assert all(store.get(key) for key in keys)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("settings", [ONE_STEP, ONE_BATCH])
def test_idempotent_and_deterministic(tier, settings) -> None:
    """A second pass changes nothing; a cold cache gives the same bytes as a warm one."""
    messages = kitchen_sink()
    once = compress(messages, settings, CCRStore(None), tier)
    assert compress(once, settings, CCRStore(None), tier) == once
    CACHES.clear()
    assert encode_json(compress(messages, settings, CCRStore(None), tier)) == encode_json(once)


@pytest.mark.parametrize("fixture", ["kitchen", "django-15499.json", "opencode-demo.json"])
def test_higher_tier_never_yields_more_tokens(fixture: str) -> None:
    """Tokens of the history's own parts shrink or stay as the tier rises."""
    messages = (
        kitchen_sink()
        if fixture == "kitchen"
        else read_session(str(FIXTURES / "sessions" / fixture)).messages
    )
    totals = []
    for tier in TIERS:
        out = apply_edits(messages, plan_transform(messages, ONE_STEP, tier).edits)
        totals.append(sum(estimate_tokens(visible_text(p)) for m in out for p in m["parts"]))
    assert totals[0] >= totals[1] >= totals[2]
    assert totals[2] < totals[0]


def visible(messages: list[dict]) -> list[str]:
    """Serialized visible parts, in order."""
    return [visible_text(p) for m in messages for p in m["parts"]]


def test_old_content_changes_only_when_the_boundary_jumps() -> None:
    """Replayed step by step: between jumps each context extends the previous one; at a jump,
    a part that was already old changes only when it is a working-set read released there
    (`release_pays`), and at least one jump releases nothing."""
    messages = read_session(str(FIXTURES / "sessions" / "django-15499.json")).messages
    settings = Settings()
    prices = family_of_messages(messages)
    starts = [i for i, m in enumerate(messages) if m["info"]["role"] == "assistant"]
    parts = [p for m in messages for p in m["parts"]]
    previous = None
    jumps, untouched = 0, 0
    for start in starts[1:]:
        history = messages[:start]
        plan = plan_transform(history, settings)
        current = visible(apply_edits(history, plan.edits))
        if previous is not None:
            old_plan, old_context = previous
            if plan.layout.boundary == old_plan.layout.boundary:
                assert current[: len(old_context)] == old_context
            else:
                jumps += 1
                old = sum(len(m["parts"]) for m in history[: old_plan.layout.first_young])
                changed = [i for i in range(old) if current[i] != old_context[i]]
                digests = [None] * len(history)
                sizes = MessageTokens(history, digests, plan.layout.message_steps, settings)
                frozen = freeze_batches(history, digests, plan.layout, settings, prices, sizes)
                released = {part_id for pairs in frozen.releases.values() for part_id, _ in pairs}
                assert all(parts[i]["id"] in released for i in changed), changed
                untouched += not changed
        previous = (plan, current)
    assert jumps >= 2 and untouched >= 1


def test_capture_trims_a_new_output_identically_at_every_step() -> None:
    """A huge output in the protected tail is trimmed the first time and the same way later."""
    big = "\n".join(f"line {n} " + "x" * 60 for n in range(5_000))
    messages = kitchen_sink()[:2]
    messages.append(
        {
            "info": {"id": "msg_b", "sessionID": "s", "role": "assistant"},
            "parts": [tool(99, "bash", big, command="make")],
        }
    )
    first = plan_transform(messages, Settings())
    [edit] = [e for e in first.edits if e.part_id == "prt_0099"]
    assert edit.part["metadata"]["deepmem"]["by"] == ["capture"]
    assert estimate_tokens(edit.part["state"]["output"]) <= Settings().capture_command_cap_tokens * 1.1
    later = messages + [
        {
            "info": {"id": "msg_c", "sessionID": "s", "role": "assistant"},
            "parts": [{"id": "prt_c", "type": "text", "text": "next"}],
        }
    ]
    CACHES.clear()
    again = [e for e in plan_transform(later, Settings()).edits if e.part_id == "prt_0099"]
    assert again[0].part == edit.part


def one_output_session(output: str) -> list[dict]:
    """An old bash output followed by enough steps to make it old."""
    messages = [
        {
            "info": {"id": "msg_0", "sessionID": "s", "role": "user"},
            "parts": [{"id": "prt_u", "type": "text", "text": "go"}],
        }
    ]
    messages.append(
        {
            "info": {"id": "msg_1", "sessionID": "s", "role": "assistant"},
            "parts": [tool(1, "bash", output, command="run")],
        }
    )
    for n in range(3):
        messages.append(
            {
                "info": {"id": f"msg_{n + 2}", "sessionID": "s", "role": "assistant"},
                "parts": [{"id": f"prt_{n}", "type": "text", "text": "ok"}],
            }
        )
    return messages


@pytest.mark.parametrize(
    ("name", "output"),
    [
        ("binary junk", "".join(chr(c) for c in range(0, 0x2FF)) * 300 + "\x00\ufffd\x7f"),
        ("ten megabyte line", "Z" * 10_000_000),
        ("truncated json array", '[{"id": 1, "name": "a"}, ' * 400 + '{"id": 2, "na'),
    ],
)
def test_malformed_outputs_never_raise(name: str, output: str, tmp_path) -> None:
    """Junk, huge lines and truncated JSON go through: cut, restorable, and no failure."""
    messages = one_output_session(output)
    plan = plan_transform(messages, ONE_STEP)
    assert plan.failures == 0, name
    assert [edit.part_id for edit in plan.edits] == ["prt_0001"], name
    store = CCRStore(tmp_path)
    out = compress(messages, ONE_STEP, store)
    assert restore_messages(out, store) == messages


def test_lone_surrogates_pass_through_and_are_counted() -> None:
    """Text that is not valid UTF-8 (a lone surrogate) is left as it was, and counted."""
    messages = one_output_session("bad \ud800 text\n" * 2_000)
    plan = plan_transform(messages, ONE_STEP)
    assert plan.failures == 1
    assert not [e for e in plan.edits if e.part_id == "prt_0001"]


def test_memoized_plan_equals_a_cold_plan_on_a_growing_history() -> None:
    """Warm caches (step after step, each plan reusing the previous one's messages) give exactly
    the plan a cold process gives: every field, nudges included."""
    messages = read_session(str(FIXTURES / "sessions" / "django-15499.json")).messages
    settings = msgspec.structs.replace(Settings(), tail_steps=2, batch_steps=3, schedule="fixed")
    ends = range(10, len(messages), 7)
    CACHES.clear()
    warm = [plan_transform(messages[:end], settings) for end in ends]
    assert len(CACHES.histories) == 1 and len(CACHES.messages) > 0
    for end, plan in zip(ends, warm, strict=True):
        CACHES.clear()
        assert len(CACHES) == 0
        cold = plan_transform(messages[:end], settings)
        assert encode_json(msgspec.to_builtins(plan)) == encode_json(msgspec.to_builtins(cold)), end


def test_caches_are_bounded() -> None:
    """The memo caches never grow past their size."""
    cache = LRU(3)
    for n in range(10):
        assert cache.get(n, lambda n=n: n * 2) == n * 2
    assert list(cache.entries) == [7, 8, 9]


def test_tier_thresholds_come_from_config_and_environment(tmp_path, monkeypatch) -> None:
    """`[compress]` in config.toml, then DEEPMEM_* variables; a known window lowers the thresholds."""
    (tmp_path / ".deep-memory").mkdir()
    (tmp_path / ".deep-memory" / "config.toml").write_text(
        "[compress]\ntier_medium_tokens = 1000\ntail_steps = 2\n"
    )
    monkeypatch.setenv("DEEPMEM_TIER_HIGH_TOKENS", "5000")
    settings = load_settings(tmp_path)
    assert (settings.tier_medium_tokens, settings.tier_high_tokens, settings.tail_steps) == (1000, 5000, 2)
    assert [tier_for(n, settings) for n in (999, 1000, 5000)] == ["low", "medium", "high"]
    window = Settings(context_window=100_000)
    assert [tier_for(n, window) for n in (24_999, 25_000, 60_000)] == ["low", "medium", "high"]


def test_compressors_shared_between_probe_and_plan_read_no_history() -> None:
    """A compressor whose outcome the pipeline reuses across batches never reads the facts, step or age."""
    readers = {
        name
        for name, module in REGISTRY.items()
        if any(word in inspect.getsource(module) for word in ("ctx.facts", "ctx.step", "ctx.age", "facts."))
    }
    assert readers and not readers & FACT_FREE
