"""`deepmem memory`: add, search, forget, list, stats, export, import, cleanup and reindex memories."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from deepmem.cli import add_root
from deepmem.commands import memory_lifecycle
from deepmem.memory import api
from deepmem.memory.entries import TYPES, Entry, parse_markdown, render_markdown
from deepmem.memory.files import read_memory_file, scopes_of
from deepmem.memory.store import import_entries, memory_path
from deepmem.types import InputError
from deepmem.vault.sessionio import decode_object, write_output

ONE_SCOPE = ("project", "global")
EVERY_SCOPE = ("project", "global", "all")


def _action(
    commands: argparse._SubParsersAction,
    name: str,
    summary: str,
    run: Callable[[argparse.Namespace], int],
    scopes: tuple[str, ...],
) -> argparse.ArgumentParser:
    """One `memory` subcommand with the options all share: `--scope` (default all where it may be), `--json`, `--root`."""
    parser = commands.add_parser(name, help=summary)
    parser.add_argument("--scope", choices=scopes, default="all" if "all" in scopes else "project")
    parser.add_argument("--json", action="store_true", help="print JSON")
    add_root(parser)
    parser.set_defaults(run=run)
    return parser


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `memory` parser and its subcommands."""
    memory = subparsers.add_parser("memory", help="store and search project and global memories")
    commands = memory.add_subparsers(dest="memory_command", required=True, metavar="ACTION")

    add = _action(commands, "add", "store a memory (duplicates are refused or merged)", run_add, ONE_SCOPE)
    add.add_argument("text")
    add.add_argument("--type", choices=TYPES, default="note")

    search = _action(commands, "search", "hybrid BM25 + embedding search", run_search, EVERY_SCOPE)
    search.add_argument("query", nargs="?")
    search.add_argument("-k", type=int, default=5, help="number of hits (default 5)")
    search.add_argument("--explain", action="store_true", help="show BM25 terms, similarity and ranks")
    search.add_argument("--batch", metavar="QUERIES.jsonl", help='one {"id","query"} per line → {"id","hits"}')

    forget = _action(commands, "forget", "forget a memory by id, or the best match of a query", run_forget, ONE_SCOPE)
    forget.add_argument("target", help="an id or a query")
    forget.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    listing = _action(commands, "list", "list memories", run_list, EVERY_SCOPE)
    listing.add_argument("--type", choices=TYPES)

    _action(commands, "stats", "counts per scope and type", run_stats, EVERY_SCOPE)

    export = _action(commands, "export", "write memories as JSON or Markdown", run_export, EVERY_SCOPE)
    export.add_argument("-o", "--output", help="output file (default: stdout)")
    export.add_argument("--format", choices=("json", "markdown"), default="json")

    load = _action(commands, "import", "import a .json, .jsonl or .md file (each entry keeps its id)", run_import, ONE_SCOPE)
    load.add_argument("file", help="FILE.json (list of entries), FILE.jsonl (one per line) or FILE.md")
    load.add_argument("--dedup", action="store_true", help="skip entries whose text is already stored")
    memory_lifecycle.register(commands)


