"""Compare the named contenders on the same sessions, tokenizer (o200k) and evidence.

For every step of every session, each contender's history is counted (tokens summed,
last step, warm-cache cost, prefix stability) and checked for next-step support: the
share of lines the step's tool inputs quote from earlier tool output that the history it
would have sent still shows. Writes `compare.json`, `compare.md`, `compare-savings.png`
and `compare-steps.png` to bench/results/.

    python -m bench [--corpus NAME|DIR] [--sessions N] [--contenders a,b,…]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.contenders import CONTENDERS, Unavailable, help_text
from bench.contenders.headroom import headroom_version
from bench.corpora import DEFAULT, corpus_folder, corpus_name, session_paths
from bench.report import RESULTS, draw_savings, draw_steps, markdown_table
from bench.tokens_o200k import TokenCounter
from deepmem.accounting import Meter, ratios
from deepmem.replay import replay_session
from deepmem.sessionio import atomic_write, encode_json, read_session
from deepmem.types import InputError


def figures(meter: Meter, baseline: Meter) -> dict[str, float]:
    """Ratios against no compression, plus how many quoted lines next-step support counts."""
    return {**ratios(meter, baseline), "quoted_lines": meter.quoted}


def make_players(names: list[str]) -> tuple[list, dict[str, str]]:
    """Fresh contenders for one session, and the ones that cannot run with the reason."""
    players, skipped = [], {}
    for name in names:
        try:
            player = CONTENDERS[name][1]()
        except Unavailable as exc:
            skipped[name] = str(exc)
            continue
        player.name = name
        players.append(player)
    return players, skipped


def compare(paths: list[Path], names: list[str]) -> dict:
    """Per-session and total figures of every contender, and what was skipped."""
    counter = TokenCounter()
    totals = {name: Meter() for name in names}
    sessions, warnings, skipped, steps_of = [], [], {}, {}
    failures = dict.fromkeys(names, 0)
    for number, path in enumerate(paths, 1):
        print(f"\r{number}/{len(paths)} {path.name[:60]:<60}", end="", file=sys.stderr, flush=True)
        try:
            messages = read_session(str(path)).messages
        except InputError as exc:
            warnings.append(str(exc))
            continue
        players, skipped = make_players(names)
        meters = replay_session(messages, players, counter)
        for player in players:
            failures[player.name] += getattr(player, "failures", 0)
        baseline = meters["none"]
        sessions.append(
            {
                "session": path.stem,
                "steps": baseline.steps,
                "tokens": baseline.tokens,
                "figures": {name: figures(meter, baseline) for name, meter in meters.items()},
            }
        )
        if baseline.tokens > steps_of.get("tokens", -1):
            steps_of = {"session": path.stem, "tokens": baseline.tokens, "per_step": {n: m.request_tokens for n, m in meters.items()}}
        for name, meter in meters.items():
            totals[name].merge(meter)
    print(file=sys.stderr)
    baseline = totals["none"]
    return {
        "sessions": sessions,
        "totals": {
            "sessions": len(sessions),
            "steps": baseline.steps,
            "tokens": baseline.tokens,
            "figures": {name: figures(meter, baseline) for name, meter in totals.items() if name not in skipped},
        },
        "skipped": skipped,
        "failures": {name: count for name, count in failures.items() if name not in skipped},
        "warnings": warnings,
        "versions": {"headroom-ai": headroom_version()},
        "steps_of_longest": steps_of,
    }


def parse_names(text: str) -> list[str]:
    """'a,b' → ['none', 'a', 'b'] after checking each name against the registry."""
    names = [name for name in text.split(",") if name]
    unknown = [name for name in names if name not in CONTENDERS]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown contender {', '.join(unknown)}; known: {', '.join(CONTENDERS)}")
    return ["none", *[name for name in names if name != "none"]]


def main(argv: list[str] | None = None) -> int:
    """Compare, print the Markdown table, write JSON, Markdown and charts."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__.split("\n")[0],
        epilog=help_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name (below) or a folder of exports")
    parser.add_argument("--sessions", type=int, help="only the first N sessions (by file name)")
    parser.add_argument("--contenders", type=parse_names, default=list(CONTENDERS), help="comma-separated names (default: all)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the outputs")
    args = parser.parse_args(argv)
    paths = session_paths(args.corpus, args.sessions)
    if not paths:
        parser.error(f"no sessions in {args.corpus}")
    result = compare(paths, args.contenders)
    result["corpus"] = corpus_name(args.corpus)
    for name, reason in result["skipped"].items():
        print(f"skipped {name}: {reason}")
    for warning in result["warnings"]:
        print(f"warning: {warning} (skipped)", file=sys.stderr)
    table = markdown_table(result)
    print(table, end="")
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / "compare.json", encode_json(result))
    atomic_write(args.out / "compare.md", table.encode())
    draw_savings(result, args.out / "compare-savings.png")
    draw_steps(result, args.out / "compare-steps.png")
    print(f"wrote compare.json, compare.md, compare-savings.png, compare-steps.png in {args.out}")
    return 1 if result["warnings"] else 0
