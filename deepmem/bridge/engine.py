"""The engine: one handler per op, dispatched with `match` on the decoded request."""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

import msgspec
import orjson
import xxhash
from msgspec import UNSET

from deepmem import __version__
from deepmem.bridge import features
from deepmem.bridge.protocol import (
    PROTOCOL,
    AnyRequest,
    Command,
    CommandReply,
    Compacting,
    CompactingReply,
    Event,
    EventReply,
    Expand,
    ExpandReply,
    Hello,
    HelloReply,
    PluginRules,
    ProtocolError,
    Reply,
    Shutdown,
    ShutdownReply,
    Stats,
    StatsReply,
    System,
    SystemReply,
    Tool,
    ToolReply,
    Transform,
    TransformReply,
    WireEdit,
    encode,
)
from deepmem.bridge.session import SessionState, absorb, forget_held
from deepmem.bridge.tools import TOOL_SCHEMAS, run_tool
from deepmem.ccr import CCRStore
from deepmem.config import config_problem, memory_dir
from deepmem.disk import PRIVATE, atomic_write, prune_folders
from deepmem.history import is_user_typed
from deepmem.plan import TRAILING_INFO, TRAILING_PREFIX, TransformPlan, plan_transform
from deepmem.prices import PriceModel, resolve_prices
from deepmem.project import Project
from deepmem.types import DeepmemError, Message, SavedTotals, Settings
from deepmem.upkeep import start_up

log = logging.getLogger("deepmem.bridge")

SIDE_REQUEST_MARKERS = ("You are a title generator", "context summarization agent")
"""Opening words of OpenCode's title and compaction-summary system prompts: nothing is
injected into those requests."""

STABLE_BLOCK_FILE = "stable-block.md"
COMPACTION_SUFFIX = "#compaction"
"""Appended to a session id for the state of OpenCode's compaction copy of its history."""
STORED_KEYS_CAP = 100_000
"""Keys remembered as already on disk (past it the set starts again: a put of a stored key is a no-op)."""


def state_key(session_id: str, compaction: bool) -> str:
    """The key of a session's state; OpenCode's compaction copy of a history is kept apart."""
    return f"{session_id}{COMPACTION_SUFFIX}" if compaction else session_id


