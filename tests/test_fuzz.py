"""Hostile input for the bridge and the CLI: every line gets one reply, every command an exit code.

Hypothesis generates malformed JSON, invalid UTF-8, deep nesting, wrong types, unknown ops
and part types, and whole plausible requests with hostile fields. The engine must answer
each with one JSON line (`ok` or `error`), never raise, and keep serving.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepmem import __version__
from deepmem.bridge.engine import Engine
from deepmem.bridge.protocol import OPS, PROTOCOL
from deepmem.bridge.server import answer, serve
from deepmem.cli import main

from .test_bridge import Bridge

MEMORY_BOUND_KB = 512 * 1024
"""The engine's peak RSS over the hostile stream stays under 512 MB (bench/ measures the real figures)."""
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=40))
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                           max_leaves=20)
PART_TYPES = ["text", "reasoning", "tool", "file", "step-start", "step-finish", "patch", "snapshot", "agent",
              "retry", "compaction", "subtask", "no-such-type"]


@st.composite
def parts(draw: st.DrawFn, message_id: str) -> dict[str, Any]:
    part: dict[str, Any] = {"id": draw(st.text(min_size=1, max_size=12)), "type": draw(st.sampled_from(PART_TYPES)),
                            "messageID": message_id}
    if part["type"] in ("text", "reasoning"):
        part["text"] = draw(st.text(max_size=300))
    if part["type"] == "tool":
        part["tool"] = draw(st.sampled_from(["bash", "read", "grep", "edit", "task", "weird"]))
        part["callID"] = draw(st.text(max_size=8))
        part["state"] = {"status": draw(st.sampled_from(["completed", "error", "running", "pending", "odd"])),
                         "input": draw(st.dictionaries(st.text(max_size=8), json_values, max_size=3)),
                         "output": draw(st.text(max_size=2_000))}
    for key, value in draw(st.dictionaries(st.text(max_size=6), json_values, max_size=2)).items():
        part.setdefault(key, value)
    return part


@st.composite
def wire_messages(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages = []
    for index in range(draw(st.integers(0, 6))):
        message_id = f"msg_{index}"
        info = {"id": message_id, "role": draw(st.sampled_from(["user", "assistant", "system", 3])),
                "sessionID": "s"}
        items = [{"id": part["id"], "d": draw(st.text(max_size=6)), "part": part}
                 for part in draw(st.lists(parts(message_id), max_size=4))]
        messages.append({"d": draw(st.text(max_size=6)), "info": info, "parts": items})
    return messages


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """A request with a known or unknown op and fields of the right or the wrong type."""
    op = draw(st.sampled_from([*OPS, "fly", "", "TRANSFORM"]))
    request: dict[str, Any] = {"id": draw(st.one_of(st.integers(0, 10**6), st.text(max_size=5), json_values)),
                               "op": op}
    if op == "transform":
        request.update(session=draw(st.one_of(st.text(max_size=8), json_values)), messages=draw(wire_messages()),
                       keep=draw(st.integers(-3, 8)), keep_digest=draw(st.text(max_size=8)))
    elif op == "hello":
        request.update(version=draw(st.sampled_from([__version__, "0"])), protocol=draw(st.sampled_from([PROTOCOL, 99])))
    elif op == "tool":
        request.update(name=draw(st.sampled_from(["memory_search", "memory_store", "deep_expand", "x"])),
                       args=draw(st.dictionaries(st.sampled_from(["query", "text", "type", "target", "key", "k", "lines"]),
                                                 json_values, max_size=3)))
    elif op == "shutdown":
        request["op"] = "stats"
    for key, value in draw(st.dictionaries(st.sampled_from(["session", "system", "key", "lines", "type", "command"]),
                                           json_values, max_size=2)).items():
        request.setdefault(key, value)
    return request


def encode(value: Any) -> bytes:
    """JSON bytes for any generated value (big integers and lone surrogates included, as JSON allows)."""
    return json.dumps(value).encode()


def nested(depth: int) -> bytes:
    return b'{"id": 1, "op": "system", "system": ' + b"[" * depth + b"]" * depth + b"}"


RAW_LINES = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.integers(1, 5_000).map(nested),
    json_values.map(encode),
    st.builds(lambda head, tail: head + tail, requests().map(encode), st.binary(max_size=3)),
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return Engine(tmp_path_factory.mktemp("fuzz-engine"))


def assert_one_reply(reply: bytes) -> dict[str, Any]:
    assert reply.endswith(b"\n") and reply.count(b"\n") == 1
    body = orjson.loads(reply)
    assert "ok" in body or set(body["error"]) == {"code", "message"}
    return body


@FUZZ
@given(RAW_LINES)
def test_any_line_gets_one_reply(engine: Engine, line: bytes) -> None:
    assert_one_reply(answer(engine, line.replace(b"\n", b" ")))
    engine.stopping = False


@FUZZ
@given(requests())
def test_plausible_requests_with_hostile_fields_get_one_reply(engine: Engine, request: dict[str, Any]) -> None:
    body = assert_one_reply(answer(engine, encode(request)))
    if request["op"] not in OPS:
        assert body["error"]["code"] == "unknown_op"


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(RAW_LINES, min_size=1, max_size=20))
def test_a_stream_of_hostile_lines_is_answered_line_for_line(engine: Engine, lines: list[bytes]) -> None:
    """Through the server loop, with a small line limit so 'huge' lines are cheap to make."""
    lines = [line.replace(b"\n", b" ") for line in lines if line.strip()]
    stream = io.BytesIO(b"".join(line + b"\n" for line in lines) + b"x" * 5_000 + b"\n")
    out = io.BytesIO()
    with contextlib.redirect_stdout(io.StringIO()):
        assert serve(str(engine.root), stream, out, limit=4_096) == 0
    replies = out.getvalue().splitlines(keepends=True)
    assert len(replies) == len(lines) + 1
    for reply in replies:
        assert_one_reply(reply)
    assert orjson.loads(replies[-1])["error"]["code"] == "too_large"


