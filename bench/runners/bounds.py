"""How far any schedule of jumps could go: deepmem beside its two bounds, in the replay's own bill.

    python -m bench.runners.bounds [--corpus NAME ...]

Each corpus is replayed (`bench.runners.replay.replay_corpus`: whole requests, the host's frame
on both sides, deepmem's additions of `bench/results/additions-<corpus>.json` on its side, at
the corpus's prices) with three schedules of the same compressors:

- deepmem: the priced schedule that runs;
- hindsight: the cheapest jumps knowing each session's end (`bench.contenders.hindsight`),
  what any schedule could save with these compressors and additions (cheapest in the
  schedule's estimate, so the replay may price it a little above deepmem on a few sessions);
- no jumps: deepmem's fixed schedule with a batch longer than any session, so only what is
  trimmed when first seen (and a window that presses) is cut: the bound on the quoted lines
  a schedule could keep with these caps.

Per corpus and schedule it prints the pooled cost ratio, the median session, the sessions
costlier than none, the worst, the sessions over 1.03×, and of those the ones costlier on
their messages alone (without the additions in the system prompt and tool list), then the
quoted lines in view and the steps supported; it writes `bench/results/bounds.json`.
`--tools-only` gives deepmem nothing but its tool schemas (no memory block, resume block or
whispers), to see what the memory features cost the sessions one by one
(`bench/results/bounds-tools-only.json`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.contenders import register_fixed_point
from bench.corpora import billed_at, corpora, corpus_folder, corpus_name, session_paths
from bench.frames import Frame, corpus_additions
from bench.report import RESULTS, write_json
from bench.runners.replay import replay_corpus
from deepmem.bill.prices import FAMILIES
from deepmem.transform.additions import Additions
from deepmem.types import Settings

NEVER_JUMPS = register_fixed_point(Settings().tail_steps, 1_000)
"""deepmem without jumps: a batch longer than any session of the corpora."""
SCHEDULES = {"deepmem": "deepmem", "hindsight": "hindsight", "no jumps": NEVER_JUMPS}
"""Row name → the contender replayed for it."""
OVER = 1.03
"""The ratio a session is counted above (the worst a session may cost against none)."""


def schedule_row(result: dict, contender: str, model: str) -> dict[str, float]:
    """One contender's figures over a replayed corpus (`replay_corpus`'s result)."""
    per_session = [row["ratios"][model][contender] for row in result["sessions"]]
    spread = result["spread"][model][contender]
    pooled = result["totals"]["ratios"][model][contender]
    over = [ratios for ratios in per_session if ratios["cost_warm"] > OVER]
    return {
        "pooled": pooled["cost_warm"],
        "median": spread["median"],
        "costlier": spread["costlier"],
        "sessions": spread["sessions"],
        "worst": spread["worst"],
        "over": len(over),
        "over_on_messages": sum(ratios["cost_messages"] > 1.0 for ratios in over),
        "lines": pooled["support"],
        "steps": pooled["steps_supported"],
    }


def tools_only(additions: dict[str, Additions]) -> dict[str, Additions]:
    """The same sessions given deepmem's tool schemas alone."""
    return {stem: Additions(tools=given.tools) for stem, given in additions.items()}


def corpus_bounds(folder: Path, only_tools: bool = False) -> dict[str, dict[str, float]]:
    """Per schedule, its figures on one corpus (with `only_tools`, deepmem's additions cut to its tool schemas)."""
    name = corpus_name(folder)
    model = FAMILIES[billed_at(name)]
    contenders = ["none", *SCHEDULES.values()]
    additions = corpus_additions(folder, name)
    if only_tools:
        additions = tools_only(additions)
    result = replay_corpus(session_paths(folder), contenders, [model], Frame(), additions, Settings())
    return {row: schedule_row(result, f"{contender}@{model.name}", model.name) for row, contender in SCHEDULES.items()}


def format_row(corpus: str, schedule: str, row: dict[str, float]) -> str:
    """One line of the printed table."""
    costlier = f"{row['costlier']} of {row['sessions']}"
    over = f"{row['over']} ({row['over_on_messages']})"
    return (
        f"{corpus:14} {schedule:10} {row['pooled']:7.3f} {row['median']:7.3f} {costlier:>10} {row['worst']:7.3f}"
        f" {over:>9} {100 * row['lines']:6.1f}% {100 * row['steps']:6.1f}%"
    )


def main(argv: list[str] | None = None) -> int:
    """Replay each corpus under the three schedules; print and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or folder (repeatable; default: every corpus)")
    parser.add_argument("--tools-only", action="store_true", help="deepmem's additions cut to its tool schemas")
    parser.add_argument("--out", type=Path, help="where the JSON goes (default: bench/results/bounds[-tools-only].json)")
    args = parser.parse_args(argv)
    out = args.out or RESULTS / ("bounds-tools-only.json" if args.tools_only else "bounds.json")
    folders = args.corpus or list(corpora().values())
    result: dict[str, dict] = {}
    print(f"{'corpus':14} {'schedule':10} {'pooled':>7} {'median':>7} {'costlier':>10} {'worst':>7} {'>1.03 (msgs)':>9} {'lines':>7} {'steps':>7}")
    for folder in folders:
        rows = result[corpus_name(folder)] = corpus_bounds(folder, args.tools_only)
        for schedule, row in rows.items():
            print(format_row(corpus_name(folder), schedule, row), flush=True)
    write_json(result, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
