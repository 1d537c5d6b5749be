"""The wire's reply types: each round-trips through the one encoder, and reads as the plugin expects."""

from __future__ import annotations

import msgspec
import orjson
import pytest

from deepmem.bridge.protocol import (
    PROTOCOL,
    AnyReply,
    CommandReply,
    CompactingReply,
    EventReply,
    ExpandReply,
    HelloReply,
    ShutdownReply,
    StatsReply,
    SystemReply,
    ToolReply,
    TransformReply,
    WireEdit,
    encode_reply,
    error_reply,
)
from deepmem.bridge.tools import TOOL_ARGS, TOOL_SCHEMAS
from deepmem.checkpoints.slash import SLASH_COMMANDS
from deepmem.memory.entries import TYPES
from deepmem.types import SavedTotals

PART = {"id": "prt_1", "type": "text", "text": "ünïcode · ccr:ab12", "metadata": {"deepmem": {"part": "ab12"}}}
EXAMPLES: list[AnyReply] = [
    HelloReply(id=1, version="0.1.0", pid=42, tools=list(TOOL_SCHEMAS), commands=list(SLASH_COMMANDS), warning="bad"),
    TransformReply(
        id=2,
        edits=[
            WireEdit(key="prt_1", message="msg_1", d="d1", part=PART),
            WireEdit(key="append:prt_2", message="msg_1", append=PART, trailing=True),
        ],
        drop=["prt_0"],
        step=12,
        boundary=10,
        tier="medium",
    ),
    SystemReply(id="s", append=["block"]),
    CompactingReply(id=3, prompt=None, context=["c"], written=["/tmp/x"], problem=""),
    EventReply(id=4, toast="saved"),
    ToolReply(id=5, output="out"),
    CommandReply(id=6, result="checkpoint written"),
    ExpandReply(id=7, text="line\n"),
    StatsReply(id=8, sessions={"ses": SavedTotals(tokens_before=9, tokens_after=3)}),
    ShutdownReply(id=9),
    error_reply(None, "bad_json", "not a JSON object"),
]


def test_every_reply_type_has_an_example() -> None:
    """A new reply type must be added to EXAMPLES, so it is round-tripped too."""
    assert {type(reply) for reply in EXAMPLES} == set(AnyReply.__args__)


@pytest.mark.parametrize("reply", EXAMPLES, ids=lambda reply: type(reply).__name__)
def test_a_reply_round_trips_as_one_line(reply: AnyReply) -> None:
    """Encoded once, a reply is one JSON line that decodes back to the same value."""
    line = encode_reply(reply)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert msgspec.json.decode(line, type=type(reply)) == reply


def test_replies_read_as_the_plugin_reads_them() -> None:
    """`id` and `ok` lead; an unset optional field is absent; an edit says `trailing` only when true."""
    assert encode_reply(EventReply(id=1)) == b'{"id":1,"ok":true}\n'
    hello = orjson.loads(encode_reply(HelloReply(id=1, version="0.1.0")))
    assert "warning" not in hello and hello["protocol"] == PROTOCOL
    transform = orjson.loads(encode_reply(EXAMPLES[1]))
    assert transform["edits"][0] == {"key": "prt_1", "message": "msg_1", "d": "d1", "part": PART}
    assert transform["edits"][1] == {"key": "append:prt_2", "message": "msg_1", "append": PART, "trailing": True}
    assert orjson.loads(encode_reply(error_reply(3, "resync", "again"))) == {
        "id": 3,
        "error": {"code": "resync", "message": "again"},
    }


def test_tool_schemas_describe_the_arguments_the_engine_decodes() -> None:
    """Each tool's schema comes from its argument Struct: described, required fields known, types listed."""
    assert [schema.name for schema in TOOL_SCHEMAS] == list(TOOL_ARGS)
    for schema in TOOL_SCHEMAS:
        assert schema.description and "\n" not in schema.description
        properties = schema.parameters["properties"]
        assert set(schema.parameters["required"]) <= set(properties)
        fields = msgspec.structs.fields(TOOL_ARGS[schema.name])
        assert list(properties) == [field.encode_name for field in fields]
    store = next(schema for schema in TOOL_SCHEMAS if schema.name == "memory_store")
    assert sorted(store.parameters["properties"]["type"]["enum"]) == sorted(TYPES)