class Engine:
    """All state of one bridge process: settings, CCR, and every session it has seen."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Project.load(root, defaults_on_error=True)
        """The project, its settings read once (the defaults, logged, when one is bad)."""
        self.config_problem = config_problem(self.root)
        self.config = self.root.config
        self.settings = self.config.compress
        self.redactor = self.root.redactor
        self.tidy()
        self.store = CCRStore(self.root, self.settings)
        self.stored_keys: set[str] = set()
        self.sessions: dict[str, SessionState] = {}
        self.stopping = False
        self.memory_lock = threading.Lock()
        """Serialises memory calls with the warm-up thread (the search model loads once)."""

    def tidy(self) -> None:
        """At start: drop temp files killed writers left, seal private files of an older release (logged)."""
        try:
            done = start_up(self.root)
        except (DeepmemError, OSError) as exc:
            log.warning("start-up upkeep of %s failed: %s", memory_dir(self.root), exc)
            return
        if any(done.values()):
            log.info("start-up upkeep: %d leftover temp files removed, %d private files sealed",
                     done["temp_removed"], done["sealed"])

    def warm_up_memory(self) -> None:
        """Load the memory search (tokenizer, embedding model) ahead of the first whisper.

        Runs in a background thread at start-up, and costs nothing when the project has no
        memories; the first whisper of a session then waits at most for what is left.
        """
        try:
            with self.memory_lock:
                features.optional_feature(features.MEMORY, "whisper", self.root, "warm up")
        except Exception:  # noqa: BLE001 — a failed warm-up only means a slower first whisper
            log.warning("memory warm-up failed", exc_info=True)

    def handle(self, request: AnyRequest) -> Reply:
        """Answer one decoded request (the server fills in the reply's `id`)."""
        match request:
            case Hello(version=version, protocol=protocol):
                return self.hello(version, protocol)
            case Transform():
                return self.transform(request)
            case System(system=system, session=session, context=context, model=model):
                return self.system(system, session, context, model)
            case Compacting(session=session):
                return self.compacting(session)
            case Event(type=kind, session=session):
                return self.event(kind, session)
            case Tool(name=name, args=args):
                return ToolReply(output=self.tool(name, args))
            case Command(command=command, arguments=arguments, session=session):
                return self.command(command, arguments, session)
            case Expand(key=key, lines=lines):
                return ExpandReply(text=self.expand(key, lines))
            case Stats(session=session):
                return StatsReply(sessions=self.stats(session))
            case Shutdown():
                self.stopping = True
                self.save_all_stats()
                return ShutdownReply()
        raise ProtocolError("unknown_op", f"no handler for {type(request).__name__}")

    def session(self, session_id: str) -> SessionState:
        """The state of a session, created on first use; past `[limits] engine_sessions` the least
        recently used one is saved and forgotten (its plugin's next request resyncs it)."""
        state = self.sessions.pop(session_id, None) or SessionState()
        self.sessions[session_id] = state
        while len(self.sessions) > self.config.limits.engine_sessions:
            oldest = next(iter(self.sessions))
            self.save_stats(oldest)
            del self.sessions[oldest]
        return state

    # hello ---------------------------------------------------------------------------

    def hello(self, version: str, protocol: int) -> HelloReply:
        """Check versions (a mismatch is an error reply the plugin reports once); name the
        tools and slash commands the plugin registers."""
        if version != __version__ or protocol != PROTOCOL:
            raise ProtocolError(
                "version_mismatch",
                f"plugin {version} (protocol {protocol}) ≠ engine {__version__} (protocol {PROTOCOL}); "
                "run `deepmem init` again",
            )
        reply = HelloReply(
            version=__version__,
            protocol=PROTOCOL,
            pid=os.getpid(),
            tools=list(TOOL_SCHEMAS),
            commands=list(features.slash_commands()),
            rules=PluginRules(TRAILING_PREFIX, list(TRAILING_INFO), COMPACTION_SUFFIX),
        )
        if self.config_problem:
            reply.warning = f"{self.config_problem}; using the default settings"
        return reply

    # transform -----------------------------------------------------------------------

    def transform(self, request: Transform) -> TransformReply:
        """Plan the history, and reply with only the edits the plugin does not hold yet."""
        # OpenCode's compaction transforms a cut-down copy of the history: it gets its own
        # state, so the session's latest messages and held edits stay as they are.
        state = self.session(state_key(request.session, request.compaction))
        try:
            messages = absorb(state, request)
        except ProtocolError as exc:
            if exc.code == "resync":
                forget_held(state)
            raise
        # The plugin's transport digests already name each message's content.
        settings = self.session_settings(request.session)
        plan = plan_transform(
            messages,
            settings,
            digests=[digest.encode() for digest in state.digests],
            prices=self.session_prices(request.session, messages),
        )
        self.store_originals(plan)
        # "d" is the transport digest of the part the edit replaces: the plugin applies the
        # edit only while the stored part is still that one.
        wanted = {
            edit.part_id: WireEdit(
                key=edit.part_id,
                message=edit.message_id,
                d=state.parts[edit.part_id][0] if edit.part_id in state.parts else "",
                part=edit.part,
            )
            for edit in plan.edits
        }
        if not request.compaction:
            self.add_whisper(state, request.session, messages)
            wanted.update(state.appends)
            wanted.update(self.tail_edits(request.session, plan, messages))
            state.saved = plan_totals(plan)
        edits, drop = diff_held(state, wanted)
        return TransformReply(
            edits=edits, drop=drop, step=plan.layout.step, boundary=plan.layout.boundary, tier=plan.tier
        )

    def session_settings(self, session_id: str) -> Settings:
        """The settings for one session: the model's context window unless config.toml sets one."""
        window = self.session(session_id).context_window
        if self.settings.context_window or not window:
            return self.settings
        return msgspec.structs.replace(self.settings, context_window=window)

    def session_prices(self, session_id: str, messages: list[Message]) -> PriceModel:
        """The prices the session's jumps are weighed with: `[cost]`, else the model's own as
        OpenCode passed them, else the family the model or the messages name."""
        return resolve_prices(messages, self.session(session_id).model, self.config.cost.prices)

    def store_originals(self, plan: TransformPlan) -> None:
        """Put each new original into CCR once per engine (the disk write is skipped after)."""
        if len(self.stored_keys) > STORED_KEYS_CAP:
            self.stored_keys.clear()
        for original in plan.originals:
            if original.key not in self.stored_keys:
                self.store.put(original.key, original.text)
                self.stored_keys.add(original.key)

    def add_whisper(self, state: SessionState, session_id: str, messages: list[Message]) -> None:
        """Once per new user message: memory hits for it, appended after it (sticky)."""
        last = messages[-1] if messages else None
        if last is None or last["info"].get("role") != "user":
            return
        message_id = str(last["info"].get("id", ""))
        if message_id in state.whispered:
            return
        state.whispered.add(message_id)
        query = "\n".join(part["text"] for part in last["parts"] if is_user_typed(last, part))
        if not query.strip():
            return
        shown = "\n".join([state.stable_block or "", *(edit.append.get("text", "") for edit in state.appends.values()
                                                      if isinstance(edit.append, dict))])
        with self.memory_lock:
            text = features.optional_feature(features.MEMORY, "whisper", self.root, query, None, shown)
        if text:
            part = {"id": f"prt_deepmem_whisper_{message_id}", "type": "text", "text": text, "synthetic": True}
            edit = append_edit(session_id, message_id, part)
            state.appends[edit.key] = edit

    def tail_edits(self, session_id: str, plan: TransformPlan, messages: list[Message]) -> dict[str, WireEdit]:
        """This step's nudges, appended to the message that is last now (as the CLI does)."""
        if not messages or not plan.tail_parts:
            return {}
        message_id = str(messages[-1]["info"].get("id", ""))
        edits = {}
        for part in plan.tail_parts:
            edit = append_edit(session_id, message_id, dict(part), trailing=True)
            edits[edit.key] = edit
        return edits

    # system, compaction, events ---------------------------------------------------------

    def system(
        self, system: list[str], session_id: str, context: int = 0, model: dict[str, Any] | None = None
    ) -> SystemReply:
        """The session's stable block (frozen at its first step), for the main requests only;
        notes the window and prices of the model that answers them."""
        if not session_id or is_side_request(system):
            return SystemReply(append=[])
        if context > 0:
            self.session(session_id).context_window = context
        if model:
            self.session(session_id).model = model
        block = self.stable_block(session_id)
        return SystemReply(append=[block] if block else [])

    def stable_block(self, session_id: str) -> str:
        """Memory stable block + resume block of a new session, computed once and kept on disk."""
        state = self.session(session_id)
        if state.stable_block is not None:
            return state.stable_block
        path = self.session_dir(session_id) / STABLE_BLOCK_FILE
        if path.is_file():
            state.stable_block = path.read_text(encoding="utf-8")
            return state.stable_block
        new = state.created or not any(m["info"].get("role") == "assistant" for m in state.messages)
        return self.freeze_block(session_id, "resume_block", self.root) if new else self.freeze_block(session_id)

    def freeze_block(self, session_id: str, *checkpoint: Any) -> str:
        """Memory's stable block, then the checkpoint block `checkpoint` names (a function of the checkpoints
        feature and its arguments), frozen as the session's block and kept on disk."""
        with self.memory_lock:
            pieces = [features.optional_feature(features.MEMORY, "stable_block", self.root)]
        if checkpoint:
            pieces.append(features.optional_feature(features.CHECKPOINTS, *checkpoint))
        state = self.session(session_id)
        state.stable_block = "\n\n".join(piece.strip() for piece in pieces if piece and piece.strip())
        path = self.session_dir(session_id) / STABLE_BLOCK_FILE
        atomic_write(path, self.redactor.text(state.stable_block).encode("utf-8"))
        prune_folders(path.parent.parent, self.config.limits.sessions_kept, path.parent)
        return state.stable_block

    def compacting(self, session_id: str) -> CompactingReply:
        """Write the checkpoint from the latest history; hand OpenCode its prompt and context."""
        state = self.session(session_id)
        compact = features.feature(features.CHECKPOINTS, "compact")
        result = compact(self.root, session_id, state.messages) or {}
        self.save_stats(session_id)
        if result.get("error"):
            log.warning("checkpoint of %s: %s", session_id, result["error"])
        # The compaction replaces the whole history, so the cache is rewritten anyway: the block is
        # frozen anew with the session's checkpoint, which the continuation then sees at every step.
        self.freeze_block(session_id, "continuation_block", self.root, session_id)
        return CompactingReply(
            prompt=result.get("prompt") or None,
            context=[str(item) for item in result.get("context") or []],
            written=[str(item) for item in result.get("written") or []],
            problem=str(result.get("error") or ""),
        )

    def event(self, kind: str, session_id: str) -> EventReply:
        """React to a bus event; `session.idle` may answer a one-time toast."""
        if not session_id:
            return EventReply()
        if kind == "session.deleted":
            for compaction in (False, True):
                self.sessions.pop(state_key(session_id, compaction), None)
            return EventReply()
        state = self.session(session_id)
        if kind == "session.created":
            state.created = True
        elif kind == "session.idle":
            self.save_stats(session_id)
            if not state.toasted and state.saved and state.saved.tokens_before > state.saved.tokens_after:
                state.toasted = True
                return EventReply(toast=toast_text(state.saved))
        return EventReply()

    # tools, commands, expand, stats -------------------------------------------------------

    def tool(self, name: str, args: dict[str, Any]) -> str:
        """Run one plugin tool and return the text the model receives."""
        with self.memory_lock:
            return run_tool(self.root, name, args, self.expand)

    def command(self, command: str, arguments: str, session_id: str) -> CommandReply:
        """Run a slash command's work; the model then gets its one-line result."""
        commands = features.slash_commands()
        run = commands.get(command)
        if run is None:
            raise ProtocolError("not_available", f"/{command} is not available yet")
        messages = self.session(session_id).messages
        return CommandReply(result=str(run(self.root, session_id, messages, arguments)))

    def expand(self, key: str, lines: str) -> str:
        """An original from CCR, whole or a line range `A-B`."""
        return self.store.expand(key, lines)

    def stats(self, session_id: str) -> dict[str, SavedTotals]:
        """Saved totals per session (one session when named)."""
        chosen = [session_id] if session_id else list(self.sessions)
        return {sid: self.sessions[sid].saved for sid in chosen if sid in self.sessions and self.sessions[sid].saved}

    # persistence ---------------------------------------------------------------------------

    def session_dir(self, session_id: str) -> Path:
        """`.deep-memory/sessions/<sid>/` (the id is reduced to a safe file name)."""
        safe = "".join(c for c in session_id if c.isalnum() or c in "_-") or "unknown"
        return memory_dir(self.root) / "sessions" / safe

    def save_stats(self, session_id: str) -> None:
        """Write a session's totals to `sessions/<sid>/stats.json` (read by `deepmem stats`)."""
        state = self.sessions.get(session_id)
        if state is None or not state.saved:
            return
        data = orjson.dumps(self.redactor.json({"session": session_id, **msgspec.to_builtins(state.saved)}), option=orjson.OPT_INDENT_2)
        atomic_write(self.session_dir(session_id) / "stats.json", data + b"\n", PRIVATE)

    def save_all_stats(self) -> None:
        """Persist every session's totals (on shutdown and EOF)."""
        for session_id in list(self.sessions):
            self.save_stats(session_id)


def append_edit(session_id: str, message_id: str, part: dict[str, Any], trailing: bool = False) -> WireEdit:
    """An edit that appends a synthetic part at the end of one message (or after it: `trailing`)."""
    part = {"messageID": message_id, "sessionID": session_id, **part}
    return WireEdit(key=f"append:{part.get('id')}", message=message_id, append=part, trailing=trailing)


def diff_held(state: SessionState, wanted: dict[str, WireEdit]) -> tuple[list[WireEdit], list[str]]:
    """Edits the plugin lacks or holds in another version, and keys it must drop.

    An edit whose part is the very object held last step (parts come from the pipeline's
    memo, never mutated) for the same message and digest is not encoded again.
    """
    edits = []
    for key, edit in wanted.items():
        content, address = edit.append if edit.part is UNSET else edit.part, (edit.message, edit.d)
        known = state.held.get(key)
        if known is not None and known[0] is content and known[1] == address:
            continue
        digest = xxhash.xxh3_64_hexdigest(encode(edit))
        if known is None or known[2] != digest:
            edits.append(edit)
        state.held[key] = (content, address, digest)
    drop = [key for key in state.held if key not in wanted]
    for key in drop:
        del state.held[key]
    return edits, drop


def is_side_request(system: list[str]) -> bool:
    """True for OpenCode's title-generation and compaction-summary requests."""
    head = system[0] if system else ""
    return any(marker in head for marker in SIDE_REQUEST_MARKERS)


def plan_totals(plan: TransformPlan) -> SavedTotals:
    """Whole-history totals of a plan, for stats and the toast."""
    rows = plan.stats.values()
    return SavedTotals(
        plan.layout.step,
        sum(row.parts for row in rows),
        sum(row.compressed for row in rows),
        sum(row.tokens_before for row in rows),
        sum(row.tokens_after for row in rows),
    )


def toast_text(saved: SavedTotals) -> str:
    """One line for the user: what compression saved in this session so far."""
    before, after = saved.tokens_before, saved.tokens_after
    percent = 100 * (before - after) / before if before else 0.0
    return (
        f"deepmem: {before - after:,} tokens saved ({percent:.0f}%) · "
        f"{saved.compressed} parts compressed, all restorable with deep_expand"
    )
