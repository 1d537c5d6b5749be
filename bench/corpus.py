"""The replay corpus: sessions in OpenCode export format, loaded in a fixed order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from deepmem.sessionio import read_session
from deepmem.types import Message

CORPUS = Path("/work/shared/corpus/swe-gemini3")
"""Default corpus folder (override with --corpus)."""


def session_paths(folder: Path, limit: int | None = None) -> list[Path]:
    """Session files of a corpus folder, sorted by name, the first `limit` of them."""
    paths = sorted(p for p in folder.glob("*.json") if p.name != "manifest.json")
    return paths[:limit] if limit else paths


def load_messages(path: Path) -> list[Message]:
    """The messages of one exported session."""
    return read_session(str(path)).messages


def step_indexes(messages: list[Message]) -> Iterator[int]:
    """Index of each assistant message: the history the model saw at that step is messages[:index]."""
    for index, message in enumerate(messages):
        if message["info"]["role"] == "assistant":
            yield index

