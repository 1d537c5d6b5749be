"""One hash per corpus session of everything the transform sends, step by step.

A refactor that must not change outputs is checked by running this before and after and
comparing: the same hash per session means the same bytes at every step (the messages
after the transform: the plan's edits and its trailing nudges applied).

    python -m bench.runners.fingerprint [--corpus NAME|DIR] [--sessions N] [--out FILE] [--against FILE]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import orjson
import xxhash

from bench.corpora import DEFAULT, corpus_folder, load_messages, session_paths
from deepmem.project.config import load_settings
from deepmem.replay.loop import Deepmem, session_steps


def session_fingerprint(path: Path) -> str:
    """Hash of the transformed history at every assistant step of one session."""
    deepmem = Deepmem(load_settings(None))
    digest = xxhash.xxh3_128()
    for step in session_steps(load_messages(path)):
        digest.update(orjson.dumps(deepmem.messages(step.history), option=orjson.OPT_SORT_KEYS))
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    """Print (and optionally write or compare) the per-session fingerprints."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--out", type=Path, help="write the fingerprints as JSON")
    parser.add_argument("--against", type=Path, help="compare with fingerprints written earlier")
    args = parser.parse_args(argv)
    prints = {path.stem: session_fingerprint(path) for path in session_paths(args.corpus, args.sessions)}
    if args.out:
        args.out.write_bytes(orjson.dumps(prints, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    if not args.against:
        print(f"{len(prints)} sessions fingerprinted")
        return 0
    before = orjson.loads(args.against.read_bytes())
    changed = sorted(name for name, value in prints.items() if before.get(name) != value)
    for name in changed:
        print(f"changed: {name}")
    print(f"{len(prints) - len(changed)} of {len(prints)} sessions unchanged")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
