"""Nudges: detections in English and Chinese, cooldowns worked out from the messages, placement
at the end of the context, and agreement between a cold and a step-by-step computation."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepmem.phrasing import NUDGE_PATTERNS
from deepmem.transform import nudges
from deepmem.transform.plan import apply_edits, apply_transform, plan_transform
from deepmem.types import Settings
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("OK. I'll use orjson for the encoder from now on.", "decision"),
        ("We decided to keep the old API.", "decision"),
        ("We must not touch the migrations folder.", "constraint"),
        ("The crash was fixed by resetting the cache.", "fix"),
        ("我决定使用 SQLite 作为存储。", "decision"),
        ("这个目录不能修改。", "constraint"),
        ("修复了解析器的空指针问题。", "fix"),
    ],
)
def test_detects_decisions_constraints_and_fixes(text: str, kind: str) -> None:
    """English and Chinese statements are found, with their sentence."""
    found = nudges.detect_memories(text)
    assert kind in {d.kind for d in found}
    assert all(d.sentence and d.sentence in " ".join(text.split()) for d in found)


def test_plain_text_is_not_detected() -> None:
    """Ordinary narration triggers nothing."""
    assert nudges.detect_memories("Let me look at the file and run the tests.") == ()


def whole_text_detections(text: str) -> tuple[nudges.Detection, ...]:
    """Every pattern over the whole text, sentence found around each match (the plain way)."""
    found = []
    for kind, pattern, _ in NUDGE_PATTERNS:
        for match in pattern.finditer(text):
            start = max(text.rfind(mark, 0, match.start()) for mark in (".", "\n", "。")) + 1
            sentence = nudges.SENTENCE.match(text, start)
            snippet = " ".join((sentence.group(0) if sentence else "").split())
            found.append(nudges.Detection(kind, snippet[: nudges.SNIPPET_CHARS]))
    return tuple(found)


PHRASES = ["We decided to", "I'll use", "MUST NOT", "never use", "the fix is", "Fixed by", "ſhould not",
           "We decİded to", "the fıx is", "I will use", "let's use", "LET'S USE", "fixed it with", "we chose",
           "switching to", "going with", "root cause was", "resolved by", "the problem was", "我决定", "不能",
           "修复了", "use", "fix", " ", ".", "\n", "。", "x", "İ", "ß"]


@pytest.mark.parametrize("text", PHRASES)
def test_each_phrase_is_detected_as_by_a_whole_text_scan(text: str) -> None:
    """Every anchor is covered: each phrase alone gives the plain scan's detections."""
    assert nudges.detect_memories.__wrapped__(text) == whole_text_detections(text)


@given(st.lists(st.sampled_from(PHRASES), max_size=30).map("".join))
def test_anchored_detection_equals_a_whole_text_scan(text: str) -> None:
    """Searching only the lines that hold an anchor finds the same detections, in the same order."""
    assert nudges.detect_memories.__wrapped__(text) == whole_text_detections(text)


LONG_LOG = "\n".join(f"test_case_{n} ... ok ({n} ms) in module tests/test_big.py" for n in range(400))


def shell_call(output: str) -> dict:
    """A finished bash call printing `output`."""
    return {
        "id": "prt_log",
        "type": "tool",
        "tool": "bash",
        "callID": "c_log",
        "state": {"status": "completed", "input": {"command": "pytest -v"}, "output": output, "title": "", "metadata": {}},
    }


def session(texts: list[str], funded: bool = True) -> list[dict]:
    """A user turn, then one assistant message per text; when `funded`, the first one also runs
    a command whose long output is trimmed when first seen (savings that pay for nudges)."""
    messages = [
        {
            "info": {"id": "msg_u", "sessionID": "ses_n", "role": "user"},
            "parts": [{"id": "prt_u", "type": "text", "text": "go"}],
        }
    ]
    for n, text in enumerate(texts):
        parts = [{"id": f"prt_{n}", "type": "text", "text": text}]
        messages.append(
            {"info": {"id": f"msg_{n:03d}", "sessionID": "ses_n", "role": "assistant"}, "parts": parts}
        )
    if funded and texts:
        messages[1]["parts"].append(shell_call(LONG_LOG))
    return messages


def nudge_steps(texts: list[str], settings: Settings | None = None) -> list[int]:
    """The steps at which some nudge is appended, computed from each prefix cold."""
    settings = settings or Settings()
    messages = session(texts)
    steps = []
    for end in range(2, len(messages) + 1):
        parts = plan_transform(messages[:end], settings).tail_parts
        if parts:
            steps.append(end - 1)
            assert parts[0]["id"] == f"prt_deepmem_nudge_{end - 1}"
    return steps


