"""What a request carries besides its messages, as the benchmarks bill it (`bench/frames.py`)."""

from __future__ import annotations

from bench.frames import build_additions, deepmem_tool_tokens

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
