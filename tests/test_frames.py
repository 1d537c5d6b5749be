"""What a request carries besides its messages, as the benchmarks bill it (`bench/frames.py`)."""

from __future__ import annotations

from bench import frames
from bench.frames import build_additions, deepmem_tool_tokens
from deepmem.transform.additions import TOOL_TOKENS_LIMIT

from .conftest import FIXTURES

USAGE = FIXTURES / "usage"


def test_each_session_of_a_history_gets_the_tool_schemas_and_the_memory_the_earlier_ones_left(tmp_path, monkeypatch) -> None:
    """Two sessions of one repository in start order: both carry deepmem's tool schemas; the
    second also carries the stable block built from the first's checkpoint (its resume block)."""
    monkeypatch.setenv("DEEP_MEMORY_GLOBAL_ROOT", str(tmp_path / "global"))
    built = build_additions(USAGE)
    assert len(built) == 2
    first, second = sorted(built.values(), key=lambda additions: additions.frame)
    tools = deepmem_tool_tokens()
    assert first.frame >= tools and second.frame > first.frame
    assert all(text.strip() for additions in built.values() for text in additions.whispers.values())


def test_the_tool_schemas_stay_within_their_limit() -> None:
    """deepmem's tool schemas, counted in o200k as OpenCode sends them, stay under the documented limit."""
    assert deepmem_tool_tokens() <= TOOL_TOKENS_LIMIT


def test_additions_kept_in_an_older_form_are_built_again(tmp_path, monkeypatch) -> None:
    """A cache from before the additions were split by kind is not read as empty additions: it is built again."""
    monkeypatch.setenv("DEEP_MEMORY_GLOBAL_ROOT", str(tmp_path / "global"))
    monkeypatch.setattr(frames, "RESULTS", tmp_path)
    frames.additions_path("usage").write_text('{"s": {"frame": 1765, "whispers": {}}}', encoding="utf-8")
    built = frames.corpus_additions(USAGE, "usage")
    assert len(built) == 2 and all(additions.tools == deepmem_tool_tokens() for additions in built.values())
    assert frames.corpus_additions(USAGE, "usage") == built
