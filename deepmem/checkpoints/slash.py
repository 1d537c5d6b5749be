"""Slash commands run before their LLM turn (`/checkpoint` …), one registry for plugin and CLI.

Each takes `(root, session_id, messages, arguments)` and returns one line for the model.
The CLI builds its `deepmem dream` / `deepmem distill` subcommands on this registry
(`deepmem.cli.add_slash_parser`); nothing here knows the command line.

The engine's `hello` names these commands to the plugin, so this module loads fast: the
checkpoint writer and the jobs (and the extractors behind them) are imported on first use.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from deepmem.types import Message

SlashCommand = Callable[[str | os.PathLike[str], str, list[Message], str], str]


def describe_checkpoint(result: dict[str, Any]) -> str:
    """One line saying where a checkpoint went, or why it could not be written."""
    if result.get("error"):
        return f"checkpoint not written: {result['error']}"
    written = result.get("written") or []
    latest = written[-1] if written else "(nowhere)"
    return f"checkpoint written to {latest} ({len(written)} files)"


def checkpoint(root: str | os.PathLike[str], session_id: str, messages: list[Message], arguments: str) -> str:
    """`/checkpoint`: capture the session's current state now."""
    from deepmem.checkpoints.api import compact  # on first use: see the module docstring

    return describe_checkpoint(compact(root, session_id, messages))


def dream(root: str | os.PathLike[str], session_id: str, messages: list[Message], arguments: str) -> str:
    """`/dream`: fold notes into MEMORY.md and consolidate it now."""
    from deepmem.checkpoints.schedule import run_job  # on first use: see the module docstring

    return run_job(root, "dream")


def distill(root: str | os.PathLike[str], session_id: str, messages: list[Message], arguments: str) -> str:
    """`/distill`: write skill candidates for recurring workflows now."""
    from deepmem.checkpoints.schedule import run_job  # on first use: see the module docstring

    return run_job(root, "distill")


SLASH_COMMANDS: dict[str, SlashCommand] = {"checkpoint": checkpoint, "dream": dream, "distill": distill}

