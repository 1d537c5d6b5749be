"""Sessions that cost more with deepmem than without, under a warm prompt cache, and why.

Each session is replayed step by step with and without deepmem (default settings, o200k
tokens). A step's extra cost is deepmem's warm-cache cost at that step minus no
compression's. A boundary jump rewrites the newly old steps and everything after them,
so its step pays the rewrite at the write price instead of the read price; the steps after it repay that by
sending fewer (cached) tokens. Each jump's segment runs from it to the step before the
next jump; a session costs more when some segments never repay their jump. Causes named:

- `short`: the session ends before its first jump is repaid (a jump repays its rewrite
  at the read price of the tokens it saves per step, since a saved token was a cached one);
- `late jump`: a later jump comes too close to the end to be repaid;
- `small gain`: a jump that would need over 20 steps to repay: it rewrote a long prefix
  to save few tokens per step;
- `before the first jump`: no jump lost anything; capture-time trimming or the nudges cost
  more than they saved.

A session is named by the jump that lost the most.

    python -m bench.costly [--corpus DIR]... [--sessions N] [--prices anthropic,openai,gemini] [--json]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from bench.corpus import CORPORA, load_messages, session_paths
from bench.replay import parse_models
from bench.strategies import Deepmem, Uncompressed
from bench.tokens_o200k import TokenCounter
from deepmem.accounting import Meter
from deepmem.history import message_steps, step_indexes
from deepmem.jumps import request_pauses, request_times
from deepmem.pipeline import plan_transform
from deepmem.prices import REPORTED, PriceModel
from deepmem.types import Message, Settings

SLOW_PAYBACK_STEPS = 20
"""A jump needing more steps than this to repay its rewrite gained little for what it rewrote."""


class Segment(msgspec.Struct):
    """The steps from one boundary jump (or the start) to the step before the next jump."""

    start: int
    """Step number where the segment starts (1 for the part before the first jump)."""
    boundary: int
    steps: int = 0
    paid: float = 0.0
    """Extra cost at the segment's first step (the rewrite), in token units."""
    net: float = 0.0
    """Extra cost over the whole segment: positive means not repaid."""
    rewritten: int = 0
    """o200k tokens deepmem's request did not share with its previous one, at the first step."""
    saved_per_step: float = 0.0
    """Mean tokens fewer than no compression over the segment's steps."""


def step_costs(
    messages: list[Message], settings: Settings, prices: PriceModel, counter: TokenCounter
) -> list[tuple[int, float, float, int, int]]:
    """Per step: (boundary, extra warm cost in tokens at the write price, uncached tokens of deepmem,
    deepmem tokens, raw tokens)."""
    raw, packed = Meter(), Meter()
    none, deepmem = Uncompressed(), Deepmem(settings, prices=prices)
    steps = message_steps(messages)
    pauses = request_pauses(request_times(messages, steps, steps[-1] if steps else 0))
    rows = []
    for index in step_indexes(messages):
        history = messages[:index]
        costs = []
        for meter, player in ((raw, none), (packed, deepmem)):
            before = meter.cost(prices), meter.cached_tokens, meter.tokens
            units, marks = player.request(history)
            meter.add(units, counter.count_many(units), pause_ms=pauses[steps[index] - 1], marks=marks)
            spent = (meter.cost(prices) - before[0]) / prices.cache_write
            costs.append((spent, meter.tokens - before[2] - (meter.cached_tokens - before[1]), meter.final_tokens))
        (raw_cost, _, raw_tokens), (packed_cost, uncached, packed_tokens) = costs
        boundary = plan_transform(history, settings, prices=prices).layout.boundary
        rows.append((boundary, packed_cost - raw_cost, uncached, packed_tokens, raw_tokens))
    return rows


def segments(rows: list[tuple[int, float, float, int, int]]) -> list[Segment]:
    """Split the steps where the boundary jumps."""
    found: list[Segment] = []
    for step, (boundary, extra, uncached, packed, raw) in enumerate(rows, 1):
        if not found or boundary != found[-1].boundary:
            found.append(Segment(step, boundary, paid=extra, rewritten=int(uncached)))
        segment = found[-1]
        segment.steps += 1
        segment.net += extra
        segment.saved_per_step += (raw - packed - segment.saved_per_step) / segment.steps
    return found


