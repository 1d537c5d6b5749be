"""The bridge over a real subprocess: handshake, incremental transform, ops, bad input, exits."""

from __future__ import annotations

import hashlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest

from deepmem import __version__
from deepmem.bridge import features
from deepmem.bridge.protocol import PROTOCOL, ProtocolError
from deepmem.checkpoints.api import RESUME_CLOSE
from deepmem.markers import marker_keys
from deepmem.transform.cache_mark import carries_mark
from deepmem.transform.plan import apply_transform, plan_transform, trailing_message
from deepmem.types import Settings
from deepmem.vault.sealed import read_sealed
from deepmem.vault.sessionio import read_session

from .conftest import FIXTURES

DJANGO = FIXTURES / "sessions" / "django-15499.json"
SMALL_BATCHES = {"DEEPMEM_TAIL_STEPS": "2", "DEEPMEM_BATCH_STEPS": "3", "DEEPMEM_SCHEDULE": "fixed"}
REPLY_GUARD_SECONDS = 120
"""Only a guard against a hung engine (the test fails instead of hanging); not a speed check."""


def sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


class Bridge:
    """A `deepmem bridge` subprocess and a client speaking the plugin's wire format."""

    def __init__(self, root: Path, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deepmem", "bridge", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )
        self.next_id = 0
        self.sent: list[tuple[str, str]] = []  # (message id, digest) the engine holds
        self.chain: list[str] = []
        self.part_digests: dict[str, str] = {}
        self.edits: dict[str, dict[str, Any]] = {}

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def read_reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], REPLY_GUARD_SECONDS)
        assert ready, "the engine did not answer"
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), f"no full reply line: {line[:200]!r}"
        return orjson.loads(line)

    def request(self, op: str, **body: Any) -> dict[str, Any]:
        self.next_id += 1
        self.write(orjson.dumps({"id": self.next_id, "op": op, **body}) + b"\n")
        reply = self.read_reply()
        assert reply["id"] == self.next_id
        return reply

    def hello(self) -> dict[str, Any]:
        return self.request("hello", version=__version__, protocol=PROTOCOL)

    def transform_body(self, session: str, messages: list[dict]) -> dict[str, Any]:
        """The request the plugin would send for this step (same digests, keep and refs)."""
        digests = []
        for message in messages:
            parts = [sha1(json.dumps(part)) for part in message["parts"]]
            digests.append((sha1(json.dumps(message["info"]) + "|" + ",".join(parts)), parts))
        keep = 0
        while keep < min(len(digests), len(self.sent)) and self.sent[keep][1] == digests[keep][0]:
            keep += 1
        wire = []
        for message, (digest, parts) in zip(messages[keep:], digests[keep:], strict=True):
            items = []
            for part, part_digest in zip(message["parts"], parts, strict=True):
                item = {"id": part["id"], "d": part_digest}
                if self.part_digests.get(part["id"]) != part_digest:
                    item["part"] = part
                items.append(item)
            wire.append({"d": digest, "info": message["info"], "parts": items})
        body = {
            "session": session,
            "keep": keep,
            "keep_digest": self.chain[keep - 1] if keep else "",
            "messages": wire,
        }
        self.sent = self.sent[:keep] + [(m["info"]["id"], d) for m, (d, _) in zip(messages[keep:], digests[keep:], strict=True)]
        self.chain = self.chain[:keep]
        for message, (digest, parts) in zip(messages[keep:], digests[keep:], strict=True):
            self.chain.append(sha1((self.chain[-1] if self.chain else "") + digest))
            for part, part_digest in zip(message["parts"], parts, strict=True):
                self.part_digests[part["id"]] = part_digest
        return body

    def transform(self, session: str, messages: list[dict]) -> dict[str, Any]:
        """Send one step, merge the reply into the edit cache, return the reply."""
        self.last_body = self.transform_body(session, messages)
        reply = self.request("transform", **self.last_body)
        if reply.get("ok"):
            for key in reply["drop"]:
                del self.edits[key]
            for edit in reply["edits"]:
                self.edits[edit["key"]] = edit
        return reply

    def applied(self, messages: list[dict]) -> list[dict]:
        """The messages with every cached edit applied, as the plugin does it."""
        result = json.loads(json.dumps(messages))
        where = {part["id"]: (i, j) for i, m in enumerate(result) for j, part in enumerate(m["parts"])}
        by_id = {message["info"]["id"]: message for message in result}
        for edit in self.edits.values():
            if "part" in edit and edit["key"] in where:
                i, j = where[edit["key"]]
                result[i]["parts"][j] = edit["part"]
            elif edit.get("trailing"):
                if result and result[-1]["info"]["id"] == edit["message"]:
                    result.append(trailing_message(result[-1], [edit["append"]]))
            elif "append" in edit and edit["message"] in by_id:
                by_id[edit["message"]]["parts"].append(edit["append"])
        return result

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=REPLY_GUARD_SECONDS)
        if self.proc.stdout:
            self.proc.stdout.close()
        return code


