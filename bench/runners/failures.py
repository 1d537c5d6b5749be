"""Compressor failures on real output: every tool part of every corpus through its compressors.

Each completed or errored tool part goes through the compressors the pipeline would give it,
by `deepmem.transform.outcomes.outcome_for` itself: at capture time (`capture_compressors`), and as an
old part (`compressors_for`) at every tier with three sets of facts: none (the schedule's
probe), the history up to its message, and the whole session. Every failure the pipeline
logs is counted by corpus and compressor, and each distinct one is shown with a place it
happened. `python -m bench.runners.failures [--corpus NAME|DIR …] [--every K] [--json]`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import orjson

from bench.corpora import corpora, corpus_folder, session_paths
from deepmem.compressors import capture_compressors, compressors_for
from deepmem.transform.copied import copied_lines
from deepmem.transform.facts import FactsBuilder
from deepmem.transform.outcomes import outcome_for, sizes
from deepmem.types import TIERS, Context, Facts, Message, Part, Settings
from deepmem.vault.sessionio import read_session

SCANNED = ("completed", "error")
"""Statuses of the tool parts scanned: those with an output or an error."""


@dataclass(frozen=True)
class Failure:
    """One failure the pipeline logged: the compressor (`part` for the part as a whole) and the error."""

    compressor: str
    error: str


class FailureLog(logging.Handler):
    """Collects the failures `deepmem.transform.outcomes` logs while it compresses."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.caught: list[Failure] = []

    def emit(self, record: logging.LogRecord) -> None:
        """Keep the compressor's name and the exception's type and first line."""
        exc = record.exc_info[1] if record.exc_info else None
        first = str(exc).splitlines()[0] if exc is not None and str(exc) else ""
        error = f"{type(exc).__name__}: {first}" if exc is not None else record.getMessage()
        name = str(record.args[0]) if record.msg.startswith("compressor") and record.args else "part"
        self.caught.append(Failure(name, error))


