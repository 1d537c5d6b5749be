"""Compare the named contenders on the same sessions, tokenizer (o200k) and evidence.

The replay of `python -m bench.replay` (`bench/runners/replay.py`), with the contenders of
the registry (`bench/contenders`) a user would choose between, billed under one price
model (the corpus's by default: OpenAI's for Codex sessions, else Anthropic's) for the whole request: tokens, last step, warm-cache cost,
prefix stability and next-step support against no compression, pooled and session by
session (the median session, those costlier than none, the worst). Writes `compare.json`,
`compare.md`, `compare-savings.png`, `compare-steps.png` and `compare-sessions.png` to bench/results/.

    python -m bench [--corpus NAME|DIR] [--sessions N] [--contenders a,b,…] [--prices anthropic]
                    [--frame opencode|real|none] [--frame-extra N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.contenders import help_text
from bench.contenders.headroom import headroom_version
from bench.corpora import DEFAULT, billed_at, corpus_folder, corpus_name, session_paths
from bench.frames import add_frame_arguments, corpus_additions, frame_of
from bench.report import RESULTS, draw_savings, draw_sessions, draw_steps, markdown_table
from bench.runners.replay import parse_contenders, parse_models, replay_corpus
from deepmem.types import Settings
from deepmem.vault.sessionio import encode_json
from deepmem.vault.writer import write_given

COMPARED = [
    "none",
    "opencode-prune",
    "opencode-prune-each-step",
    "mask-last-10-sliding",
    "mask-last-10-every-10",
    "context-editing",
    "headroom",
    "deepmem",
    "deepmem-low",
    "deepmem-medium",
    "deepmem-high",
]
"""What `python -m bench` compares unless told (`--contenders`)."""


def comparison(result: dict) -> dict:
    """The replay's result seen under its one price model: figures per contender, `none` included."""
    model = result["price_models"][0]["name"]
    rows = result["totals"]["ratios"][model]
    none = dict.fromkeys(next(iter(rows.values())), 1.0) if rows else {}
    return {
        **result,
        "price_model": model,
        "totals": {
            "sessions": len(result["sessions"]),
            "steps": result["totals"]["steps"],
            "tokens": result["totals"]["tokens"],
            "figures": {"none": none, **rows},
        },
        "versions": {"headroom-ai": headroom_version()},
    }


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
    parser.add_argument("--contenders", type=parse_contenders, default=COMPARED, help="comma-separated names (default: the usual choices)")
    parser.add_argument("--prices", type=parse_models, help="the price model to bill (one; default: the corpus's, bench.corpora.BILLED_AT)")
    add_frame_arguments(parser)
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the outputs")
    args = parser.parse_args(argv)
    paths = session_paths(args.corpus, args.sessions)
    if not paths:
        parser.error(f"no sessions in {args.corpus}")
    name = corpus_name(args.corpus)
    additions = corpus_additions(args.corpus, name, args.rebuild_additions)
    prices = args.prices or parse_models(billed_at(name))
    result = comparison(replay_corpus(paths, args.contenders, prices[:1], frame_of(args), additions, Settings()))
    result["corpus"] = name
    for contender, reason in result["skipped"].items():
        print(f"skipped {contender}: {reason}")
    for warning in result["warnings"]:
        print(f"warning: {warning} (skipped)", file=sys.stderr)
    table = markdown_table(result)
    print(table, end="")
    args.out.mkdir(parents=True, exist_ok=True)
    write_given(args.out / "compare.json", encode_json(result))
    write_given(args.out / "compare.md", table.encode())
    draw_savings(result, args.out / "compare-savings.png")
    draw_steps(result, args.out / "compare-steps.png")
    draw_sessions(result, args.out / "compare-sessions.png", result["price_model"])
    print(f"wrote compare.json, compare.md, compare-savings.png, compare-steps.png, compare-sessions.png in {args.out}")
    return 1 if result["warnings"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