@pytest.fixture
def bridge(tmp_path: Path):
    engine = Bridge(tmp_path, SMALL_BATCHES)
    assert engine.hello()["ok"]
    yield engine
    engine.close()


def django_messages() -> list[dict]:
    return read_session(str(DJANGO)).messages


def steps_of(messages: list[dict]) -> list[int]:
    """History lengths at which OpenCode calls the transform: before each assistant message."""
    return [i for i, m in enumerate(messages) if m["info"]["role"] == "assistant" and i > 0] + [len(messages)]


def test_handshake_reports_versions(tmp_path: Path) -> None:
    engine = Bridge(tmp_path)
    reply = engine.hello()
    assert reply["ok"] and reply["version"] == __version__ and reply["protocol"] == PROTOCOL
    last = {"info": {"id": "msg_1", "sessionID": "ses", "role": "assistant", "time": {"created": 1}, "agent": "build",
                     "model": {"modelID": "m"}, "cost": 0.5}, "parts": []}
    made = trailing_message(last, [{"id": "prt_9", "type": "text", "text": "nudge"}])["info"]
    rules = reply["rules"]
    assert made["id"] == rules["trailing_prefix"] + "prt_9", "the plugin names a trailing message as the engine does"
    assert [key for key in made if key not in ("id", "sessionID", "role")] == rules["trailing_info"]
    assert rules["compaction_suffix"] and rules["compaction_suffix"] not in "ses"
    mismatch = engine.request("hello", version="0.0.0-other", protocol=PROTOCOL)
    assert mismatch["error"]["code"] == "version_mismatch"
    assert engine.close() == 0


def test_incremental_transform_matches_the_cli_at_every_step(bridge: Bridge) -> None:
    """Growing a real session step by step: the cached edits give exactly the CLI's output,
    and a step sends only the new messages, never an edit the plugin already holds."""
    messages = django_messages()
    settings = msgspec.structs.replace(Settings(), tail_steps=2, batch_steps=3, schedule="fixed")
    total_edits = 0
    previous = 0
    for length in steps_of(messages):
        history = messages[:length]
        held = dict(bridge.edits)
        reply = bridge.transform("ses_django", history)
        assert reply["ok"], reply
        body = bridge.last_body
        assert body["keep"] == previous  # everything sent before is kept …
        assert len(body["messages"]) == length - previous  # … and only new messages travel
        previous = length
        assert all(held.get(edit["key"]) != edit for edit in reply["edits"])  # never resent unchanged
        total_edits += len(reply["edits"])
        plan = plan_transform(history, settings)
        assert bridge.applied(history) == apply_transform(history, plan)
        replaced = {key for key, edit in bridge.edits.items() if "part" in edit}
        assert replaced == {edit.part_id for edit in plan.edits}
    assert total_edits >= len(bridge.edits) > 0


