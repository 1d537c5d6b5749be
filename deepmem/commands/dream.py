"""`deepmem dream`: fold notes.md into MEMORY.md and consolidate it (the `/dream` slash command)."""

from __future__ import annotations

import argparse

from deepmem.cli import add_slash_parser


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `dream` parser."""
    add_slash_parser(subparsers, "dream", "fold notes.md into MEMORY.md and consolidate it")