CLI_CASES = st.tuples(
    st.sampled_from([["compress", "{f}"], ["checkpoint", "{f}"], ["expand", "--session", "{f}"],
                     ["memory", "import", "{f}"], ["memory", "add", "{t}"], ["memory", "search", "{t}"],
                     ["expand", "{t}"], ["memory", "forget", "{t}", "--yes"]]),
    st.one_of(st.binary(max_size=400), json_values.map(encode),
              st.lists(st.fixed_dictionaries({"info": json_values, "parts": st.lists(json_values, max_size=3)}),
                       max_size=4).map(encode)),
    st.text(max_size=60),
)


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(CLI_CASES)
def test_the_cli_answers_hostile_files_and_arguments_with_an_exit_code(tmp_path_factory: pytest.TempPathFactory,
                                                                       case: tuple[list[str], bytes, str]) -> None:
    argv, data, text = case
    folder = tmp_path_factory.mktemp("cli")
    path = folder / ("input.jsonl" if argv[:2] == ["memory", "import"] else "input.json")
    path.write_bytes(data)
    args = [part.format(f=path, t=text) for part in argv] + ["--root", str(folder)]
    if argv[0] == "compress":
        args += ["-o", str(folder / "out.json")]
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in range(2))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(args)
        except SystemExit as exc:  # argparse refusing an argument
            code = exc.code
    err.flush()
    message = err.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]
    assert code in (0, 1, 2), message
    if code == 2 and message.startswith("deepmem: error: "):
        assert message.count("\n") == 1


def tiny_session(count: int) -> dict[str, Any]:
    """A transform request carrying `count` one-word messages, users and assistants in turn."""
    messages = []
    for index in range(count):
        role = "user" if index % 2 == 0 else "assistant"
        part = {"id": f"p{index}", "type": "text", "text": f"m{index}", "messageID": f"m{index}"}
        messages.append({"d": f"d{index}", "info": {"id": f"m{index}", "role": role, "sessionID": "tiny"},
                         "parts": [{"id": part["id"], "d": f"d{index}", "part": part}]})
    return {"id": 1, "op": "transform", "session": "tiny", "messages": messages}


def test_a_session_of_10_000_tiny_messages(engine: Engine) -> None:
    body = assert_one_reply(answer(engine, orjson.dumps(tiny_session(10_000))))
    assert body["ok"] and body["step"] == 5_000


def test_the_engine_still_answers_after_the_fuzz(engine: Engine) -> None:
    """The engine is still whole after everything above: a normal request works."""
    body = assert_one_reply(answer(engine, orjson.dumps({"id": 9, "op": "hello", "version": __version__,
                                                          "protocol": PROTOCOL})))
    assert body["ok"]


def hostile_lines(count: int, seed: int) -> list[bytes]:
    """Deterministic hostile lines for the real process: noise, cut requests, deep nesting, bad UTF-8."""
    rng = random.Random(seed)
    good = encode({"id": 1, "op": "transform", "session": "s", "messages": []})
    makers = [
        lambda: rng.randbytes(rng.randint(1, 2_000)).replace(b"\n", b" "),
        lambda: good[: rng.randint(1, len(good) - 1)],
        lambda: nested(rng.randint(100, 100_000)),
        lambda: b'{"id": 2, "op": "tool", "name": "memory_store", "args": {"text": "\xff\xfe bad"}}',
        lambda: encode({"id": 3, "op": rng.choice(["fly", "transform", "expand"]), "key": rng.random()}),
        lambda: b'{"id": 4, "op": "system", "system": ["' + b"a" * rng.randint(1, 3_000_000) + b'"]}',
    ]
    return [rng.choice(makers)() for _ in range(count)]


def peak_rss_kb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak RSS is read from /proc")
def test_the_real_engine_answers_every_hostile_line_within_a_memory_bound(tmp_path: Path) -> None:
    bridge = Bridge(tmp_path)
    try:
        assert bridge.hello()["ok"]
        lines = hostile_lines(300, 14)
        for line in lines:
            bridge.write(line + b"\n")
            reply = bridge.read_reply()
            assert "ok" in reply or reply["error"]["code"], reply
        bridge.write(orjson.dumps(tiny_session(10_000)) + b"\n")
        assert bridge.read_reply()["step"] == 5_000
        assert bridge.hello()["ok"]
        peak = peak_rss_kb(bridge.proc.pid)
        print(f"engine peak RSS over {len(lines)} hostile lines and a 10,000-message session: {peak // 1024} MB")
    finally:
        assert bridge.close() == 0
    assert peak < MEMORY_BOUND_KB, f"peak RSS {peak // 1024} MB"
