"""`deepmem stats`: what compression saved, per session, as the engine recorded it."""

from __future__ import annotations

import argparse

import msgspec
import orjson

from deepmem.cli import add_root
from deepmem.config import memory_dir
from deepmem.types import InputError, SavedTotals

COLUMNS = ("step", "parts", "compressed", "tokens_before", "tokens_after")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `stats` parser."""
    parser = subparsers.add_parser("stats", help="tokens saved per session in this project")
    parser.add_argument("--json", action="store_true", help="print the records as JSON lines")
    add_root(parser)
    parser.set_defaults(run=run)


def load_records(root: str) -> dict[str, SavedTotals]:
    """Session → its totals, from every `sessions/<sid>/stats.json`, in the order of their folders."""
    records = {}
    for path in sorted((memory_dir(root) / "sessions").glob("*/stats.json")):
        try:
            data = orjson.loads(path.read_bytes())
            session = data.pop("session") if isinstance(data, dict) else None
            if not isinstance(session, str):
                raise msgspec.ValidationError("Object missing required field `session`")
            records[session] = msgspec.convert(data, SavedTotals)
        except (OSError, orjson.JSONDecodeError, msgspec.ValidationError) as exc:
            raise InputError(f"{path}: unreadable: {exc}") from None
    return records


def format_table(records: dict[str, SavedTotals]) -> str:
    """One row per session plus a total row."""
    header = f"{'session':<34}{'steps':>7}{'parts':>8}{'cut':>7}{'tokens before':>15}{'after':>10}{'saved':>8}"
    lines = [header, "-" * len(header)]
    totals = dict.fromkeys(COLUMNS, 0)
    for session, record in records.items():
        values = {name: getattr(record, name) for name in COLUMNS}
        for name in COLUMNS:
            totals[name] += values[name]
        lines.append(row(session, values))
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
        for session, record in records.items():
            print(msgspec.json.encode({"session": session, **msgspec.to_builtins(record)}).decode())
        return 0
    if not records:
        print(f"no session recorded yet under {memory_dir(args.root)}")
        return 0
    print(format_table(records))
    return 0
