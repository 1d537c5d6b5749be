"""What a request carries besides the recorded messages, for billing the whole request.

- The host's frame, on both sides: OpenCode 1.18.33's system prompt and the definitions of
  its 10 built-in tools, counted in o200k tokens on a request that OpenCode sent
  (`shared/reference/opencode-1.18.33/provider-request.last.json`), plus `--frame-extra`
  tokens for a user's own (AGENTS.md, MCP tools). For a corpus that recorded its provider's
  usage (claude-entire), `--frame real` takes each session's own prefix from its first
  requests instead (`bench/usage.py`).
- deepmem's own additions (`deepmem.transform.additions`), on its side only: its tool schemas, as
  OpenCode sends a tool to the provider; and per session the memory block, the resume block
  (when the session's first request continues the latest checkpoint) and the whispers the
  bridge would give it, with memory built from the corpus's earlier sessions of the same repository, in the
  order they started, as the product builds it (the checkpoint at each session's end, which
  runs `/dream` on its schedule; see `bench.runners.memory_history`). A session with no
  earlier session of its repository starts from an empty memory. These are built once per
  corpus and kept in `bench/results/additions-<corpus>.json` (`--rebuild-additions` builds
  them again).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from functools import cache
from pathlib import Path

import msgspec
import orjson

from bench.corpora import REPOSITORY
from bench.report import RESULTS
from bench.tokens_o200k import TokenCounter
from bench.usage import one_hour_sessions, session_usage
from deepmem.project.folder import Project
from deepmem.transform.additions import Additions, first_request
from deepmem.vault.sessionio import read_session
from deepmem.vault.writer import write_given

CAPTURED_REQUEST = REPOSITORY.parent / "shared" / "reference" / "opencode-1.18.33" / "provider-request.last.json"
"""A request OpenCode 1.18.33 sent, with its system prompt and its built-in tool definitions."""
RESUME_MARK = "<deepmem-resume>"
"""Where the resume block starts in a session's frozen block (after the memory block)."""


class Frame(msgspec.Struct, frozen=True):
    """How the host's frame is taken: OpenCode's counted once, or each session's own."""

    kind: str = "opencode"
    """'opencode' (the captured request), 'real' (each session's own, from its recorded usage) or 'none'."""
    extra: int = 0
    """Tokens a user adds to every request (AGENTS.md, MCP tools)."""


def wire_tools(tools: list[dict]) -> str:
    """Tool definitions as an OpenAI-compatible request carries them."""
    return json.dumps(tools)


@cache
def opencode_frame_tokens() -> int:
    """o200k tokens of OpenCode 1.18.33's system prompt and built-in tool definitions, from the captured request."""
    if not CAPTURED_REQUEST.is_file():
        raise SystemExit(f"bench: the captured OpenCode request is missing: {CAPTURED_REQUEST}")
    body = orjson.loads(CAPTURED_REQUEST.read_bytes())
    counter = TokenCounter()
    system = [message["content"] for message in body["messages"] if message["role"] == "system"]
    return sum(counter.count_many(system)) + counter.count(wire_tools(body["tools"]))


