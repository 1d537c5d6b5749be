"""False positives of the shared-file redactor: every hit on every string of every part of real sessions.

    python -m bench.secrets_fp [--corpus DIR ...]

The corpora hold ordinary agent sessions on open-source repositories, so each hit is a
candidate false positive to read: one line per distinct hit (count, kind, the value, its
line, the first session), then the count per kind and the total. Prints, never asserts.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench.corpora import corpora, corpus_folder, load_messages, session_paths
from deepmem.redact import Redactor


def strings(value: Any) -> Iterator[str]:
    """Every string value inside a decoded JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def line_of(text: str, secret: str) -> str:
    """The line of `text` holding `secret`, shortened."""
    at = text.find(secret)
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start:end if end >= 0 else len(text)].strip()
    return line if len(line) <= 160 else line[:157] + "…"


def hits(folder: Path, redactor: Redactor) -> Iterator[tuple[str, str, str, str]]:
    """(session, kind, value, line) for every hit in the corpus folder."""
    for path in session_paths(folder):
        for message in load_messages(path):
            for part in message["parts"]:
                for text in strings(part):
                    found: list[tuple[str, str]] = []
                    redactor.text(text, found)
                    for kind, value in found:
                        yield path.stem, kind, value, line_of(text, value)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or folder (default: every corpus)")
    args = parser.parse_args()
    redactor = Redactor()
    total: Counter[str] = Counter()
    for folder in args.corpus or corpora().values():
        found = list(hits(folder, redactor))
        print(f"## {folder.name}: {len(found)} hits in {len({hit[0] for hit in found})} of "
              f"{len(session_paths(folder))} sessions (each distinct hit once, with its count and first session)")
        counts = Counter((kind, value, line) for _, kind, value, line in found)
        first = {(kind, value, line): session for session, kind, value, line in reversed(found)}
        for (kind, value, line), count in counts.most_common():
            print(f"{count:>5}  {kind}  {value[:40]!r}  {line}  [{first[kind, value, line]}]")
        total.update(kind for _, kind, _, _ in found)
    print("## per kind: " + (", ".join(f"{kind} {count}" for kind, count in total.most_common()) or "none"))
    print(f"## total hits: {sum(total.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
