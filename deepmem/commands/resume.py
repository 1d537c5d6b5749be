"""`deepmem resume`: print the resume block a new session of this project would receive."""

from __future__ import annotations

import argparse
import sys

from deepmem.checkpoints.api import resume_block
from deepmem.cli import add_root


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `resume` parser."""
    parser = subparsers.add_parser("resume", help="print what a new session would receive from the last checkpoint")
    add_root(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Print the block, or say on stderr that there is no checkpoint yet (exit 1)."""
    block = resume_block(args.root)
    if block is None:
        print("deepmem: no checkpoint yet", file=sys.stderr)
        return 1
    sys.stdout.write(block + "\n")
    return 0