def test_priced_jumps_match_the_cli_at_every_step(tmp_path: Path) -> None:
    """On the default (priced) schedule the engine, fed step by step, jumps where the CLI does,
    and the same OpenCode prices give the same edits."""
    engine = Bridge(tmp_path)
    try:
        assert engine.hello()["ok"]
        messages = django_messages()
        boundaries = []
        for length in steps_of(messages):
            history = messages[:length]
            reply = engine.transform("ses_priced", history)
            assert reply["ok"], reply
            plan = plan_transform(history, Settings())
            assert reply["boundary"] == plan.layout.boundary
            assert engine.applied(history) == apply_transform(history, plan)
            boundaries.append(reply["boundary"])
        assert boundaries[-1] > 0 and boundaries == sorted(boundaries)
    finally:
        engine.close()


def test_unchanged_step_sends_nothing_back(bridge: Bridge) -> None:
    messages = django_messages()
    first = bridge.transform("s", messages)
    assert first["ok"] and first["edits"]
    again = bridge.transform("s", messages)
    assert again == {**again, "ok": True, "edits": [], "drop": []}
    assert bridge.transform_body("s", messages)["messages"] == []


def test_a_compaction_transform_leaves_the_session_state_alone(bridge: Bridge) -> None:
    messages = django_messages()
    assert bridge.transform("s", messages)["ok"]
    head = messages[:20]
    digests = [(sha1(json.dumps(m["info"]) + "|" + ",".join(sha1(json.dumps(p)) for p in m["parts"]))) for m in head]
    wire = [
        {"d": d, "info": m["info"], "parts": [{"id": p["id"], "d": sha1(json.dumps(p)), "part": p} for p in m["parts"]]}
        for m, d in zip(head, digests, strict=True)
    ]
    compaction = bridge.request("transform", session="s", compaction=True, messages=wire)
    assert compaction["ok"] and compaction["edits"]
    assert not any(edit["key"].startswith("append:") for edit in compaction["edits"])
    again = bridge.transform("s", messages)  # incremental, against the untouched session state
    assert again["ok"] and again["edits"] == [] and again["drop"] == []
    assert set(bridge.request("stats")["sessions"]) == {"s"}


def test_resync_when_the_engine_lost_the_prefix(tmp_path: Path) -> None:
    messages = django_messages()
    first = Bridge(tmp_path, SMALL_BATCHES)
    first.hello()
    assert first.transform("s", messages)["ok"]
    first.close()
    restarted = Bridge(tmp_path, SMALL_BATCHES)
    restarted.hello()
    restarted.sent, restarted.chain, restarted.part_digests = first.sent, first.chain, first.part_digests
    reply = restarted.transform("s", messages + [messages[-1]])
    assert reply["error"]["code"] == "resync"
    restarted.sent, restarted.chain, restarted.part_digests = [], [], {}
    again = restarted.transform("s", messages)
    assert again["ok"] and again["edits"]
    restarted.close()


def test_deep_expand_returns_the_original(bridge: Bridge) -> None:
    """Every compressed part names the CCR key of its whole original; expanding gives it back."""
    messages = django_messages()
    bridge.transform("s", messages)
    originals = {part["id"]: part for message in messages for part in message["parts"]}
    replaced = [edit for edit in bridge.edits.values() if "part" in edit]
    assert replaced, "the session should produce edits"
    for edit in replaced:
        key = edit["part"]["metadata"]["deepmem"]["part"]
        whole = bridge.request("tool", name="deep_expand", args={"key": f"ccr:{key}"})
        assert orjson.loads(whole["output"]) == originals[edit["key"]]
        for marked in marker_keys(json.dumps(edit["part"])):
            assert bridge.request("expand", key=marked)["ok"]
    key = replaced[0]["part"]["metadata"]["deepmem"]["part"]
    whole = bridge.request("expand", key=key)["text"]
    lines = bridge.request("tool", name="deep_expand", args={"key": key, "lines": "1-1"})
    assert lines["output"] == whole.splitlines(keepends=True)[0]
    unknown = bridge.request("tool", name="deep_expand", args={"key": "0" * 32})
    assert unknown["error"]["code"] == "unknown_key"