@cache
def deepmem_tool_tokens() -> int:
    """o200k tokens of deepmem's tool definitions, in the form OpenCode sends its own."""
    from deepmem.bridge.tools import TOOL_SCHEMAS

    tools = [
        {"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}
        for tool in TOOL_SCHEMAS
    ]
    return TokenCounter().count(wire_tools(tools))


class Setup(msgspec.Struct, frozen=True):
    """How one session's requests are billed besides their messages."""

    frame: int
    """Tokens of the host's frame, on every contender's requests."""
    additions: Additions
    """deepmem's own frame and whispers."""
    one_hour: bool = False
    """The session wrote 1-hour cache entries (its corpus's manifest says so)."""


def session_setup(path: Path, messages: list, frame: Frame, built: dict[str, Additions], counter: TokenCounter) -> Setup:
    """The host's frame and deepmem's additions for one session."""
    real = session_usage(path, messages, counter).prefix if frame.kind == "real" else None
    one_hour = path.name in one_hour_sessions(path.parent)
    return Setup(host_frame(frame, real), session_additions(built, path.stem), one_hour)


def add_frame_arguments(parser: argparse.ArgumentParser) -> None:
    """--frame, --frame-extra and --rebuild-additions."""
    parser.add_argument(
        "--frame",
        choices=("opencode", "real", "none"),
        default="opencode",
        help="what every request carries before its messages: OpenCode 1.18.33's system prompt and tools "
        "(default), each session's own prefix from its recorded usage, or nothing (messages only)",
    )
    parser.add_argument("--frame-extra", type=int, default=0, help="tokens a user adds to every request (AGENTS.md, MCP tools)")
    parser.add_argument("--rebuild-additions", action="store_true", help="build deepmem's per-session memory additions again")


def frame_of(args: argparse.Namespace) -> Frame:
    """The Frame the command line asks for."""
    return Frame(args.frame, args.frame_extra)


def host_frame(frame: Frame, real: int | None) -> int:
    """Tokens of the host's frame of one session, given its real prefix when known."""
    if frame.kind == "none":
        return frame.extra
    if frame.kind == "real" and real is not None:
        return real + frame.extra
    return opencode_frame_tokens() + frame.extra


def additions_path(corpus: str) -> Path:
    """Where a corpus's memory additions are kept."""
    return RESULTS / f"additions-{corpus}.json"


def corpus_additions(folder: Path, corpus: str, rebuild: bool = False) -> dict[str, Additions]:
    """Session file stem → what deepmem adds to its requests (tool schemas, stable block, whispers)."""
    path = additions_path(corpus)
    if path.is_file() and not rebuild:
        try:
            return msgspec.json.decode(path.read_bytes(), type=dict[str, Additions])
        except msgspec.ValidationError:
            print(f"bench: {path.name} holds an older form of the additions: building them again", file=sys.stderr)
    built = build_additions(folder)
    if built:
        write_given(path, msgspec.json.format(msgspec.json.encode(built), indent=1))
    return built


def session_additions(built: dict[str, Additions], stem: str) -> Additions:
    """A session's additions; a session memory never saw gets the tool schemas alone."""
    return built.get(stem) or Additions(tools=deepmem_tool_tokens())


def build_additions(folder: Path) -> dict[str, Additions]:
    """Memory built session by session in start order per repository; what each session is given."""
    from bench.runners.memory_history import histories

    if not (folder / "manifest.json").is_file():
        return {}
    built: dict[str, Additions] = {}
    with tempfile.TemporaryDirectory(prefix="deepmem-additions-") as base:
        for repo, paths in histories(folder).items():
            root = Project.load(Path(base) / re.sub(r"[^\w.-]", "_", repo))
            root.root.mkdir(parents=True)
            os.environ["DEEP_MEMORY_GLOBAL_ROOT"] = str(root / "global")
            for number, path in enumerate(paths, 1):
                print(f"\r{repo}: memory for {number}/{len(paths)}", end="", file=sys.stderr, flush=True)
                built[path.stem] = given_and_learned(root, path)
            print(file=sys.stderr)
    return built


def given_and_learned(root: Project, path: Path) -> Additions:
    """What the bridge gives one session from the memory in `root`; then the session's checkpoint into it."""
    from bench.runners.memory_history import session_time, whisper
    from deepmem.bridge.engine import Engine
    from deepmem.checkpoints.api import compact
    from deepmem.history import is_user_typed

    messages = read_session(str(path)).messages
    sid = path.stem
    stable = Engine(root).injection.start_block(sid, first_request(messages))
    now = session_time(messages)
    whispers: dict[str, str] = {}
    shown = stable
    for message in messages:
        if message["info"].get("role") != "user":
            continue
        query = "\n".join(part["text"] for part in message["parts"] if is_user_typed(message, part))
        text = whisper(root, query, now, shown)
        if text:
            whispers[str(message["info"].get("id", ""))] = text
            shown += "\n" + text
    compact(root, sid, messages)
    memory, mark, resume = stable.partition(RESUME_MARK)
    counter = TokenCounter()
    return Additions(deepmem_tool_tokens(), counter.count(memory.strip()), counter.count(mark + resume) if mark else 0, whispers)