def test_memory_nudge_respects_its_cooldown() -> None:
    """Decisions every step: the nudge fires, waits MEMORY_COOLDOWN steps, fires again."""
    steps = nudge_steps(["We decided to keep it simple."] * 20)
    assert steps == [1, 1 + nudges.MEMORY_COOLDOWN, 1 + 2 * nudges.MEMORY_COOLDOWN]


def test_memory_nudge_waits_for_a_new_detection() -> None:
    """After a nudge, plain steps add nothing; a later decision fires once the cooldown is over."""
    texts = (
        ["We must not edit setup.py."]
        + ["Reading more files."] * 12
        + ["I'll use the cache."]
        + ["More reading."] * 3
    )
    assert nudge_steps(texts) == [1, 14]


def test_nudge_text_names_what_was_detected_and_suggests_memory_store() -> None:
    """The appended part is synthetic, quotes the sentence and names memory_store."""
    [part] = plan_transform(session(["Hello. We decided to ship on Friday."]), Settings()).tail_parts
    assert part["synthetic"] is True and part["type"] == "text"
    assert "memory_store" in part["text"] and "We decided to ship on Friday." in part["text"]


def test_pressure_nudge_at_the_high_tier_of_the_current_history() -> None:
    """With a small context window the history turns high: a pressure nudge, then a cooldown."""
    settings = Settings(context_window=1_000)
    texts = ["word " * 150] * 30
    steps = nudge_steps(texts, settings)
    assert steps and steps[1] - steps[0] == nudges.PRESSURE_COOLDOWN
    messages = session(texts)[: steps[0] + 1]
    assert "context is large" in plan_transform(messages, settings).tail_parts[0]["text"]


def test_reread_nudge_after_editing_a_file_whose_read_was_compressed() -> None:
    """A long read gets compressed, then the file is edited: the nudge names the file."""
    numbered = "\n".join(f"{n}: line {n} of the module with text" for n in range(1, 400))
    read = {
        "id": "prt_read",
        "type": "tool",
        "tool": "read",
        "callID": "c1",
        "state": {
            "status": "completed",
            "input": {"filePath": "/p/mod.py"},
            "output": numbered,
            "title": "",
            "metadata": {},
        },
    }
    messages = session(["reading"] + ["thinking"] * 16)
    messages[1]["parts"].append(read)
    edit = {
        "id": "prt_edit",
        "type": "tool",
        "tool": "edit",
        "callID": "c2",
        "state": {
            "status": "completed",
            "input": {"filePath": "/p/mod.py", "oldString": "a", "newString": "b"},
            "output": "ok",
            "title": "",
            "metadata": {},
        },
    }
    messages[-1]["parts"].append(edit)
    [part] = plan_transform(messages, Settings()).tail_parts
    assert "/p/mod.py" in part["text"] and "again" in part["text"]


def test_no_nudge_where_nothing_is_cut() -> None:
    """A request deepmem cannot shorten is sent as it is: no nudge, whatever was stated."""
    messages = session(["We decided to ship on Friday."], funded=False)
    plan = plan_transform(messages, Settings())
    assert plan.tail_parts == [] and apply_transform(messages, plan) == messages


def test_a_nudge_is_appended_only_when_the_requests_cuts_pay_for_it() -> None:
    """A short trimmed output saves too little for the nudge; a long one pays for it."""
    short = session(["We decided to ship on Friday."], funded=False)
    short[1]["parts"].append(shell_call("\n".join(LONG_LOG.split("\n")[:40])))
    plan = plan_transform(short, Settings())
    assert plan.edits and plan.tail_parts == []
    assert plan_transform(session(["We decided to ship on Friday."]), Settings()).tail_parts


def test_funded_keeps_the_lines_that_fit_in_order() -> None:
    """Lines are kept in order while their tokens fit; a line too dear is skipped, not cut."""
    short, long = "[deepmem] read a.py again.", "[deepmem] " + "remember this decision " * 20
    assert nudges.funded([short, long], 0) == []
    assert nudges.funded([long, short], 30) == [short]
    assert nudges.funded([short, long], 10_000) == [short, long]


def test_nudges_go_at_the_end_and_restore_drops_them(tmp_path) -> None:
    """apply_transform adds the nudge once, in a trailing user message after everything else
    (so OpenCode sends it after the last tool results); restore removes it."""
    messages = session(["We decided to ship on Friday."])
    plan = plan_transform(messages, Settings())
    out = apply_transform(messages, plan)
    assert [part["id"] for part in out[-1]["parts"]] == ["prt_deepmem_nudge_1"]
    assert out[-1]["info"]["role"] == "user" and out[-1]["parts"][0]["messageID"] == out[-1]["info"]["id"]
    assert out[:-1] == apply_edits(messages, plan.edits)
    assert apply_transform(out, plan_transform(out, Settings())) == out
    store = CCRStore(tmp_path)
    store.put_all(plan.originals)
    assert restore_messages(out, store) == messages
