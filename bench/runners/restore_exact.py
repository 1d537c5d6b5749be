"""Exact restore after a restart: `deepmem compress`, then `deepmem expand --session` in a new process.

    python -m bench.runners.restore_exact [--corpus DIR ...] [--limit N]

For every session of the shared corpora and the fixtures, both commands run as separate
processes on one project (originals sealed on disk, the key in a temporary data folder);
the restored session must equal the input byte for byte (both in deepmem's JSON encoding).
Prints the count and every session that differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.corpora import corpora, corpus_folder, session_paths
from deepmem.vault.sessionio import encode_json, read_session


def restored_exactly(path: Path, work: Path, env: dict[str, str]) -> bool:
    """Compress then expand the session in two processes; True when the result is the input's bytes."""
    compressed, restored = work / "compressed.json", work / "restored.json"
    for args in (["compress", str(path), "-o", str(compressed)], ["expand", "--session", str(compressed), "-o", str(restored)]):
        subprocess.run([sys.executable, "-m", "deepmem", *args, "--root", str(work)], check=True, env=env,
                       capture_output=True, timeout=600)
    return restored.read_bytes() == encode_json(read_session(str(path)).to_json())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, action="append", help="a corpus name or folder (default: every corpus)")
    parser.add_argument("--limit", type=int, help="sessions per folder")
    args = parser.parse_args()
    total, differ = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "XDG_DATA_HOME": str(Path(tmp) / "data")}
        for folder in args.corpus or corpora().values():
            for path in session_paths(folder, args.limit):
                work = Path(tmp) / f"{folder.name}-{path.stem}"
                work.mkdir()
                total += 1
                if not restored_exactly(path, work, env):
                    differ.append(f"{folder.name}/{path.name}")
    print(f"restored byte for byte in a new process: {total - len(differ)} of {total}")
    for name in differ:
        print(f"DIFFERS: {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