def test_system_block_is_frozen_and_skips_side_requests(tmp_path: Path) -> None:
    engine = Bridge(tmp_path)
    engine.hello()
    main = engine.request("system", session="s", system=["You are opencode, an interactive CLI tool"])
    title = engine.request("system", session="s", system=["You are a title generator. You output ONLY a thread title."])
    summary = engine.request("system", session="s", system=["You are a context summarization agent."])
    assert title["append"] == [] and summary["append"] == []
    again = engine.request("system", session="s", system=["You are opencode, an interactive CLI tool"])
    assert again["append"] == main["append"]
    engine.close()
    frozen = tmp_path / ".deep-memory" / "sessions" / "s" / "stable-block.md"
    assert frozen.is_file()
    frozen.write_text("frozen block", encoding="utf-8")
    restarted = Bridge(tmp_path)
    restarted.hello()
    assert restarted.request("system", session="s", system=["You are opencode"])["append"] == ["frozen block"]
    restarted.close()


def test_memory_tools_store_and_search_and_forgetting_is_the_users(bridge: Bridge) -> None:
    stored = bridge.request("tool", name="memory_store", args={"text": "We use orjson, never json.", "type": "decision"})
    assert stored["ok"], stored
    found = bridge.request("tool", name="memory_search", args={"query": "orjson", "k": 3})
    assert "We use orjson, never json." in found["output"]
    forget = bridge.request("tool", name="memory_forget", args={"target": "We use orjson, never json."})
    assert forget["error"]["code"] == "unknown_tool"
    bad_args = bridge.request("tool", name="memory_search", args={"query": 5})
    assert bad_args["error"]["code"] == "bad_request"
    assert bridge.request("tool", name="no_such_tool", args={})["error"]["code"] == "unknown_tool"


def test_whisper_sticks_to_its_user_message_and_travels_once(bridge: Bridge) -> None:
    bridge.request("tool", name="memory_store", args={"text": "The payment service retries with idempotency keys.", "type": "fact"})
    user = {
        "info": {"id": "msg_u1", "sessionID": "s", "role": "user"},
        "parts": [{"id": "prt_u1", "sessionID": "s", "messageID": "msg_u1", "type": "text", "text": "How does the payment service retry?"}],
    }
    first = bridge.transform("s", [user])
    appended = [edit for edit in first["edits"] if edit["key"].startswith("append:")]
    assert len(appended) == 1 and appended[0]["message"] == "msg_u1"
    assert "idempotency keys" in appended[0]["append"]["text"] and appended[0]["append"]["synthetic"]
    assistant = {
        "info": {"id": "msg_a1", "sessionID": "s", "role": "assistant"},
        "parts": [{"id": "prt_a1", "sessionID": "s", "messageID": "msg_a1", "type": "text", "text": "Let me look."}],
    }
    second = bridge.transform("s", [user, assistant])
    assert second["edits"] == [] and second["drop"] == []
    assert bridge.applied([user, assistant])[0]["parts"][-1] == appended[0]["append"]


def test_compacting_writes_a_checkpoint_and_answers_the_prompt(bridge: Bridge) -> None:
    bridge.transform("ses_c", django_messages())
    reply = bridge.request("compacting", session="ses_c")
    assert reply["ok"] and reply["prompt"] and reply["context"], reply
    assert reply["written"] and all(Path(path).is_file() for path in reply["written"])
    raw = next(path for path in reply["written"] if path.endswith(".json"))
    assert orjson.loads(read_sealed(Path(raw))) == django_messages()


