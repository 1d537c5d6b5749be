"""Replay corpus sessions step by step and measure what reaches the model.

For each assistant message of each session, the history before it goes through a
contender (no compression; deepmem scheduled with each price model; deepmem on the old
fixed schedule; the hindsight-optimal schedule per price model; masking baselines; the
fixed schedule at other settings); the visible context is counted in o200k tokens and
compared with the previous step's request, and every meter is priced under each price
model. Every request is billed whole: the host's system prompt and tool definitions on
both sides, deepmem's own tool schemas, stable block and whispers on its side
(`bench/frames.py`); the messages alone are reported beside. Prints tables per corpus and price model (the pooled ratio, and the sessions one by one:
median, costlier than none, worst), writes `bench/results/replay-<corpus>.json`, `.png` and
`-sessions.png` (every session's cost ratio).

    python -m bench.replay [--corpus NAME|DIR]... [--sessions N] [--prices anthropic,openai,gemini] [--grid '']
                           [--frame opencode|real|none] [--frame-extra N] [--rebuild-additions] [--no-latency]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import msgspec

from bench.contenders import (
    CONTENDERS,
    Session,
    help_text,
    make_contenders,
    parse_names,
    register_fixed_point,
)
from bench.corpora import corpora, corpus_folder, corpus_name, readable_sessions, session_paths
from bench.frames import Frame, add_frame_arguments, corpus_additions, frame_of, session_setup
from bench.report import RESULTS, draw_chart, draw_sessions, format_sessions, format_totals, write_json
from bench.runners.latency import format_latency, measure_latency
from bench.tokens_o200k import TokenCounter
from deepmem.bill.accounting import Meter, ratios, session_spread
from deepmem.bill.prices import FAMILIES, REPORTED, PriceModel
from deepmem.replay.loop import replay_session
from deepmem.types import Settings

REPLAYED = [
    "none",
    "deepmem",
    "deepmem-fixed",
    "hindsight",
    "mask-last-10-sliding",
    "mask-last-10-every-10",
    "fixed-tail2-batch10",
    "fixed-tail4-batch20",
]
"""What `python -m bench.replay` compares unless told (`--contenders`)."""


def priced_ratios(meters: dict[str, Meter], models: list[PriceModel]) -> dict[str, dict[str, dict[str, float]]]:
    """Price model → contender → its ratios to no compression billed the same way (deepmem and the
    hindsight optimum only under the prices they were scheduled with)."""
    baseline = meters["none"]
    return {
        model.name: {
            name: ratios(meter, baseline, model)
            for name, meter in meters.items()
            if name != "none" and ("@" not in name or name.endswith(f"@{model.name}"))
        }
        for model in models
    }


def corpus_spread(sessions: list[dict], models: list[PriceModel]) -> dict[str, dict[str, dict]]:
    """Price model → contender → the spread of its sessions' whole-request cost ratios
    (median, costlier than none, worst; `deepmem.bill.accounting.Spread`)."""
    if not sessions:
        return {}
    return {
        model.name: {
            name: msgspec.to_builtins(session_spread([row["ratios"][model.name][name]["cost_warm"] for row in sessions]))
            for name in sessions[0]["ratios"][model.name]
        }
        for model in models
    }


def replay_corpus(
    paths: list[Path], names: list[str], models: list[PriceModel], frame: Frame, additions: dict, settings: Settings
) -> dict:
    """Per-session and total ratios of the named contenders against no compression, under each price
    model, every request billed whole (`bench.frames`)."""
    counter = TokenCounter()
    totals: dict[str, Meter] = {}
    sessions = []
    seconds: list[float] = []
    failures = dict.fromkeys(names, 0)
    skipped: dict[str, str] = {}
    warnings: list[str] = []
    longest: dict = {}
    for number, (path, messages) in enumerate(readable_sessions(paths, warnings), 1):
        setup = session_setup(path, messages, frame, additions, counter)
        session = Session(messages, tuple(models), setup.additions, settings, setup.one_hour, setup.frame)
        players, skipped = make_contenders(names, session)
        meters = replay_session(messages, players, counter, setup.frame, setup.one_hour)
        for player in players:
            if player.name.split("@")[0] == "deepmem":
                seconds.extend(player.seconds)
            failures[player.name.split("@")[0]] += getattr(player, "failures", 0)
        baseline = meters["none"]
        sessions.append(
            {
                "session": path.stem,
                "steps": baseline.steps,
                "tokens": baseline.tokens,
                "final_tokens": baseline.final_tokens,
                "frame": setup.frame,
                "one_hour": setup.one_hour,
                "deepmem_frame": setup.additions.frame,
                "whispers": len(setup.additions.whispers),
                "ratios": priced_ratios(meters, models),
            }
        )
        if baseline.tokens > longest.get("tokens", -1):
            longest = {"session": path.stem, "tokens": baseline.tokens, "per_step": {n: m.request_tokens for n, m in meters.items()}}
        for name, meter in meters.items():
            totals.setdefault(name, Meter()).merge(meter)
        print(f"\r{number}/{len(paths)} sessions replayed", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    baseline = totals["none"]
    seconds.sort()
    return {
        "corpus": corpus_name(paths[0].parent) if paths else "",
        "price_models": [msgspec.to_builtins(model) for model in models],
        "sessions": sessions,
        "totals": {
            "steps": baseline.steps,
            "tokens": baseline.tokens,
            "final_tokens": baseline.final_tokens,
            "ratios": priced_ratios(totals, models),
        },
        "spread": corpus_spread(sessions, models),
        "frame": msgspec.to_builtins(frame),
        "contenders": {name: CONTENDERS[name].about for name in names if name not in skipped},
        "skipped": skipped,
        "warnings": warnings,
        "steps_of_longest": longest,
        "deepmem_transform_ms": {
            "median": 1000 * seconds[len(seconds) // 2] if seconds else 0.0,
            "max": 1000 * seconds[-1] if seconds else 0.0,
        },
        "compressor_failures": sum(failures.values()),
        "failures": {name: count for name, count in failures.items() if name not in skipped},
    }


def parse_grid(text: str) -> list[str]:
    """'2x5,8x20' → the fixed schedule at those points, registered as contenders; their names ('' → none)."""
    names = []
    for item in filter(None, text.split(",")):
        tail, _, batch = item.partition("x")
        names.append(register_fixed_point(int(tail), int(batch)))
    return names


def parse_contenders(text: str) -> list[str]:
    """Registry names, comma-separated (`none` first in any case)."""
    try:
        return parse_names(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


MODELS = {
    **FAMILIES,
    "anthropic-any-prefix": msgspec.structs.replace(FAMILIES["anthropic"], name="anthropic-any-prefix", cached_at_marks=False),
}
"""The price models a run can bill: the families, and Anthropic's prices with the cache read at any
repeated prefix (what a mark at every change would give: the limit deepmem's own mark aims at)."""


def parse_models(text: str) -> list[PriceModel]:
    """'anthropic,openai' → their price models (an unknown name is an error naming the known ones)."""
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in MODELS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown price model {unknown[0]!r}; known: {', '.join(MODELS)}")
    return [MODELS[name] for name in names]


def parse_setting(text: str) -> tuple[str, str]:
    """'capture_command_cap_tokens=350' → (name, value) of a `[compress]` setting (an unknown name is an error)."""
    name, given, value = text.partition("=")
    if not given or name not in Settings.__struct_fields__:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE of a [compress] setting, got {text!r}")
    return name, value


def replay_settings(pairs: list[tuple[str, str]]) -> Settings:
    """The default settings with the `--setting` pairs in place; argparse's error for a value they do not take."""
    try:
        return msgspec.convert(dict(pairs), Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise argparse.ArgumentTypeError(f"--setting: {exc}") from None


def contender_names(args: argparse.Namespace) -> list[str]:
    """The contenders asked for, the fixed-schedule points replaced by `--grid` when given."""
    if args.grid is None:
        return args.contenders
    return [*(name for name in args.contenders if not name.startswith("fixed-tail")), *args.grid]


def main(argv: list[str] | None = None) -> int:
    """Replay every corpus, print tables, write JSON and charts."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.replay",
        description=__doc__.split("\n")[0],
        epilog=help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or a folder of exports (repeatable; default: every corpus)")
    parser.add_argument("--sessions", type=int, help="replay only the first N sessions (by name) of each corpus")
    parser.add_argument("--prices", type=parse_models, default=parse_models(",".join(REPORTED)), help="price models, comma-separated")
    parser.add_argument("--contenders", type=parse_contenders, default=REPLAYED, help="registry names, comma-separated")
    parser.add_argument(
        "--grid",
        type=parse_grid,
        default=None,
        help="TAILxBATCH points of the fixed schedule, comma-separated, in place of the registered ones ('' for none)",
    )
    add_frame_arguments(parser)
    parser.add_argument("--no-latency", action="store_true", help="skip the 200K / 1M latency figures")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for replay-<corpus>.json and .png")
    parser.add_argument(
        "--setting", type=parse_setting, action="append", default=[], help="NAME=VALUE of a [compress] setting (repeatable)"
    )
    args = parser.parse_args(argv)
    folders = args.corpus or list(corpora().values())
    try:
        settings = replay_settings(args.setting)
    except argparse.ArgumentTypeError as exc:
        parser.error(str(exc))
    for corpus in folders:
        paths = session_paths(corpus, args.sessions)
        if not paths:
            parser.error(f"no sessions in {corpus}")
        name = corpus_name(corpus)
        additions = corpus_additions(corpus, name, args.rebuild_additions)
        result = replay_corpus(paths, contender_names(args), args.prices, frame_of(args), additions, settings)
        print(format_sessions(result, args.prices[0].name), end="")
        print(format_totals(result), end="")
        write_json(result, args.out / f"replay-{name}.json")
        draw_chart(result, args.out / f"replay-{name}.png", args.prices[0].name)
        draw_sessions(result, args.out / f"replay-{name}-sessions.png", args.prices[0].name)
        print(f"wrote replay-{name}.json, replay-{name}.png and replay-{name}-sessions.png in {args.out}\n")
    if not args.no_latency:
        latency = measure_latency(session_paths(folders[0]), settings)
        print(format_latency(latency), end="")
        write_json(latency, args.out / "latency.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
