"""`deepmem memory cleanup` and `deepmem memory reindex`."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

import orjson

from deepmem.cli import add_root
from deepmem.memory.lifecycle import STALE_DAYS, UNUSED_DAYS, cleanup, reindex


def register(commands: argparse._SubParsersAction) -> None:
    """Add `cleanup` and `reindex` to the `memory` subcommands."""
    clean = commands.add_parser("cleanup", help="list superseded, stale and never-retrieved memories (--apply archives them)")
    clean.add_argument("--apply", action="store_true", help="move them to archive.md / history.md (default: dry run)")
    clean.add_argument("--stale-days", type=int, default=STALE_DAYS, help=f"not retrieved for this long (default {STALE_DAYS})")
    clean.add_argument("--unused-days", type=int, default=UNUSED_DAYS,
                       help=f"never retrieved this long after being stored (default {UNUSED_DAYS})")
    clean.add_argument("--json", action="store_true", help="print JSON")
    add_root(clean)
    clean.set_defaults(run=run_cleanup)

    index = commands.add_parser("reindex", help="rebuild the search index (after changing the embedding model)")
    add_root(index)
    index.set_defaults(run=run_reindex)


def run_cleanup(args: argparse.Namespace) -> int:
    """Print what cleanup proposes or did."""
    changes = cleanup(args.root, datetime.now(UTC), args.apply, args.stale_days, args.unused_days)
    if args.json:
        rows = [{"id": c.entry.id, "action": c.action, "into": c.into, "why": c.why, "text": c.entry.text} for c in changes]
        sys.stdout.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    for change in changes:
        into = f" into [{change.into}]" if change.into else ""
        print(f"{change.action}{into}: [{change.entry.id}] {change.entry.text.splitlines()[0][:80]} ({change.why})")
    verb = "moved out of MEMORY.md" if args.apply else "would move out of MEMORY.md (dry run; --apply to do it)"
    print(f"{len(changes)} {'memory' if len(changes) == 1 else 'memories'} {verb}")
    return 0


def run_reindex(args: argparse.Namespace) -> int:
    """Rebuild the index and say with what."""
    from deepmem.memory.embed import model_name

    result = reindex(args.root, model_name(args.root))
    print(f"reindexed {result['entries']} memories with {result['model']} ({result['dim']} dimensions)")
    return 0
