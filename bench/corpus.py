"""The replay corpus: sessions in OpenCode export format, loaded in a fixed order."""

from __future__ import annotations

from pathlib import Path

from deepmem.sessionio import read_session
from deepmem.types import Message

CORPUS = Path("/work/shared/corpus/swe-gemini3")
"""Default corpus folder (override with --corpus)."""
CORPORA = [CORPUS, CORPUS.parent / "swe-deepseek", Path(__file__).resolve().parent.parent / "fixtures" / "sessions"]
"""Every corpus the benchmarks report on by default: both shared corpora and the OpenCode fixtures."""


def session_paths(folder: Path, limit: int | None = None) -> list[Path]:
    """Session files of a corpus folder, sorted by name, the first `limit` of them."""
    paths = sorted(p for p in folder.glob("*.json") if p.name != "manifest.json")
    return paths[:limit] if limit else paths


def load_messages(path: Path) -> list[Message]:
    """The messages of one exported session."""
    return read_session(str(path)).messages

