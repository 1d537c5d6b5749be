"""`deepmem distill`: turn recurring workflows into skill candidates (the `/distill` slash command)."""

from __future__ import annotations

import argparse

from deepmem.cli import add_slash_parser


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `distill` parser."""
    add_slash_parser(subparsers, "distill", "write skill candidates for recurring command sequences")
