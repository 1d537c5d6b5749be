"""`deepmem bridge`: the long-running engine behind the OpenCode plugin (NDJSON on stdio)."""

from __future__ import annotations

import argparse

from deepmem.cli import add_root


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `bridge` parser."""
    parser = subparsers.add_parser("bridge", help="serve the OpenCode plugin over stdio (NDJSON)")
    add_root(parser)
    parser.set_defaults(run=run, check_config=False)


def run(args: argparse.Namespace) -> int:
    """Serve until stdin closes, `shutdown` arrives, or the parent process dies."""
    from deepmem.bridge.server import run_bridge

    return run_bridge(args.root)
