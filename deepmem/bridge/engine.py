"""The engine: the project read once, and each decoded request dispatched with `match` to its concern."""

from __future__ import annotations

import logging
import os
import threading

from deepmem import __version__
from deepmem.bridge import features
from deepmem.bridge.compaction import compacting
from deepmem.bridge.injection import Injection
from deepmem.bridge.protocol import (
    PROTOCOL,
    AnyRequest,
    Command,
    CommandReply,
    Compacting,
    Event,
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
    Tool,
    ToolReply,
    Transform,
)
from deepmem.bridge.sessions import COMPACTION_SUFFIX, Sessions
from deepmem.bridge.tools import TOOL_SCHEMAS, run_command, run_tool
from deepmem.bridge.transform import Transformer
from deepmem.project.config import ccr_folder, memory_dir
from deepmem.project.folder import Project
from deepmem.project.upkeep import start_up
from deepmem.transform.plan import TRAILING_INFO, TRAILING_PREFIX
from deepmem.types import DeepmemError
from deepmem.vault.ccr import CCRStore

log = logging.getLogger("deepmem.bridge")


class Engine:
    """One bridge process: the project, its CCR store, and the concerns that share its sessions."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = root if isinstance(root, Project) else Project.load(root, defaults_on_error=True)
        """The project, its settings read once (the defaults, logged, when one is bad)."""
        tidy(self.root)
        self.memory_lock = threading.Lock()
        """Serialises memory calls with the warm-up thread (the search model loads once)."""
        self.sessions = Sessions(self.root)
        self.store = CCRStore(ccr_folder(self.root), self.root.config.compress)
        self.injection = Injection(self.root, self.sessions, self.memory_lock)
        self.transformer = Transformer(self.root.config, self.sessions, self.store, self.injection)
        self.stopping = False

    def handle(self, request: AnyRequest) -> Reply:
        """Answer one decoded request (the server fills in the reply's `id`)."""
        match request:
            case Hello(version=version, protocol=protocol):
                return hello(self.root, version, protocol)
            case Transform():
                return self.transformer.transform(request)
            case System(system=system, session=session, context=context, model=model):
                return self.injection.system(system, session, context, model)
            case Compacting(session=session):
                return compacting(self.root, self.sessions, self.injection, session)
            case Event(type=kind, session=session):
                return self.sessions.on_event(kind, session)
            case Tool(name=name, args=args):
                with self.memory_lock:
                    return ToolReply(output=run_tool(self.root, name, args, self.store.expand))
            case Command(command=command, arguments=arguments, session=session):
                messages = self.sessions.get(session).messages
                return CommandReply(result=run_command(self.root, command, arguments, session, messages))
            case Expand(key=key, lines=lines):
                return ExpandReply(text=self.store.expand(key, lines))
            case Stats(session=session):
                return StatsReply(sessions=self.sessions.totals(session))
            case Shutdown():
                self.stopping = True
                self.sessions.save_all_stats()
                return ShutdownReply()
        raise ProtocolError("unknown_op", f"no handler for {type(request).__name__}")

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


def tidy(project: Project) -> None:
    """At start: drop temp files killed writers left, seal private files of an older release (logged)."""
    try:
        done = start_up(project)
    except (DeepmemError, OSError) as exc:
        log.warning("start-up upkeep of %s failed: %s", memory_dir(project), exc)
        return
    if any(done.values()):
        log.info("start-up upkeep: %d leftover temp files removed, %d private files sealed",
                 done["temp_removed"], done["sealed"])


def hello(project: Project, version: str, protocol: int) -> HelloReply:
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
    if project.problem:
        reply.warning = f"{project.problem}; using the default settings"
    return reply
