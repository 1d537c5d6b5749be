"""`deepmem audit`: what deepmem would have saved on your own OpenCode sessions, read-only.

Exit codes: 0 every source read; 1 some database, export file or session was skipped
(each named in a one-line warning, the report covers the rest); 2 nothing usable.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import msgspec

from deepmem.bill.accounting import Spread, session_spread
from deepmem.bill.frame import OPENCODE_FRAME_TOKENS
from deepmem.bill.prices import REPORTED
from deepmem.bridge.tools import TOOL_SCHEMA_TOKENS
from deepmem.cli import add_root
from deepmem.memory.api import stable_block
from deepmem.project.folder import Project
from deepmem.project.opencode_store import OpenCodeDb, StoredSession, default_db_path, export_session, newest
from deepmem.replay.audit import SessionAudit, audit_session, top_savers
from deepmem.tokens import estimate_tokens
from deepmem.transform.additions import Additions
from deepmem.types import InputError, Message

EXIT_OK, EXIT_SKIPPED, EXIT_NOTHING = 0, 1, 2
DAYS = re.compile(r"^(\d+)d$")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `audit` parser."""
    parser = subparsers.add_parser(
        "audit",
        help="replay your OpenCode sessions with and without deepmem (read-only)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--db", type=Path, nargs="+", default=[], metavar="PATH", help=f"OpenCode databases (default: {default_db_path()})"
    )
    parser.add_argument("--export", type=Path, nargs="+", default=[], metavar="FILE", help="`opencode export` files")
    parser.add_argument("--since", type=since_ms, default=0, help="sessions created since DATE (YYYY-MM-DD) or Nd days ago")
    parser.add_argument("--limit", type=positive, help="only the newest N sessions")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_root(parser)
    parser.set_defaults(run=run)


def positive(text: str) -> int:
    """A whole number of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return int(text)


def since_ms(text: str) -> int:
    """'2026-01-31' or '30d' → milliseconds since the epoch (UTC)."""
    days = DAYS.match(text)
    if days:
        moment = dt.datetime.now(dt.UTC) - dt.timedelta(days=int(days.group(1)))
    else:
        try:
            moment = dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected YYYY-MM-DD or Nd, got {text!r}") from None
    return int(moment.timestamp() * 1000)


Loader = Callable[[], list[Message]]


def db_sessions(paths: list[Path], warnings: list[str]) -> list[tuple[StoredSession, Loader]]:
    """The sessions of databases with a loader for each; a database that cannot be read is a warning."""
    found = []
    for path in paths:
        try:
            db = OpenCodeDb(path)
            for note in db.notes:
                print(f"deepmem: note: {note}", file=sys.stderr)
            found.extend((session, lambda db=db, session=session: db.messages(session.id)) for session in db.sessions())
        except InputError as exc:
            warnings.append(str(exc))
    return found


def export_sessions(paths: list[Path], warnings: list[str]) -> list[tuple[StoredSession, Loader]]:
    """The sessions of export files; a file that cannot be read is a warning."""
    found = []
    for path in paths:
        try:
            session, messages = export_session(path)
        except InputError as exc:
            warnings.append(str(exc))
            continue
        found.append((session, lambda messages=messages: messages))
    return found


def audits(
    chosen: list[tuple[StoredSession, Loader]], args: argparse.Namespace, warnings: list[str]
) -> Iterator[SessionAudit]:
    """Each chosen session replayed; one that cannot be loaded is a warning."""
    settings = args.root.config.compress
    frame, additions = request_frame(args.root)
    progress = ProgressBar(len(chosen)) if sys.stderr.isatty() and not args.json else None
    for number, (session, load) in enumerate(chosen, 1):
        if progress:
            progress.show(number, session.title or session.id)
        try:
            messages = load()
        except InputError as exc:
            warnings.append(str(exc))
            continue
        result = audit_session(session.id, messages, settings, frame, additions)
        result.title, result.source = session.title, session.source
        yield result
    if progress:
        progress.done()


def request_frame(project: Project) -> tuple[int, Additions]:
    """What every request carries before its messages: OpenCode's system prompt and tools and the
    user's own (`[cost] frame_tokens`) on both sides; deepmem's tool schemas and the project's
    memory block on its side (its resume block and whispers are left out: they vary by session)."""
    block = stable_block(project)
    return OPENCODE_FRAME_TOKENS + project.config.cost.frame_tokens, Additions(TOOL_SCHEMA_TOKENS, estimate_tokens(block))


class ProgressBar:
    """A one-line progress bar on stderr."""

    WIDTH = 30

    def __init__(self, total: int):
        self.total = total

    def show(self, number: int, label: str) -> None:
        """Redraw the bar for the session being replayed."""
        filled = self.WIDTH * (number - 1) // max(self.total, 1)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        print(f"\r[{bar}] {number}/{self.total} {label[:40]:<40}", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        """Clear the line."""
        print("\r" + " " * (self.WIDTH + 60) + "\r", end="", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Read the history, replay the chosen sessions, print the report and the warnings."""
    warnings: list[str] = []
    databases = args.db or ([] if args.export else [default_db_path()])
    found = db_sessions(databases, warnings) + export_sessions(args.export, warnings)
    chosen = newest([session for session, _ in found], args.since, args.limit)
    loaders = {(session.source, session.id): load for session, load in found}
    results = list(audits([(session, loaders[session.source, session.id]) for session in chosen], args, warnings))
    for warning in warnings:
        print(f"deepmem: warning: {warning} (skipped)", file=sys.stderr)
    if args.json:
        print(msgspec.json.encode(report(results, warnings)).decode())
    else:
        print(format_report(results), end="")
    if not results and warnings:
        return EXIT_NOTHING
    return EXIT_SKIPPED if warnings else EXIT_OK