def test_a_compaction_freezes_the_block_anew_with_the_sessions_checkpoint(bridge: Bridge, tmp_path: Path) -> None:
    """Before: the block frozen at the first step. After the compaction: that block plus the session's own
    checkpoint, frozen again (on disk too), while the compaction request itself gets no block."""
    bridge.transform("ses_c", django_messages())
    before = bridge.request("system", session="ses_c", system=["You are opencode"])["append"]
    assert not any("This session was compacted" in piece for piece in before)
    assert bridge.request("compacting", session="ses_c")["written"]
    summary = bridge.request("system", session="ses_c", system=["You are a context summarization agent."])
    assert summary["append"] == []
    after = bridge.request("system", session="ses_c", system=["You are opencode"])["append"]
    assert len(after) == 1 and "This session was compacted" in after[0] and "django/db/migrations" in after[0]
    assert bridge.request("system", session="ses_c", system=["You are opencode"])["append"] == after
    frozen = next(tmp_path.glob("**/.deep-memory/sessions/ses_c/stable-block.md"))
    assert frozen.read_text(encoding="utf-8") == after[0]


def first_turn(session: str, text: str) -> list[dict]:
    """A new session's first user message, as OpenCode hands it to the transform."""
    info = {"id": f"msg_{session}", "sessionID": session, "role": "user", "time": {"created": 1_763_600_000_000}}
    return [{"info": info, "parts": [{"id": f"prt_{session}", "sessionID": session, "messageID": info["id"],
                                      "type": "text", "text": text}]}]


def new_session_block(bridge: Bridge, session: str, text: str) -> list[str]:
    """The block a new session gets when its first request is `text`."""
    bridge.sent, bridge.chain, bridge.part_digests = [], [], {}  # the client's state is per session
    assert bridge.request("event", type="session.created", session=session)["ok"]
    assert bridge.transform(session, first_turn(session, text))["ok"]
    return bridge.request("system", session=session, system=["You are opencode"])["append"]


def test_a_new_session_resumes_from_the_latest_checkpoint_when_its_first_request_continues_it(bridge: Bridge) -> None:
    bridge.transform("ses_old", django_messages())
    assert bridge.request("compacting", session="ses_old")["written"]
    block = new_session_block(bridge, "ses_new", "The MigrationOptimizer still keeps the DeleteModel: go on.")
    assert len(block) == 1 and RESUME_CLOSE in block[0] and "django" in block[0].lower()
    assert bridge.request("system", session="ses_new", system=["You are opencode"])["append"] == block
    # A first request on other work (another branch, a week later) gets no resume block.
    unrelated = new_session_block(bridge, "ses_other", "Add a dark mode toggle to the settings page.")
    assert not any(RESUME_CLOSE in piece for piece in unrelated)
    # A first request of user text that names nothing the checkpoint changed: no resume block either.
    vague = new_session_block(bridge, "ses_vague", "carry on")
    assert not any(RESUME_CLOSE in piece for piece in vague)
    # An old session continued by a new engine is not new: it gets no resume block.
    bridge.sent, bridge.chain, bridge.part_digests = [], [], {}  # the client's state is per session
    assert bridge.transform("ses_later", django_messages())["ok"]
    later = bridge.request("system", session="ses_later", system=["You are opencode"])["append"]
    assert not any(RESUME_CLOSE in piece for piece in later)


def test_slash_command_answers_one_line(bridge: Bridge) -> None:
    bridge.transform("ses_c", django_messages())
    reply = bridge.request("command", command="checkpoint", session="ses_c")
    assert reply["ok"] and reply["result"] and "\n" not in reply["result"].strip()
    assert bridge.request("command", command="nope", session="ses_c")["error"]["code"] == "not_available"


def test_a_missing_feature_module_is_not_available_not_a_crash() -> None:
    with pytest.raises(ProtocolError) as caught:
        features.feature("deepmem.no_such_feature", "run")
    assert caught.value.code == "not_available"
    with pytest.raises(ProtocolError):
        features.feature("deepmem.memory.api", "no_such_function")
    assert features.optional_feature("deepmem.no_such_feature", "run") is None


