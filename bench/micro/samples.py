"""Inputs for the micro-benchmarks: for each compressor, the largest committed part it shortens (or a generated one)."""

from __future__ import annotations

import functools
from pathlib import Path

from bench.micro.parts import GENERATED
from deepmem.compressors import REGISTRY, capture_compressors, compressors_for
from deepmem.history import visible_text
from deepmem.transform.facts import FactsBuilder
from deepmem.types import Context, Message, Part, Settings
from deepmem.vault.sessionio import read_session

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
SESSION_FILES = sorted((FIXTURES / "evidence" / "sessions").glob("*.json")) + sorted((FIXTURES / "sessions").glob("*.json"))
LOW_CAPTURE_CAP = 500
"""Capture-time trimming only acts on outputs above the cap; a low cap gives it committed inputs."""


def session_contexts(messages: list[Message]) -> tuple[Context, Context]:
    """An old-part context at tier high with the whole session's facts, and a capture-time one."""
    builder = FactsBuilder()
    for message in messages:
        builder.add(message)
    settings = Settings(capture_cap_tokens=LOW_CAPTURE_CAP)
    old = Context(age=10, step=1, tier="high", settings=settings, facts=builder.snapshot())
    return old, Context(age=0, step=1, tier="low", settings=settings, facts=old.facts, captured=True)


@functools.cache
def compressor_samples() -> dict[str, tuple[Part, Context]]:
    """Compressor name → (the largest part it shortens in the committed sessions, its context)."""
    best: dict[str, tuple[int, Part, Context]] = {}
    for path in SESSION_FILES:
        messages = read_session(str(path)).messages
        old, captured = session_contexts(messages)
        for message in messages:
            for part in message["parts"]:
                size = len(visible_text(part))
                for ctx, names in ((old, compressors_for(part, old)), (captured, capture_compressors(part))):
                    for name in names:
                        if size > best.get(name, (-1,))[0] and REGISTRY[name].compress(part, ctx) is not None:
                            best[name] = (size, part, ctx)
    samples = {name: (part, ctx) for name, (_, part, ctx) in best.items()}
    plain = session_contexts([])[0]
    for name, make in GENERATED.items():
        samples.setdefault(name, (make(), plain))
    return dict(sorted(samples.items()))