def jump_losses(parts: list[Segment], read: float) -> list[tuple[str, float]]:
    """Per boundary jump not repaid by the end: its kind and what it lost, in token-cost units.

    A jump's gain per step is what its segment saves beyond the previous segment; it repays
    its rewrite at a tenth of that per remaining step (a saved token was a cached token).
    """
    losses = []
    for number, (segment, gain) in enumerate(zip(parts, gains(parts), strict=True)):
        if segment.boundary == 0:
            continue
        remaining = sum(later.steps for later in parts[number:]) - 1
        payback = segment.paid / (read * gain) if gain else float("inf")
        loss = segment.paid - read * gain * remaining
        if loss > 0:
            kind = "small gain" if payback > SLOW_PAYBACK_STEPS else ("short" if number <= 1 else "late jump")
            losses.append((kind, loss))
    return losses


def gains(parts: list[Segment]) -> list[float]:
    """Per segment: tokens per step it saves beyond the segment before it (what its jump added)."""
    before = [0.0, *(segment.saved_per_step for segment in parts[:-1])]
    return [max(segment.saved_per_step - previous, 0.0) for segment, previous in zip(parts, before, strict=True)]


def cause(parts: list[Segment], read: float) -> str:
    """The kind of the jump that lost the most (see the module docstring)."""
    losses = jump_losses(parts, read)
    return max(losses, key=lambda item: item[1])[0] if losses else "before the first jump"


def analyse(paths: list, settings: Settings, prices: PriceModel) -> dict:
    """Every session's cost ratio; for the costly ones, their segments and cause."""
    counter = TokenCounter()
    sessions = []
    for number, path in enumerate(paths, 1):
        print(f"\r{number}/{len(paths)}", end="", file=sys.stderr, flush=True)
        rows = step_costs(load_messages(path), settings, prices, counter)
        parts = segments(rows)
        extra = sum(row[1] for row in rows)
        sessions.append({"session": path.stem, "steps": len(rows), "extra_cost": extra, "segments": parts})
    print(file=sys.stderr)
    costly = [row for row in sessions if row["extra_cost"] > 0]
    for row in costly:
        row["cause"] = cause(row["segments"], prices.read)
    return {"sessions": len(sessions), "prices": prices.name, "costly": costly}


def format_analysis(result: dict) -> str:
    """One block per costly session: its cause and each jump's cost and repayment."""
    lines = [
        f"{len(result['costly'])} of {result['sessions']} sessions cost more with deepmem "
        f"(warm cache, {result['prices']} prices; costs in tokens at the write price)",
        "",
    ]
    for row in result["costly"]:
        lines.append(f"{row['session']}: {row['steps']} steps, +{row['extra_cost']:,.0f} token-cost units, cause: {row['cause']}")
        for segment, gain in zip(row["segments"], gains(row["segments"]), strict=True):
            if segment.boundary == 0:
                lines.append(f"    steps 1-{segment.steps} before any jump: net {segment.net:+,.0f}")
                continue
            lines.append(
                f"    jump at step {segment.start} (boundary {segment.boundary}): rewrote {segment.rewritten:,} tokens "
                f"(+{segment.paid:,.0f}) to save {gain:,.0f} more tokens per step; {segment.steps - 1} steps until the next jump or the end: "
                f"net {segment.net:+,.0f}"
            )
    causes: dict[str, int] = {}
    for row in result["costly"]:
        causes[row["cause"]] = causes.get(row["cause"], 0) + 1
    lines += ["", "causes: " + ", ".join(f"{name} {count}" for name, count in sorted(causes.items()))]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Analyse and print (or print JSON)."""
    parser = argparse.ArgumentParser(prog="python -m bench.costly", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, action="append", help="folder of exported sessions (repeatable; default: all three)")
    parser.add_argument("--sessions", type=int, help="only the first N sessions (by name) of each corpus")
    parser.add_argument("--prices", type=parse_models, default=parse_models(",".join(REPORTED)), help="price models, comma-separated")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for corpus in args.corpus or CORPORA:
        for prices in args.prices:
            result = analyse(session_paths(corpus, args.sessions), Settings(), prices)
            result["corpus"] = str(corpus)
            print(msgspec.json.encode(result).decode() if args.json else f"{corpus}\n{format_analysis(result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
