"""Does memory help the next session? Precision and coverage of what injection shows, per corpus.

    python -m bench.cross_session [--corpus DIR ...] [--chart PATH]

Sessions are grouped by repository (`owner__repo-NUMBER` in the file name) and taken in
number order. For each session after a repository's first, the memory built by
checkpointing and dreaming the sessions before it is asked what the stable block and the
whisper (top hits for each user turn) would show. A shown entry is useful when it names a
file, symbol or command the session then touches in its tool calls (precision); coverage
is the share of the session's touched files that some stored entry names. The whisper is
swept over a minimum fused score: the chosen one (`WHISPER_MIN_SCORE`) is where precision
is highest without showing nothing. Prints one JSON line per corpus and threshold.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
from collections import defaultdict
from pathlib import Path

from deepmem.checkpoints.api import compact
from deepmem.checkpoints.dream import dream
from deepmem.memory import api
from deepmem.memory.consolidate import NAME
from deepmem.sessionio import read_session
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.touches import touches

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpus"
REPOSITORY = re.compile(r"__(?P<repo>[\w.-]+?)-(?P<number>\d+)\.json$")
THRESHOLDS = (-1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)


def by_repository(folder: Path) -> dict[str, list[Path]]:
    """Session files per repository, in issue-number order."""
    groups: dict[str, list[tuple[int, Path]]] = defaultdict(list)
    for path in sorted(folder.glob("*.json")):
        match = REPOSITORY.search(path.name)
        if match:
            groups[match["repo"]].append((int(match["number"]), path))
    return {repo: [path for _, path in sorted(items)] for repo, items in sorted(groups.items()) if len(items) > 1}


def user_turns(messages: list[dict]) -> list[str]:
    """The text of each user message typed by the user."""
    turns = []
    for message in messages:
        if message.get("info", {}).get("role") == "user":
            text = "\n".join(part.get("text", "") for part in message.get("parts", [])
                             if part.get("type") == "text" and not part.get("synthetic"))
            if text.strip():
                turns.append(text)
    return turns


def touched(messages: list[dict]) -> tuple[set[str], str]:
    """Files a session's tool calls read or change, and all its tool inputs as lowercase text."""
    files: set[str] = set()
    inputs = []
    for message in messages:
        for part in message.get("parts", []):
            if part.get("type") == "tool":
                found = touches(part)
                files.update(path for path in (*found.reads, *found.changed) if path)
                inputs.append(json.dumps(part.get("state", {}).get("input", {})).lower())
    return files, "\n".join(inputs)


def names(text: str) -> set[str]:
    """Code names and paths an entry mentions, lowercased, without call parentheses."""
    return {(match.group(1) or match.group(2)).lower().rstrip("()") for match in NAME.finditer(text)} - {""}


def useful(text: str, inputs: str) -> bool:
    """The entry names something the session's tool calls then use."""
    return any(name in inputs for name in names(text))


def covers(files: set[str], entries: list[str]) -> int:
    """How many of the files some entry names (by path or file name)."""
    named = {name for text in entries for name in names(text)}
    return sum(1 for path in files if any(name.endswith(Path(path).name.lower()) or path.lower().endswith(name)
                                          for name in named if "." in name or "/" in name))


def measure(folder: Path, base: Path) -> list[dict]:
    """Per threshold: whisper entries shown and useful, stable entries, coverage and memory tokens."""
    shown = {threshold: [0, 0, 0] for threshold in THRESHOLDS}
    stable_shown = stable_useful = files_total = files_named = turns = sessions = stable_tokens = 0
    for repo, paths in by_repository(folder).items():
        root = base / folder.name / repo
        root.mkdir(parents=True)
        for number, path in enumerate(paths):
            messages = read_session(str(path)).messages
            if number:
                stored = [entry.text for entry in api.entries(root, "project")]
                files, inputs = touched(messages)
                sessions += 1
                files_total += len(files)
                files_named += covers(files, stored)
                stable = [entry.text for entry in api.entries(root, "project") if entry.type in ("constraint", "decision")]
                stable_shown += len(stable)
                stable_useful += sum(useful(text, inputs) for text in stable)
                stable_tokens += estimate_tokens(api.stable_block(root))
                for turn in user_turns(messages):
                    turns += 1
                    hits = api.ranked(root, turn[:8_000], 3, "project") if stored else []
                    for threshold, counts in shown.items():
                        for hit in hits:
                            if hit.score >= threshold:
                                counts[0] += 1
                                counts[1] += useful(hit.entry.text, inputs)
                                counts[2] += estimate_tokens(hit.entry.text) + 8
            compact(root, path.stem, messages)
            dream(root)
    return [{"corpus": folder.name, "sessions": sessions, "user_turns": turns, "whisper_min_score": threshold,
             "whisper_shown_per_turn": round(count / max(turns, 1), 3),
             "whisper_precision": round(good / count, 3) if count else None,
             "stable_entries_per_session": round(stable_shown / max(sessions, 1), 3),
             "stable_precision": round(stable_useful / stable_shown, 3) if stable_shown else None,
             "coverage": round(files_named / max(files_total, 1), 3),
             "memory_tokens_per_request": round(stable_tokens / max(sessions, 1) + tokens / max(turns, 1), 1)}
            for threshold, (count, good, tokens) in shown.items()]


def chart(rows: list[dict], path: Path) -> None:
    """Whisper precision and entries shown per turn against the minimum score, one line per corpus."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, (left, right) = pyplot.subplots(1, 2, figsize=(9, 3.5))
    for corpus in sorted({row["corpus"] for row in rows}):
        mine = [row for row in rows if row["corpus"] == corpus]
        xs = [row["whisper_min_score"] for row in mine]
        left.plot(xs, [row["whisper_precision"] or 0 for row in mine], marker="o", label=corpus)
        right.plot(xs, [row["whisper_shown_per_turn"] for row in mine], marker="o", label=corpus)
    left.set(xlabel="whisper minimum fused score", ylabel="precision of injection")
    right.set(xlabel="whisper minimum fused score", ylabel="entries shown per user turn")
    left.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, nargs="*", default=sorted(p for p in CORPORA.glob("*") if p.is_dir()))
    parser.add_argument("--chart", type=Path, default=Path(__file__).parent / "results" / "cross_session.png")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="deepmem-cross-") as tmp:
        os.environ["DEEP_MEMORY_GLOBAL_ROOT"] = str(Path(tmp) / "global")
        for folder in args.corpus:
            for row in measure(folder, Path(tmp)):
                print(json.dumps(row))
                rows.append(row)
    chart(rows, args.chart)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
