"""What typed OpenCode parts would cost: decoding a ~200K-token history as dicts, as msgspec
Structs (a tagged union of part types), and both, next to one transform step of it.

The transform keeps the decoded JSON for pass-through (unknown fields and part types reach
OpenCode untouched, byte for byte), so typed parts come on top of the dicts, never instead
of them. Run with `python -m bench.runners.typed_parts`; the decision it informs is in
docs/architecture.md (Decisions).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import msgspec
import orjson

from bench.corpora import DEFAULT, corpus_folder, session_paths
from bench.runners.latency import concatenated_history, per_step_latency
from bench.tokens_o200k import TokenCounter
from deepmem.types import Settings


class Info(msgspec.Struct):
    role: Literal["user", "assistant"]
    id: str = ""
    sessionID: str = ""
    summary: Any = None


class Part(msgspec.Struct, tag_field="type"):
    id: str = ""


class Text(Part, tag="text"):
    text: str = ""
    synthetic: bool = False
    ignored: bool = False
    metadata: dict[str, Any] | None = None


class Reasoning(Part, tag="reasoning"):
    text: str = ""
    metadata: dict[str, Any] | None = None


class ToolState(msgspec.Struct):
    status: str
    input: dict[str, Any] | None = None
    output: str | None = None
    error: str | None = None
    time: dict[str, Any] | None = None


class Tool(Part, tag="tool"):
    tool: str = ""
    callID: str = ""
    state: ToolState | None = None
    metadata: dict[str, Any] | None = None


class File(Part, tag="file"):
    filename: str | None = None
    url: str | None = None


class Patch(Part, tag="patch"):
    files: list[str] = []


class Other(Part, tag="step-start"):
    """Parts whose fields the transform never reads (one Struct per tag below)."""


class StepFinish(Other, tag="step-finish"):
    pass


class Snapshot(Other, tag="snapshot"):
    pass


class Agent(Other, tag="agent"):
    pass


class Retry(Other, tag="retry"):
    pass


class Compaction(Other, tag="compaction"):
    pass


class Subtask(Other, tag="subtask"):
    pass


AnyPart = Text | Reasoning | Tool | File | Patch | Other | StepFinish | Snapshot | Agent | Retry | Compaction | Subtask


class Message(msgspec.Struct):
    info: Info
    parts: list[AnyPart]


TYPED = msgspec.json.Decoder(list[Message])
UNTYPED = msgspec.json.Decoder()


def best_ms(action: Callable[[], object], runs: int) -> float:
    """Fastest of `runs` calls, in milliseconds (the machine is shared: the fastest is the cost)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return 1000 * min(times)


def measure(paths: list[Path], tokens: int, runs: int) -> dict[str, float]:
    """Decode and transform figures for a history of about `tokens` o200k tokens."""
    history, counted = concatenated_history(paths, tokens, TokenCounter())
    raw = orjson.dumps(history)
    dicts = orjson.loads(raw)
    typed = TYPED.decode(raw)
    unknown = [{**message, "parts": [*message["parts"], {"id": "prt_x", "type": "future-part"}]} for message in dicts[-1:]]
    try:
        msgspec.convert(unknown, list[Message])
        unknown_fails = 0.0
    except msgspec.ValidationError:
        unknown_fails = 1.0
    return {
        "history_tokens": counted,
        "messages": len(history),
        "mb": len(raw) / 2**20,
        "orjson_dicts_ms": best_ms(lambda: orjson.loads(raw), runs),
        "msgspec_dicts_ms": best_ms(lambda: UNTYPED.decode(raw), runs),
        "msgspec_typed_ms": best_ms(lambda: TYPED.decode(raw), runs),
        "convert_dicts_to_typed_ms": best_ms(lambda: msgspec.convert(dicts, list[Message]), runs),
        "typed_parts": sum(len(message.parts) for message in typed),
        "unknown_part_type_rejected": unknown_fails,
        "transform_step_median_ms": per_step_latency(history, Settings(), 10)["median_ms"],
    }


def main(argv: list[str] | None = None) -> int:
    """Print the figures for a ~200K-token history."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.typed_parts", description=__doc__)
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    result = measure(session_paths(args.corpus), args.tokens, args.runs)
    for key, value in result.items():
        print(f"{key}: {value:.2f}" if isinstance(value, float) else f"{key}: {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
