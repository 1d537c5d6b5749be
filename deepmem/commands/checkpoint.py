"""`deepmem checkpoint`: write a checkpoint of an exported session into `.deep-memory/`."""

from __future__ import annotations

import argparse

from deepmem.checkpoints.api import compact
from deepmem.checkpoints.slash import describe_checkpoint
from deepmem.cli import add_root
from deepmem.types import InputError
from deepmem.vault.sessionio import Session, read_session


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `checkpoint` parser."""
    parser = subparsers.add_parser("checkpoint", help="checkpoint an exported session into .deep-memory/")
    parser.add_argument("input", help="opencode export file, messages array, or - for stdin")
    parser.add_argument("--session", metavar="ID", help="session id (default: taken from the input)")
    add_root(parser)
    parser.set_defaults(run=run)


def session_id_of(session: Session) -> str:
    """The session id of an export (`info.id`), else of its first message, else `cli`."""
    info = (session.envelope or {}).get("info")
    if isinstance(info, dict) and isinstance(info.get("id"), str) and info["id"]:
        return info["id"]
    for message in session.messages:
        found = message["info"].get("sessionID")
        if isinstance(found, str) and found:
            return found
    return "cli"


def run(args: argparse.Namespace) -> int:
    """Write the checkpoint files and print where they went."""
    session = read_session(args.input)
    result = compact(args.root, args.session or session_id_of(session), session.messages)
    if result.get("error"):
        raise InputError(result["error"])
    print(describe_checkpoint(result))
    for path in result["written"]:
        print(path)
    return 0
