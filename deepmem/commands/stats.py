"""`deepmem stats`: what compression saved, per session, as the engine recorded it."""

from __future__ import annotations

import argparse
import os

import msgspec

from deepmem.cli import add_root
from deepmem.project.config import memory_dir
from deepmem.types import InputError, SavedTotals, SessionTotals


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `stats` parser."""
    parser = subparsers.add_parser("stats", help="tokens saved per session in this project")
    parser.add_argument("--json", action="store_true", help="print the records as JSON lines")
    add_root(parser)
    parser.set_defaults(run=run)


def load_records(root: str | os.PathLike[str]) -> list[SessionTotals]:
    """Every session's totals, from every `sessions/<sid>/stats.json`, in the order of their folders."""
    records = []
    for path in sorted((memory_dir(root) / "sessions").glob("*/stats.json")):
        try:
            records.append(msgspec.json.decode(path.read_bytes(), type=SessionTotals))
        except (OSError, msgspec.DecodeError) as exc:
            raise InputError(f"{path}: unreadable: {exc}") from None
    return records


def format_table(records: list[SessionTotals]) -> str:
    """One row per session plus a total row."""
    header = (
        f"{'session':<34}{'steps':>7}{'parts':>8}{'cut':>7}{'tokens before':>15}{'after':>10}{'saved':>8}"
        f"{'$ with':>10}{'$ without':>11}{'cost':>8}"
    )
    total = SavedTotals(*(sum(getattr(record, name) for record in records) for name in SavedTotals.__struct_fields__))
    lines = [header, "-" * len(header), *(row(record.session, record) for record in records), "-" * len(header)]
    lines.append(row(f"total ({len(records)} sessions)", total))
    lines.append(
        "$ with, $ without: what the session's requests have cost so far with deepmem and would have"
        " cost without it (estimated, whole requests at the session's prices; '-' for a session"
        " recorded before the bills were kept)"
    )
    return "\n".join(lines)


def row(label: str, totals: SavedTotals) -> str:
    """A table row with the saved percentage."""
    before, after = totals.tokens_before, totals.tokens_after
    saved = f"{100 * (before - after) / before:.1f}%" if before else "-"
    return (
        f"{label:<34}{totals.step:>7}{totals.parts:>8}{totals.compressed:>7}"
        f"{before:>15,}{after:>10,}{saved:>8}" + bills(totals)
    )


def bills(totals: SavedTotals) -> str:
    """The two bills and their ratio as table cells ('-' for a record kept without them)."""
    with_, without = totals.cost_with, totals.cost_without
    if not without:
        return f"{'-':>10}{'-':>11}{'-':>8}"
    return f"{with_:>10.2f}{without:>11.2f}{with_ / without:>7.2f}×"


def run(args: argparse.Namespace) -> int:
    """Print the table (or JSON lines)."""
    records = load_records(args.root)
    if args.json:
        for record in records:
            print(msgspec.json.encode({"session": record.session, **msgspec.structs.asdict(record)}).decode())
        return 0
    if not records:
        print(f"no session recorded yet under {memory_dir(args.root)}")
        return 0
    print(format_table(records))
    return 0