def test_idle_event_toasts_once_and_records_stats(bridge: Bridge, tmp_path: Path) -> None:
    bridge.transform("ses_x", django_messages())
    first = bridge.request("event", type="session.idle", session="ses_x")
    second = bridge.request("event", type="session.idle", session="ses_x")
    assert "tokens saved" in first["toast"] and "toast" not in second
    record = orjson.loads((tmp_path / ".deep-memory" / "sessions" / "ses_x" / "stats.json").read_bytes())
    assert record["tokens_before"] > record["tokens_after"] > 0
    assert 0 < record["cost_with"] < record["cost_without"], "the session's two bills, deepmem ahead"
    assert bridge.request("stats", session="ses_x")["sessions"]["ses_x"]["compressed"] == record["compressed"]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"not json at all", "bad_json"),
        (b"[1, 2, 3]", "bad_json"),
        (b'{"id": 7, "op": "fly"}', "unknown_op"),
        (b'{"id": 7}', "unknown_op"),
        (b'{"id": 7, "op": "transform", "session": 3, "messages": []}', "bad_request"),
        (b'{"id": 7, "op": "transform", "session": "s", "messages": [{"d": "x", "info": {}, "parts": []}]}', "bad_request"),
        (b'{"id": 7, "op": "expand"}', "bad_request"),
        (b'{"id": 7, "op": "hello", "version": 1, "protocol": "x"}', "bad_request"),
    ],
)
def test_bad_lines_get_an_error_and_the_engine_keeps_serving(bridge: Bridge, line: bytes, code: str) -> None:
    bridge.write(line + b"\n")
    reply = bridge.read_reply()
    assert reply["error"]["code"] == code
    assert bridge.hello()["ok"]


def test_a_100_mb_line_is_refused_and_the_engine_keeps_serving(bridge: Bridge) -> None:
    big = b'{"id": 9, "op": "expand", "key": "' + b"x" * (100 * 1024 * 1024) + b'"}\n'
    bridge.write(big)
    assert bridge.read_reply()["error"]["code"] == "too_large"
    assert bridge.hello()["ok"]


