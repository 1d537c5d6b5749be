"""The stdio loop: read a line, decode, handle, write one reply line; never let an exception out.

stdout carries only protocol lines (anything else printing is redirected to stderr); logs
go to `.deep-memory/logs/bridge.log`, rotated. The process exits on stdin EOF, on the
`shutdown` op, and when its parent dies (it polls `getppid`).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import BinaryIO

from deepmem.bridge.engine import Engine
from deepmem.bridge.protocol import (
    AnyReply,
    ProtocolError,
    RequestError,
    decode_request,
    encode_reply,
    error_reply,
)
from deepmem.project.config import LimitSettings, memory_dir
from deepmem.project.folder import Project
from deepmem.types import DeepmemError, UnknownKeyError
from deepmem.vault.redact import Redactor
from deepmem.vault.writer import ensure_gitignore, shared_log

log = logging.getLogger("deepmem.bridge")

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A longer request line is skipped and answered with `too_large`."""
PARENT_POLL_SECONDS = 1.0
CHUNK = 1024 * 1024
LOG_BACKUPS = 3


def setup_logging(root: str) -> Project:
    """Log to `.deep-memory/logs/bridge.log` (`[limits] log_bytes` × 4 files, private), never to stdout.

    The handler is in place before the settings are read, so a bad setting is logged (once);
    the project read here is the one the engine serves.
    """
    handler = shared_log(memory_dir(root) / "logs" / "bridge.log", Redactor(), LimitSettings().log_bytes, LOG_BACKUPS)
    logger = logging.getLogger("deepmem")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    logger.propagate = False
    project = Project.load(root, defaults_on_error=True)
    handler.maxBytes = project.config.limits.log_bytes
    handler.formatter.redactor = project.redactor
    return project


class LineTooLong(Exception):
    """A request line longer than the limit; it was read to its end and dropped."""


def read_line(stream: BinaryIO, limit: int) -> bytes | None:
    """One line without its newline, None at EOF; LineTooLong past `limit` (the rest is drained)."""
    line = stream.readline(limit + 1)
    if not line:
        return None
    if len(line) <= limit or line.endswith(b"\n"):
        return line.rstrip(b"\r\n")
    while True:
        rest = stream.readline(CHUNK)
        if not rest or rest.endswith(b"\n"):
            raise LineTooLong


def answer(engine: Engine, line: bytes) -> bytes:
    """The reply line for one request line; every failure becomes an error reply."""
    return encode_reply(reply_to(engine, line))


def reply_to(engine: Engine, line: bytes) -> AnyReply:
    """The reply to one request line, with the request's id; every failure becomes an error reply."""
    request_id = None
    try:
        request = decode_request(line)
        request_id = request.id
        reply = engine.handle(request)
        reply.id = request_id
        return reply
    except RequestError as exc:
        return error_reply(exc.request_id, exc.code, str(exc))
    except ProtocolError as exc:
        return error_reply(request_id, exc.code, str(exc))
    except UnknownKeyError as exc:
        return error_reply(request_id, "unknown_key", str(exc))
    except DeepmemError as exc:
        return error_reply(request_id, "error", str(exc))
    except Exception as exc:  # noqa: BLE001 — exceptions never cross the bridge
        log.exception("request %r failed", request_id)
        return error_reply(request_id, "internal", f"{type(exc).__name__}: {exc}")


def watch_parent(parent: int) -> None:
    """Exit the whole process when the parent that started the engine goes away."""
    stop = threading.Event()
    while not stop.wait(PARENT_POLL_SECONDS):
        if os.getppid() != parent:
            log.info("parent %d gone, exiting", parent)
            os._exit(0)


def warm_up(engine: Engine, root: str | Project) -> None:
    """Off the request path: the first log line (it loads the redactor's detectors), then the memory search."""
    log.info("engine started in %s (pid %d)", os.path.abspath(root), os.getpid())
    engine.warm_up_memory()


def serve(root: str | Project, stdin: BinaryIO, stdout: BinaryIO, limit: int = MAX_LINE_BYTES) -> int:
    """Answer requests until EOF or `shutdown`."""
    engine = Engine(root)
    threading.Thread(target=warm_up, args=(engine, root), daemon=True, name="warm-up").start()
    while not engine.stopping:
        try:
            line = read_line(stdin, limit)
        except LineTooLong:
            reply = encode_reply(error_reply(None, "too_large", f"request line over {limit:,} bytes skipped"))
        else:
            if line is None:
                break
            if not line.strip():
                continue
            reply = answer(engine, line)
        stdout.write(reply)
        stdout.flush()
    engine.sessions.save_all_stats()
    log.info("engine stopped")
    return 0


def run_bridge(root: str) -> int:
    """Entry point of `deepmem bridge`: protocol on the real stdout, everything else elsewhere."""
    project = setup_logging(root)
    ensure_gitignore(memory_dir(project))
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True, name="parent-watch").start()
    try:
        return serve(project, sys.stdin.buffer, protocol_out)
    except BrokenPipeError:
        return 0
