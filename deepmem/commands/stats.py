"""`deepmem stats`: what compression saved, per session, as the engine recorded it."""

from __future__ import annotations

import argparse

import msgspec
import orjson

from deepmem.cli import add_root
from deepmem.config import memory_dir
from deepmem.types import InputError

COLUMNS = ("step", "parts", "compressed", "tokens_before", "tokens_after")


class StatsRecord(msgspec.Struct):
    """One session's totals as the engine writes them to `sessions/<sid>/stats.json`."""

    session: str
    step: int = 0
    parts: int = 0
    compressed: int = 0
    tokens_before: int = 0
    tokens_after: int = 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `stats` parser."""
    parser = subparsers.add_parser("stats", help="tokens saved per session in this project")
    parser.add_argument("--json", action="store_true", help="print the records as JSON lines")
    add_root(parser)
    parser.set_defaults(run=run)


def load_records(root: str) -> list[StatsRecord]:
    """Every `sessions/<sid>/stats.json`, sorted by session id."""
    records = []
    for path in sorted((memory_dir(root) / "sessions").glob("*/stats.json")):
        try:
            records.append(msgspec.convert(orjson.loads(path.read_bytes()), StatsRecord))
        except (OSError, orjson.JSONDecodeError, msgspec.ValidationError) as exc:
            raise InputError(f"{path}: unreadable: {exc}") from None
    return records


def format_table(records: list[StatsRecord]) -> str:
    """One row per session plus a total row."""
    header = f"{'session':<34}{'steps':>7}{'parts':>8}{'cut':>7}{'tokens before':>15}{'after':>10}{'saved':>8}"
    lines = [header, "-" * len(header)]
    totals = dict.fromkeys(COLUMNS, 0)
    for record in records:
        values = {name: getattr(record, name) for name in COLUMNS}
        for name in COLUMNS:
            totals[name] += values[name]
        lines.append(row(record.session, values))
    lines.append("-" * len(header))
    lines.append(row(f"total ({len(records)} sessions)", totals))
    return "\n".join(lines)


def row(label: str, values: dict[str, int]) -> str:
    """A table row with the saved percentage."""
    before, after = values["tokens_before"], values["tokens_after"]
    saved = f"{100 * (before - after) / before:.1f}%" if before else "-"
    return (
        f"{label:<34}{values['step']:>7}{values['parts']:>8}{values['compressed']:>7}"
        f"{before:>15,}{after:>10,}{saved:>8}"
    )


def run(args: argparse.Namespace) -> int:
    """Print the table (or JSON lines)."""
    records = load_records(args.root)
    if args.json:
        for record in records:
            print(msgspec.json.encode(record).decode())
        return 0
    if not records:
        print(f"no session recorded yet under {memory_dir(args.root)}")
        return 0
    print(format_table(records))
    return 0