def total_of(results: list[SessionAudit]) -> SessionAudit:
    """All sessions summed."""
    total = SessionAudit(f"total ({len(results)} sessions)")
    for result in results:
        total.add(result)
    return total


def report(results: list[SessionAudit], warnings: list[str]) -> dict:
    """The JSON report: per session, total, warnings."""
    rows = [msgspec.to_builtins(result) | {"support": result.support} for result in results]
    total = total_of(results)
    return {
        "sessions": rows,
        "total": msgspec.to_builtins(total) | {"support": total.support},
        "spread": {name: msgspec.to_builtins(spread) for name, spread in spreads(results).items()},
        "warnings": warnings,
    }


def spreads(results: list[SessionAudit]) -> dict[str, Spread]:
    """Per reported price model: the sessions one by one, each one's cost with deepmem against
    without (the median, those costlier than none, the worst)."""
    return {
        name: session_spread(
            [result.cost_with[name] / result.cost_without[name] for result in results if result.cost_without.get(name)]
        )
        for name in REPORTED
    }


def ratio(part: float, whole: float) -> str:
    """'0.58×', or '-' when there is nothing to compare with."""
    return f"{part / whole:.2f}×" if whole else "-"


def format_row(result: SessionAudit) -> str:
    """One table row."""
    label = f"{result.title[:21]} {result.session[-8:]}" if result.title else result.session[:30]
    savers = ", ".join(name for name, tokens in top_savers(result.saved_by, 2) if tokens > 0) or "-"
    return (
        f"{label:<31}{result.steps:>6}{result.tokens_without:>12,}{ratio(result.tokens_with, result.tokens_without):>8}"
        f"{result.final_without:>10,}{ratio(result.final_with, result.final_without):>8}"
        + "".join(f"{ratio(result.cost_with.get(name, 0.0), result.cost_without.get(name, 0.0)):>11}" for name in REPORTED)
        + f"{result.support:>9.1%}  {savers}"
    )


def format_report(results: list[SessionAudit]) -> str:
    """The table: one row per session, the total, and the compressors that saved the most overall."""
    if not results:
        return "no sessions to audit\n"
    header = (
        f"{'session':<31}{'steps':>6}{'tokens sent':>12}{'with':>8}{'last step':>10}{'with':>8}"
        + "".join(f"{name:>11}" for name in REPORTED)
        + f"{'support':>9}  top compressors"
    )
    rule = "-" * len(header)
    total = total_of(results)
    lines = [header, rule, *map(format_row, results), rule, format_row(total), ""]
    lines.append("sessions one by one, cost with deepmem against without:")
    lines.extend(f"  {name:<10}{spread.describe()}" for name, spread in spreads(results).items())
    lines.append("")
    lines.append(
        "tokens: deepmem's estimate, summed over every step and at the last step, without deepmem and"
        " with it (×); cost, per price model (anthropic, openai, gemini: deepmem.bill.prices.FAMILIES): warm"
        " prompt cache (repeated prefix at the cache-read price, the rest at the write price; cold after"
        " the cache's lifetime), with deepmem scheduled for those prices against without; support: share of the lines the next step quotes from earlier tool output that it"
        " could still see."
    )
    lines.append("saved most at the last step (estimated tokens):")
    lines.extend(f"  {name:<40}{tokens:>12,}" for name, tokens in top_savers(total.saved_by, 5))
    return "\n".join(lines) + "\n"
