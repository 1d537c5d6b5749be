"""`deepmem expand`: print an original by CCR key, or restore a whole compressed session."""

from __future__ import annotations

import argparse
import sys

from deepmem.cli import add_root
from deepmem.project.config import ccr_folder
from deepmem.types import InputError
from deepmem.vault.ccr import CCRStore
from deepmem.vault.restore import restore_messages
from deepmem.vault.sealed import SealError
from deepmem.vault.sessionio import encode_json, read_session, write_output


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `expand` parser."""
    parser = subparsers.add_parser("expand", help="restore originals from CCR")
    parser.add_argument("key", nargs="?", help="CCR key (as shown in a marker, ccr: optional)")
    parser.add_argument("--session", metavar="COMPRESSED", help="restore every part of a compressed session")
    parser.add_argument("--lines", metavar="A-B", help="only lines A to B (1-based, inclusive)")
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    add_root(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print one original, or write the restored session."""
    store = CCRStore(ccr_folder(args.root), args.root.config.compress)
    if args.session:
        if args.key:
            raise InputError("give either a KEY or --session, not both")
        session = read_session(args.session)
        unsealed: list[str] = []
        session.messages = restore_messages(session.messages, store, unsealed)
        write_output(encode_json(session.to_json()), args.output)
        if unsealed:
            raise SealError(f"{len(unsealed)} parts left compressed, markers kept: {unsealed[0]}")
        return 0
    if not args.key:
        raise InputError("expand needs a KEY or --session FILE")
    text = store.expand(args.key, args.lines)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        write_output(text.encode("utf-8", "surrogatepass"), args.output)
    return 0