def test_stdin_closed_mid_request_exits_cleanly(tmp_path: Path) -> None:
    engine = Bridge(tmp_path, SMALL_BATCHES)
    engine.hello()
    body = orjson.dumps({"id": 5, "op": "transform", **engine.transform_body("s", django_messages())})
    engine.write(body[: len(body) // 2])
    assert engine.close() == 0
    leftovers = [p for p in (tmp_path / ".deep-memory").rglob("*") if p.name.endswith(".tmp")]
    assert leftovers == []


def test_shutdown_op_stops_the_engine(tmp_path: Path) -> None:
    engine = Bridge(tmp_path)
    assert engine.request("shutdown")["ok"]
    assert engine.proc.wait(timeout=REPLY_GUARD_SECONDS) == 0
    assert engine.close() == 0


def test_engine_exits_when_its_parent_dies(tmp_path: Path) -> None:
    """The parent is killed while stdin stays open: the engine notices through getppid."""
    read_end, write_end = os.pipe()
    launcher = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-m', 'deepmem', 'bridge', '--root', {str(tmp_path)!r}])\n"
        "print(p.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", launcher], stdin=read_end, stdout=subprocess.PIPE)
    os.close(read_end)
    assert parent.stdout is not None
    engine_pid = int(parent.stdout.readline())
    hello = {"id": 1, "op": "hello", "version": __version__, "protocol": PROTOCOL}
    os.write(write_end, orjson.dumps(hello) + b"\n")
    assert orjson.loads(parent.stdout.readline())["ok"]  # the engine is up and watching
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + REPLY_GUARD_SECONDS
    while is_running(engine_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.close(write_end)
    assert not is_running(engine_pid)


def is_running(pid: int) -> bool:
    """True while the process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_models_window_sets_the_tiers_unless_config_overrides_it(tmp_path: Path) -> None:
    """A session answered by a small-window model reaches the high tier sooner; title requests
    (another model) and a configured window leave the tiers alone."""
    history = django_messages()
    tiers = {}
    for name, env, system in (
        ("unknown", {}, "You are opencode"),
        ("small model", {}, "You are opencode"),
        ("title model only", {}, "You are a title generator. You output ONLY a thread title."),
        ("configured", {"DEEPMEM_CONTEXT_WINDOW": "1000000"}, "You are opencode"),
    ):
        engine = Bridge(tmp_path / name.replace(" ", "-"), {**SMALL_BATCHES, **env})
        engine.hello()
        if name != "unknown":
            assert engine.request("system", session="s", system=[system], context=16_000)["ok"]
        tiers[name] = engine.transform("s", history)["tier"]
        engine.close()
    assert tiers == {"unknown": "low", "small model": "high", "title model only": "low", "configured": "low"}


RESTART_MODEL = {"id": "claude-sonnet-4-5", "providerID": "anthropic"}
RESTART_MEMORIES = (
    "The migration optimizer folds CreateModel + AlterModelOptions into one CreateModel in reduce().",
    "AlterModelManagers after CreateModel can be reduced into CreateModel by the migration optimizer.",
)


def run_steps(engine: Bridge, history: list[dict], steps: range, memory_at: int) -> list[tuple[Any, ...]]:
    """Per step: the system block and the messages as the plugin applies the engine's edits."""
    seen = []
    for step in steps:
        if step == memory_at:
            engine.request("tool", name="memory_store", args={"text": RESTART_MEMORIES[1], "type": "fact"})
        system = engine.request("system", session="s", system=["You are opencode"], context=200_000, model=RESTART_MODEL)
        assert engine.transform("s", history[:step])["ok"]
        seen.append((system["append"], engine.applied(history[:step])))
    return seen


def test_a_restarted_engine_sends_the_same_bytes_for_an_ongoing_session(tmp_path: Path) -> None:
    """Whispers, the stable block, the model's window and prices and the cache mark: what a new engine
    sends for an ongoing session is what the first one would have sent (memory added meanwhile)."""
    history, cut, memory_at = django_messages(), 30, 20
    first = history[0]["parts"][0]
    first["text"] = "How does the migration optimizer reduce CreateModel and AlterModelOptions?"
    alone, restarted = tmp_path / "alone", tmp_path / "restarted"
    runs = {}
    for root in (alone, restarted):
        engine = Bridge(root, SMALL_BATCHES)
        engine.hello()
        engine.request("tool", name="memory_store", args={"text": RESTART_MEMORIES[0], "type": "fact"})
        if root == alone:
            runs[root] = run_steps(engine, history, range(1, len(history) + 1), memory_at)
        else:
            runs[root] = run_steps(engine, history, range(1, cut), memory_at)
            engine.close()
            engine = Bridge(root, SMALL_BATCHES)
            engine.hello()
            runs[root] += run_steps(engine, history, range(cut, len(history) + 1), memory_at)
        engine.close()
    whispers = [part for part in runs[alone][0][1][0]["parts"] if part["id"].startswith("prt_deepmem_whisper_")]
    assert whispers and "reduce()" in whispers[0]["text"]
    marked = [part for message in runs[alone][-1][1] for part in message["parts"] if carries_mark(part)]
    assert len(marked) == 1 and marked[0]["type"] == "text"
    assert runs[restarted] == runs[alone]
    assert (restarted / ".deep-memory" / "sessions" / "s" / "request-state.json").is_file()


def test_a_whisper_is_carried_until_a_jump_leaves_its_message_behind(tmp_path: Path) -> None:
    """The whisper rides on its user message while the message is young; the jump that makes it old
    drops it (the plugin is told to), and it stays dropped. The opening's whisper stays: every jump
    reads the opening from the cache."""
    history = django_messages()
    later = next(index for index, message in enumerate(history) if index and message["info"]["role"] == "user")
    history[0]["parts"][0]["text"] = "How does the migration optimizer reduce CreateModel and AlterModelOptions?"
    history[later]["parts"][0] = {**history[later]["parts"][0], "synthetic": False,
                                  "text": "Can the migration optimizer reduce AlterModelManagers after CreateModel too?"}
    engine = Bridge(tmp_path, SMALL_BATCHES)
    engine.hello()
    engine.request("tool", name="memory_store", args={"text": RESTART_MEMORIES[0], "type": "fact"})
    carried, opening, dropped = [], [], []
    for step in range(1, len(history) + 1):
        if step == later:
            engine.request("tool", name="memory_store", args={"text": RESTART_MEMORIES[1], "type": "fact"})
        reply = engine.transform("s", history[:step])
        assert reply["ok"], reply
        if step <= later:
            continue
        applied = engine.applied(history[:step])
        whispered = [any(part["id"].startswith("prt_deepmem_whisper_") for part in message["parts"]) for message in applied]
        carried.append(whispered[later])
        opening.append(whispered[0])
        drops = {key.removeprefix("append:prt_deepmem_whisper_") for key in reply["drop"] if key.startswith("append:")}
        dropped.append((reply["boundary"], history[later]["info"]["id"] in drops, history[0]["info"]["id"] in drops))
    engine.close()
    left = carried.index(False)
    assert left > 0 and not any(carried[left:]), carried
    assert dropped[left][0] > 0 and dropped[left][1] and not any(drop for _, drop, _ in dropped[left + 1:])
    assert all(opening) and not any(first for _, _, first in dropped)


def test_the_cache_mark_travels_as_an_edit_keeping_the_parts_metadata_and_moves(tmp_path: Path) -> None:
    """The plan's mark reaches the plugin as a replacement of the part whose `metadata` keeps every
    other key; when the boundary moves, the old mark's edit is dropped (unless the part is compressed)."""
    history = django_messages()
    for message in history:
        for part in message["parts"]:
            if message["info"]["role"] == "assistant" and part["type"] == "text":
                part["metadata"] = {"anthropic": {"signature": part["id"]}, "openrouter": {"seen": True}}
    engine = Bridge(tmp_path, SMALL_BATCHES)
    engine.hello()
    marks = []
    for step in range(1, len(history) + 1):
        engine.request("system", session="s", system=["You are opencode"], model=RESTART_MODEL)
        assert engine.transform("s", history[:step])["ok"]
        marked = [part for message in engine.applied(history[:step]) for part in message["parts"] if carries_mark(part)]
        assert len(marked) <= 1
        for part in marked:
            kept = {key: value for key, value in part["metadata"].items() if key != "deepmem"}
            assert kept == {
                "anthropic": {"signature": part["id"], "cacheControl": {"type": "ephemeral"}},
                "openrouter": {"seen": True},
            }
        marks.append(marked[0]["id"] if marked else None)
    engine.close()
    assert len({mark for mark in marks if mark}) >= 2, marks



def boundaries_under(root: Path, history: list[dict], model: dict[str, Any]) -> list[int]:
    """The boundary of every step of `history` as the bridge plans it for a session answered by `model`."""
    engine = Bridge(root, {})
    engine.hello()
    context = model["limit"]["context"]
    assert engine.request("system", session="s", system=["You are opencode"], context=context, model=model)["ok"]
    found = [engine.transform("s", history[:end])["boundary"] for end in range(2, len(history) + 1)]
    engine.close()
    return found


def test_the_models_limits_force_a_jump_before_the_host_would_compact(tmp_path: Path) -> None:
    """The same history under a 1M-window model and under one whose usable window it nears: the second
    jumps sooner and more often (its prices the same: the window forces the jumps)."""
    history = django_messages()
    found = {
        name: boundaries_under(tmp_path / name, history, {**RESTART_MODEL, "limit": limit})
        for name, limit in (("roomy", {"context": 1_000_000, "output": 64_000}), ("tight", {"context": 48_000, "output": 4_000}))
    }
    first_jump = {name: next(step for step, boundary in enumerate(found[name]) if boundary) for name in found}
    assert first_jump["tight"] < first_jump["roomy"], found
    assert len(set(found["tight"])) > len(set(found["roomy"])), found
