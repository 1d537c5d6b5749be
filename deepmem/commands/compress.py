"""`deepmem compress`: compress a session file as if it were the history at its last step."""

from __future__ import annotations

import argparse
import sys

from deepmem.bill.prices import resolve_prices
from deepmem.cli import add_root
from deepmem.project.config import ccr_folder
from deepmem.transform.plan import TransformPlan, apply_transform, plan_transform
from deepmem.vault.ccr import CCRStore
from deepmem.vault.sessionio import encode_json, read_session, write_output


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `compress` parser."""
    parser = subparsers.add_parser("compress", help="compress an exported session or messages array")
    parser.add_argument("input", help="opencode export file, messages array, or - for stdin")
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    parser.add_argument("--tier", choices=("auto", "low", "medium", "high"), default="auto")
    parser.add_argument("--stats", action="store_true", help="print what was saved, per part kind")
    add_root(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compress, store originals in CCR, write the same shape back."""
    config = args.root.config
    settings = config.compress
    session = read_session(args.input)
    prices = resolve_prices(session.messages, configured=config.cost.prices)
    plan = plan_transform(session.messages, settings, None if args.tier == "auto" else args.tier, prices=prices)
    CCRStore(ccr_folder(args.root), settings).put_all(plan.originals)
    session.messages = apply_transform(session.messages, plan)
    write_output(encode_json(session.to_json()), args.output)
    if args.stats:
        to_stdout = args.output not in (None, "-")
        print(format_stats(plan), file=sys.stdout if to_stdout else sys.stderr, end="")
    return 0


def format_stats(plan: TransformPlan) -> str:
    """A plain table: per part kind, characters and estimated tokens before and after."""
    header = f"{'kind':<22}{'parts':>7}{'cut':>6}{'chars before':>14}{'after':>12}{'tokens before':>15}{'after':>10}{'saved':>8}"
    lines = [header, "-" * len(header)]
    rows = sorted(plan.stats.items(), key=lambda item: -item[1].tokens_before)
    total = [0, 0, 0, 0, 0, 0]
    for kind, row in rows:
        values = (row.parts, row.compressed, row.chars_before, row.chars_after, row.tokens_before, row.tokens_after)
        total = [a + b for a, b in zip(total, values, strict=True)]
        lines.append(_row(kind, *values))
    lines.append("-" * len(header))
    lines.append(_row("total", *total))
    shape = plan.layout
    lines.append(
        f"step {shape.step} · boundary {shape.boundary} · tier {plan.tier} · "
        f"{len(plan.edits)} parts compressed · {plan.failures} compressor failures"
    )
    return "\n".join(lines) + "\n"


def _row(kind: str, parts: int, cut: int, cb: int, ca: int, tb: int, ta: int) -> str:
    saved = f"{100 * (tb - ta) / tb:.1f}%" if tb else "-"
    return f"{kind:<22}{parts:>7}{cut:>6}{cb:>14,}{ca:>12,}{tb:>15,}{ta:>10,}{saved:>8}"