@contextmanager
def failures_logged() -> Iterator[FailureLog]:
    """Route the pipeline's warnings into a FailureLog (and not to stderr) for a while."""
    logger = logging.getLogger("deepmem.outcomes")
    handler, propagate = FailureLog(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


@dataclass
class Tally:
    """What one corpus gave: parts and runs scanned, failures by compressor, one place per distinct failure."""

    sessions: int = 0
    parts: int = 0
    runs: int = 0
    by_compressor: Counter[str] = field(default_factory=Counter)
    distinct: dict[Failure, tuple[int, str]] = field(default_factory=dict)
    """Failure → (how many times, the first place: session, part, tool, where)."""

    def add(self, failures: list[Failure], place: str) -> None:
        """Count the failures of one run."""
        for failure in failures:
            self.by_compressor[failure.compressor] += 1
            count, first = self.distinct.get(failure, (0, place))
            self.distinct[failure] = (count + 1, first)

    def summary(self, corpus: str) -> dict:
        """One JSON-ready row."""
        return {
            "corpus": corpus,
            "sessions": self.sessions,
            "tool_parts": self.parts,
            "runs": self.runs,
            "failures": sum(self.by_compressor.values()),
            "by_compressor": dict(sorted(self.by_compressor.items())),
            "distinct": [
                {"compressor": failure.compressor, "error": failure.error, "count": count, "first": place}
                for failure, (count, place) in sorted(self.distinct.items(), key=lambda item: -item[1][0])
            ],
        }


def scanned_parts(message: Message) -> Iterator[Part]:
    """The tool parts of a message that carry an output or an error."""
    for part in message["parts"]:
        if part.get("type") == "tool" and (part.get("state") or {}).get("status") in SCANNED:
            yield part


class Seen(NamedTuple):
    """A scanned part of a session and what the pipeline may know around it."""

    place: str
    """Corpus folder, session file and part id."""
    part: Part
    step: int
    last: int
    """The session's last step."""
    so_far: Facts
    """The facts of the history up to the part's message."""
    whole: Facts
    """The facts of the whole session."""
    copied: frozenset[str]
    """The lines the part's message copied from earlier outputs."""

    def contexts(self, settings: Settings) -> Iterator[tuple[str, Context]]:
        """(label, Context) for every way the pipeline may see the part: captured, then old at each tier."""
        yield "capture", Context(0, self.step, "low", settings, Facts(), captured=True, copied=self.copied)
        for tier in TIERS:
            for label, facts, boundary in (
                ("no facts", Facts(), self.step),
                ("so far", self.so_far, self.step),
                ("whole", self.whole, self.last),
            ):
                yield (
                    f"{tier}, {label}",
                    Context(boundary - self.step, self.step, tier, settings, facts, copied=self.copied),
                )


def seen_parts(path: Path, wanted: Callable[[Part], bool] = lambda part: True) -> Iterator[Seen]:
    """The scanned parts of one session file (those `wanted`), in order, with their facts."""
    messages = read_session(str(path)).messages
    copied = copied_lines(messages, [None] * len(messages), None).copied
    whole = FactsBuilder()
    for message in messages:
        whole.add(message)
    facts, builder = whole.snapshot(), FactsBuilder()
    for index, message in enumerate(messages):
        builder.add(message)
        parts = [part for part in scanned_parts(message) if wanted(part)]
        if not parts:
            continue
        so_far = builder.snapshot()
        for part in parts:
            place = f"{path.parent.name}/{path.name} {part.get('id')}"
            yield Seen(place, part, builder.step, whole.step, so_far, facts, copied[index])


def names_for(part: Part, ctx: Context) -> tuple[str, ...]:
    """The compressors the pipeline gives the part in this context."""
    return capture_compressors(part) if ctx.captured else compressors_for(part, ctx)


def scan_session(path: Path, tally: Tally, log: FailureLog, settings: Settings) -> None:
    """Run every scanned part of one session in every context, counting what fails."""
    tally.sessions += 1
    for seen in seen_parts(path):
        tally.parts += 1
        before = sizes(seen.part)
        for label, ctx in seen.contexts(settings):
            log.caught.clear()
            outcome_for(seen.part, ctx, names_for(seen.part, ctx), before)
            tally.runs += 1
            tally.add(log.caught, f"{seen.place} ({seen.part.get('tool')}, {label})")


def scan_corpus(folder: Path, every: int, limit: int | None, settings: Settings) -> Tally:
    """Scan every `every`-th session of a corpus folder (the first `limit` of those)."""
    paths = session_paths(folder)[::every][:limit]
    tally = Tally()
    with failures_logged() as log:
        for path in paths:
            scan_session(path, tally, log, settings)
    return tally


def render(row: dict) -> str:
    """A corpus's row as text: totals, per compressor, each distinct failure."""
    lines = [
        f"{row['corpus']}: {row['failures']} failures in {row['runs']:,} runs "
        f"({row['tool_parts']:,} tool parts, {row['sessions']} sessions)"
    ]
    lines += [f"  {name}: {count}" for name, count in row["by_compressor"].items()]
    lines += [
        f"    {item['count']}× {item['compressor']} {item['error']}\n      e.g. {item['first']}"
        for item in row["distinct"]
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Scan the corpora and print the failures (exit 1 when there are any)."""
    parser = argparse.ArgumentParser(prog="python -m bench.runners.failures", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--corpus", type=corpus_folder, action="append", help="a corpus name or folder (repeatable; default: all)"
    )
    parser.add_argument("--every", type=int, default=1, help="scan every K-th session only")
    parser.add_argument("--sessions", type=int, default=None, help="at most N sessions per corpus")
    parser.add_argument("--json", action="store_true", help="one JSON line per corpus")
    args = parser.parse_args(argv)
    total = 0
    for folder in args.corpus or corpora().values():
        if not folder.is_dir():
            parser.error(f"{folder}: not a folder")
        row = scan_corpus(folder, max(args.every, 1), args.sessions, Settings()).summary(folder.name)
        total += row["failures"]
        print(orjson.dumps(row).decode() if args.json else render(row), flush=True)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
