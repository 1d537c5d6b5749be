"""Replay corpus sessions step by step and measure what reaches the model.

For each assistant message of each session, the history before it goes through a
contender (no compression, deepmem, masking baselines, deepmem at other settings); the
visible context is counted in o200k tokens and compared with the previous step's request.
Prints tables, writes `bench/results/replay.json` and `bench/results/replay.png`.

    python -m bench.replay [--sessions N] [--no-grid] [--no-latency]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as `python bench/replay.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import CORPUS, load_messages, session_paths  # noqa: E402
from bench.latency import format_latency, measure_latency  # noqa: E402
from bench.report import draw_chart, format_sessions, format_totals, write_json  # noqa: E402
from bench.strategies import Deepmem, MaskOldOutputs, Uncompressed, grid_settings  # noqa: E402
from bench.tokens_o200k import TokenCounter  # noqa: E402
from deepmem.accounting import Meter, ratios  # noqa: E402
from deepmem.history import step_indexes  # noqa: E402
from deepmem.support import quoted_lines  # noqa: E402
from deepmem.types import Settings  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
GRID = [(2, 5), (2, 10), (4, 5), (4, 20), (8, 10), (8, 20), (12, 20)]
"""(tail_steps, batch_steps) points of the trade-off curve, besides the default (4, 10)."""


def contenders(settings: Settings, grid: list[tuple[int, int]]) -> list:
    """Fresh contenders for one session: the baseline first."""
    return [
        Uncompressed(),
        Deepmem(settings),
        MaskOldOutputs(keep=10, every=1),
        MaskOldOutputs(keep=10, every=10),
        *grid_settings(settings, grid),
    ]


def replay_session(messages: list, players: list, counter: TokenCounter) -> dict[str, Meter]:
    """Every contender's meter after replaying all steps of one session."""
    meters = {player.name: Meter() for player in players}
    for index in step_indexes(messages):
        history = messages[:index]
        quoted = quoted_lines(history, messages[index])
        for player in players:
            units = player.context(history)
            meters[player.name].add(units, counter.count_many(units), quoted)
    return meters


def replay_corpus(paths: list[Path], settings: Settings, grid: list[tuple[int, int]]) -> dict:
    """Per-session and total ratios of every contender against no compression."""
    counter = TokenCounter()
    totals: dict[str, Meter] = {}
    sessions = []
    seconds: list[float] = []
    failures = 0
    for number, path in enumerate(paths, 1):
        players = contenders(settings, grid)
        meters = replay_session(load_messages(path), players, counter)
        deepmem = players[1]
        seconds.extend(deepmem.seconds)
        failures += deepmem.failures
        baseline = meters["none"]
        sessions.append(
            {
                "session": path.stem,
                "steps": baseline.steps,
                "tokens": baseline.tokens,
                "final_tokens": baseline.final_tokens,
                "ratios": {name: ratios(meter, baseline) for name, meter in meters.items() if name != "none"},
            }
        )
        for name, meter in meters.items():
            totals.setdefault(name, Meter()).merge(meter)
        print(f"\r{number}/{len(paths)} sessions replayed", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    baseline = totals["none"]
    seconds.sort()
    return {
        "corpus": str(paths[0].parent) if paths else "",
        "sessions": sessions,
        "totals": {
            "steps": baseline.steps,
            "tokens": baseline.tokens,
            "final_tokens": baseline.final_tokens,
            "ratios": {name: ratios(meter, baseline) for name, meter in totals.items() if name != "none"},
        },
        "grid": [{"tail_steps": tail, "batch_steps": batch} for tail, batch in [(4, 10), *grid]],
        "deepmem_transform_ms": {
            "median": 1000 * seconds[len(seconds) // 2] if seconds else 0.0,
            "max": 1000 * seconds[-1] if seconds else 0.0,
        },
        "compressor_failures": failures,
    }


def parse_grid(text: str) -> list[tuple[int, int]]:
    """'2x5,8x20' → [(2, 5), (8, 20)]; '' → no grid."""
    points = []
    for item in filter(None, text.split(",")):
        tail, _, batch = item.partition("x")
        points.append((int(tail), int(batch)))
    return points


def main(argv: list[str] | None = None) -> int:
    """Replay, print tables, write JSON and chart."""
    parser = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="folder of exported sessions")
    parser.add_argument("--sessions", type=int, help="replay only the first N sessions (by name)")
    parser.add_argument(
        "--grid",
        type=parse_grid,
        default=GRID,
        help="TAILxBATCH points besides the default 4x10, comma-separated ('' for none)",
    )
    parser.add_argument("--no-latency", action="store_true", help="skip the 200K / 1M latency figures")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for replay.json and replay.png")
    args = parser.parse_args(argv)
    paths = session_paths(args.corpus, args.sessions)
    if not paths:
        parser.error(f"no sessions in {args.corpus}")
    settings = Settings()
    result = replay_corpus(paths, settings, args.grid)
    print(format_sessions(result), end="")
    print(format_totals(result), end="")
    if not args.no_latency:
        result["latency"] = measure_latency(session_paths(args.corpus), settings)
        print(format_latency(result["latency"]), end="")
    write_json(result, args.out / "replay.json")
    draw_chart(result, args.out / "replay.png")
    print(f"wrote {args.out / 'replay.json'} and {args.out / 'replay.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
