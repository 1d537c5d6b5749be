"""Anthropic's context editing at its defaults beside no compression, deepmem and masking, corpus by corpus.

Each corpus is replayed as `python -m bench.replay` replays it (`replay_corpus`, the host's
frame, deepmem's additions), billed at the corpus's own prices (`bench.corpora.BILLED_AT`).
Per contender: the pooled cost, the cost with quoted lines out of view read again, the
median session, the sessions costlier than none, and the quoted lines and steps in view.
Writes `bench/results/context-editing.json` (the corpora run replace their own rows).

    python -m bench.runners.context_editing [--corpus NAME|DIR]... [--sessions N] [--out DIR]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson

from bench.corpora import add_corpus_arguments, billed_at, chosen_corpora, corpus_name, session_paths
from bench.frames import Frame, corpus_additions
from bench.report import RESULTS, write_json
from bench.runners.replay import MODELS, replay_corpus
from deepmem.types import Settings

COMPARED = ["none", "deepmem", "mask-last-10-every-10", "context-editing"]
"""The contenders replayed beside it."""


def corpus_figures(folder: Path, limit: int | None = None) -> dict:
    """One corpus replayed with the compared contenders: each one's figures against no compression."""
    name = corpus_name(folder)
    model = MODELS[billed_at(name)]
    result = replay_corpus(session_paths(folder, limit), COMPARED, [model], Frame(), corpus_additions(folder, name, False), Settings())
    rows, spread = result["totals"]["ratios"][model.name], result["spread"][model.name]
    return {
        "prices": model.name,
        "sessions": len(result["sessions"]),
        "steps": result["totals"]["steps"],
        "contenders": {
            contender.split("@")[0]: {
                "cost": row["cost_warm"],
                "reread": row["cost_recovered"],
                "median": spread[contender]["median"],
                "costlier": spread[contender]["costlier"],
                "worst": spread[contender]["worst"],
                "support": row["support"],
                "steps_supported": row["steps_supported"],
                "raw": row["raw"],
            }
            for contender, row in rows.items()
        },
    }


def format_figures(name: str, figures: dict) -> str:
    """One corpus's rows as a table."""
    lines = [
        f"{name}: {figures['sessions']} sessions, {figures['steps']:,} steps, {figures['prices']} prices (cost× of the whole request)",
        f"{'contender':<24}{'cost×':>8}{'+reread':>9}{'median':>8}{'costlier':>10}{'worst':>8}{'support':>9}{'steps ok':>10}",
    ]
    lines += [
        f"{contender:<24}{row['cost']:>8.3f}{row['reread']:>9.3f}{row['median']:>8.3f}{row['costlier']:>4} of {figures['sessions']:<3}"
        f"{row['worst']:>8.3f}{row['support']:>9.1%}{row['steps_supported']:>10.1%}"
        for contender, row in figures["contenders"].items()
    ]
    return "\n".join(lines) + "\n\n"


def main(argv: list[str] | None = None) -> int:
    """Replay every corpus named (default: all), print the tables, write context-editing.json."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.context_editing", description=__doc__.split("\n")[0])
    add_corpus_arguments(parser)
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for context-editing.json")
    args = parser.parse_args(argv)
    path = args.out / "context-editing.json"
    results = orjson.loads(path.read_bytes()) if path.exists() else {}
    for folder in chosen_corpora(args):
        name = corpus_name(folder)
        results[name] = corpus_figures(folder, args.sessions)
        print(format_figures(name, results[name]), end="")
    write_json(dict(sorted(results.items())), path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