def _print_json(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n")


def run_add(args: argparse.Namespace) -> int:
    """Store one memory and say what happened."""
    result = api.store(args.root, args.text, args.type, args.scope)
    if args.json:
        _print_json(result)
    else:
        print(result["message"])
    return 0


def _explained(hit: dict[str, Any], rank: int) -> str:
    why = hit["explain"]
    terms = " ".join(f"{term}={score:g}" for term, score in why["terms"].items()) or "-"
    bm25_rank = why["bm25_rank"] or "-"
    sim_rank = why["similarity_rank"] or "-"
    return (f"   fused {hit['score']:.4f} (rank {rank}) · bm25 {why['bm25']:g} (rank {bm25_rank}; {terms})"
            f" · cosine {why['similarity']:.4f} (rank {sim_rank})")


def run_search(args: argparse.Namespace) -> int:
    """Search once, or run a batch of queries from a JSONL file."""
    if args.k <= 0:
        raise InputError("-k must be positive")
    if args.batch:
        if args.query:
            raise InputError("give either a QUERY or --batch, not both")
        for number, item in enumerate(_jsonl(args.batch), 1):
            if not isinstance(item.get("query"), str) or "id" not in item:
                raise InputError(f"{args.batch}:{number}: expected {{\"id\", \"query\"}}")
            hits = api.search(args.root, item["query"], args.k, args.scope)
            sys.stdout.write(orjson.dumps({"id": item["id"], "hits": [hit["id"] for hit in hits]}).decode() + "\n")
        return 0
    if args.query is None:
        raise InputError("search needs a QUERY or --batch FILE")
    hits = api.search(args.root, args.query, args.k, args.scope, explain=args.explain)
    if args.json:
        _print_json(hits)
        return 0
    if not hits:
        print("No stored memory matches.")
    for rank, hit in enumerate(hits, 1):
        print(f"{rank}. [{hit['id']}] {hit['type']} · {hit['scope']} · {hit['time'] or '-'} · {hit['score']:.4f}")
        print("   " + hit["text"].replace("\n", "\n   "))
        if args.explain:
            print(_explained(hit, rank))
    together = api.together(args.root, args.query, args.scope)
    if together:
        print("\nIn past sessions:\n" + together)
    return 0


def run_forget(args: argparse.Namespace) -> int:
    """Forget after a confirmation (asked on a terminal, or given by --yes)."""
    result = api.forget(args.root, args.target, args.scope, yes=args.yes)
    if result["status"] == "confirm":
        if not sys.stdin.isatty():
            raise InputError("forget needs confirmation: rerun with --yes")
        shown = "\n".join(f"  [{entry['id']}] {entry['text']}" for entry in result["matches"])
        answer = input(f"Forget\n{shown}\n? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("kept")
            return 1
        result = api.forget(args.root, result["matches"][0]["id"], args.scope, yes=True)
    if args.json:
        _print_json(result)
    else:
        print(result["message"])
    return 0 if result["forgotten"] else 1


def run_list(args: argparse.Namespace) -> int:
    """Every memory of the scope (optionally one type), in file order."""
    chosen = [entry for entry in api.entries(args.root, args.scope) if args.type in (None, entry.type)]
    if args.json:
        _print_json([api.entry_dict(entry) for entry in chosen])
        return 0
    for entry in chosen:
        print(f"[{entry.id}] {entry.type} · {entry.scope} · {entry.time or '-'}\n   " + entry.text.replace("\n", "\n   "))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    """Entry counts per scope and type, file sizes, and unreadable lines."""
    report = {}
    for scope in scopes_of(args.scope):
        state = read_memory_file(memory_path(args.root, scope), scope)
        report[scope] = {
            "path": str(state.path),
            "entries": len(state.entries),
            "by_type": dict(sorted(Counter(entry.type for entry in state.entries).items())),
            "bytes": state.path.stat().st_size if state.path.exists() else 0,
            "unreadable_lines": len(state.problems),
        }
    if args.json:
        _print_json(report)
        return 0
    for scope, row in report.items():
        types = ", ".join(f"{kind} {count}" for kind, count in row["by_type"].items()) or "none"
        print(f"{scope}: {row['entries']} entries ({types}) · {row['bytes']:,} bytes · "
              f"{row['unreadable_lines']} unreadable lines · {row['path']}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """JSON (a list of entries) or Markdown (the MEMORY.md layout)."""
    chosen = api.entries(args.root, args.scope)
    if args.format == "json":
        data = orjson.dumps([api.entry_dict(entry) for entry in chosen], option=orjson.OPT_INDENT_2) + b"\n"
    else:
        data = render_markdown(chosen).encode("utf-8")
    write_output(data, args.output)
    return 0


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None


def _jsonl(path: str) -> list[dict[str, Any]]:
    """Objects of a JSONL file (blank lines skipped); a bad line is an error naming it."""
    items = []
    for number, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        items.append(decode_object(line, f"{path}:{number}"))
    return items


def _entry(item: dict[str, Any], where: str) -> Entry:
    """An imported object as an Entry; `id` and `text` are required."""
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or "id" not in item:
        raise InputError(f"{where}: expected {{\"id\", \"text\", \"type\"?, \"time\"?}}")
    try:
        return Entry(str(item["id"]), item.get("type") or "note", item["text"], str(item.get("time") or ""))
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def read_import(path: str) -> list[Entry]:
    """Entries of an import file, chosen by its extension: .jsonl, .json or .md."""
    if path.endswith(".jsonl"):
        return [_entry(item, f"{path}:{number}") for number, item in enumerate(_jsonl(path), 1)]
    if path.endswith(".json"):
        try:
            items = orjson.loads(_read_text(path))
        except orjson.JSONDecodeError as exc:
            raise InputError(f"{path}: invalid JSON: {exc}") from None
        if not isinstance(items, list):
            raise InputError(f"{path}: expected a JSON list of entries")
        return [_entry(item, f"{path}: entry {number}") for number, item in enumerate(items, 1)]
    if path.endswith(".md"):
        parsed = parse_markdown(_read_text(path))
        if parsed.problems:
            problem = parsed.problems[0]
            raise InputError(f"{path}:{problem.line}: {problem.reason}: {problem.text.strip()[:80]}")
        return parsed.entries
    raise InputError(f"{path}: unknown import format; use .json, .jsonl or .md")


def run_import(args: argparse.Namespace) -> int:
    """Import every entry under its own id (one write); --dedup skips texts already stored."""
    items = read_import(args.file)
    try:
        counts = import_entries(args.root, items, args.scope, dedup=args.dedup)
    except InputError as exc:
        raise InputError(f"{args.file}: {exc}") from None
    if args.json:
        _print_json(counts)
    else:
        print(", ".join(f"{count} {name}" for name, count in counts.items()))
    return 0
