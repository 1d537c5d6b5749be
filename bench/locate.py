"""The way back: for each quoted line a step could not see, what the context shows to find it.

Every step of every session is replayed with deepmem's defaults. A line a step quotes
from earlier output (`deepmem.support`) that its request no longer shows is *missing*.
For each missing line, the newest earlier output holding it is looked at as the request
shows it:

- `range`: a `[… lines A-B cut]` run of that output covers the line, so one call
  (`deepmem expand KEY --lines A-B`, or reading those lines again) brings it back;
- `key`: the output shows its marker's key but no run names the line's place (the whole
  output comes back with one `deep_expand`, the agent looks through it);
- `none`: nothing the request shows points at it.

    python -m bench.locate [--corpus DIR]... [--sessions N]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from bench.corpus import CORPORA, load_messages, session_paths
from deepmem.history import step_indexes, visible_text
from deepmem.markers import marker_keys
from deepmem.pipeline import apply_transform, plan_transform
from deepmem.support import quoted_lines, seen_text
from deepmem.text.fields import main_text
from deepmem.types import Message, Settings

CUT_RUN = re.compile(r"\[… lines (\d+)-(\d+) cut\]")
"""A run of cut lines, numbered in the original output."""


def line_number(text: str, line: str) -> int:
    """1-based number of the first line of `text` holding `line` (after `nl`'s or grep's
    numbering, say; 0 when none)."""
    for number, candidate in enumerate(text.split("\n"), 1):
        if line in candidate:
            return number
    return 0


def where_shown(raw: list[Message], sent: list[Message], line: str) -> str:
    """`range`, `key` or `none`: what the sent history shows of the newest output holding `line`."""
    for index in reversed(range(len(raw))):
        parts, shown = raw[index]["parts"], sent[index]["parts"]  # nudges come after, or in a message after
        for part, now in zip(reversed(parts), reversed(shown[: len(parts)]), strict=True):
            text = (main_text(part) or "") if part.get("type") == "tool" else ""
            number = line_number(text, line) if line in text else 0
            if not number:
                continue
            view = visible_text(now)
            if any(int(first) <= number <= int(last) for first, last in CUT_RUN.findall(view)):
                return "range"
            return "key" if marker_keys(view) else "none"
    return "none"


def session_counts(messages: list[Message], settings: Settings) -> Counter:
    """Quoted, missing and each way back, counted over the lines of every step of one session."""
    counts: Counter = Counter()
    for index in step_indexes(messages):
        raw = messages[:index]
        quoted = quoted_lines(raw, messages[index])
        if not quoted:
            continue
        sent = apply_transform(raw, plan_transform(raw, settings))
        seen = seen_text(sent)
        counts["quoted"] += len(quoted)
        for line in quoted:
            if line not in seen:
                counts["missing"] += 1
                counts[where_shown(raw, sent, line)] += 1
    return counts


def main(argv: list[str] | None = None) -> int:
    """Print, per corpus, the missing lines and how each could be found again."""
    parser = argparse.ArgumentParser(prog="python -m bench.locate", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, action="append", help="folder of exported sessions (repeatable; default: all three)")
    parser.add_argument("--sessions", type=int, help="only the first N sessions (by name) of each corpus")
    args = parser.parse_args(argv)
    print(f"{'corpus':<16}{'quoted':>8}{'missing':>9}{'range':>8}{'key':>6}{'none':>6}")
    for corpus in args.corpus or CORPORA:
        total: Counter = Counter()
        paths = session_paths(corpus, args.sessions)
        for number, path in enumerate(paths, 1):
            print(f"\r{number}/{len(paths)}", end="", file=sys.stderr, flush=True)
            total += session_counts(load_messages(path), Settings())
        print(file=sys.stderr)
        print(
            f"{corpus.name:<16}{total['quoted']:>8}{total['missing']:>9}"
            f"{total['range']:>8}{total['key']:>6}{total['none']:>6}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
