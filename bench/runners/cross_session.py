"""Does memory help the next session? Precision and coverage of what injection shows, per corpus.

    python -m bench.runners.cross_session [--corpus DIR ...] [--chart PATH]

Sessions are grouped by repository (`owner__repo-NUMBER` in the file name) and taken in
number order. For each session after a repository's first, the memory built by
checkpointing and dreaming the sessions before it is asked what the stable block and the
whisper (top hits for each user turn) would show. A shown entry is useful when it names a
file, symbol or command the session then touches in its tool calls (precision); coverage
is the share of the session's touched files that some stored entry names. The whisper is
swept over a minimum fused score. The rule: the threshold is the one with the highest
precision × share of the ungated whisper's useful entries it keeps on one corpus
(`--tune-on`, swe-gemini3), and it must do no worse than no threshold on each other corpus.
Prints one JSON line per corpus and threshold, then the choice.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

from bench.corpora import SHARED
from bench.report import RESULTS
from deepmem.checkpoints.api import compact
from deepmem.checkpoints.dream import dream
from deepmem.memory import api, inject
from deepmem.memory.consolidate import NAME
from deepmem.project.folder import Project
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.touches import touches
from deepmem.vault.sessionio import read_session

REPOSITORY = re.compile(r"__(?P<repo>[\w.-]+?)-(?P<number>\d+)\.json$")
NO_GATE = float("-inf")
THRESHOLDS = (NO_GATE, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
"""Minimum fused scores swept; NO_GATE is the whisper's relevance test alone."""
TUNE_ON = "swe-gemini3"
"""The corpus the threshold is chosen on; the others only check it."""
NOW = datetime(2026, 1, 1, tzinfo=UTC)


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


def files_named(files: set[str], texts: list[str]) -> set[str]:
    """The files some text names (by path or file name)."""
    named = {name for text in texts for name in names(text) if "." in name or "/" in name}
    return {path for path in files if any(name.endswith(Path(path).name.lower()) or path.lower().endswith(name)
                                          for name in named)}


def covers(files: set[str], entries: list[str]) -> int:
    """How many of the files some entry names (by path or file name)."""
    return len(files_named(files, entries))


def measure(folder: Path, base: Path) -> list[dict]:
    """Per threshold: whisper entries shown and useful, the files they name, stable entries, store coverage
    and memory tokens per request."""
    shown = {threshold: [0, 0, 0, 0] for threshold in THRESHOLDS}
    stable_shown = stable_useful = files_total = store_named = turns = sessions = stable_tokens = 0
    for repo, paths in by_repository(folder).items():
        root = Project.load(base / folder.name / repo)
        root.root.mkdir(parents=True)
        for number, path in enumerate(paths):
            messages = read_session(str(path)).messages
            if number:
                stored = [entry.text for entry in api.entries(root, "project")]
                files, inputs = touched(messages)
                sessions += 1
                files_total += len(files)
                store_named += covers(files, stored)
                stable = [entry.text for entry in api.entries(root, "project") if entry.type in ("constraint", "decision")]
                stable_shown += len(stable)
                stable_useful += sum(useful(text, inputs) for text in stable)
                stable_tokens += estimate_tokens(api.stable_block(root))
                whispered: dict[float, list[str]] = {threshold: [] for threshold in THRESHOLDS}
                for turn in user_turns(messages):
                    turns += 1
                    hits = api.whisper_hits(root, turn, NO_GATE) if stored else []
                    for threshold, counts in shown.items():
                        kept = [hit for hit in hits if hit.score >= threshold]
                        text = inject.whisper_text([(hit.entry, hit.score) for hit in kept], NOW)
                        counts[0] += len(kept)
                        counts[1] += sum(useful(hit.entry.text, inputs) for hit in kept)
                        counts[2] += estimate_tokens(text) if text else 0
                        whispered[threshold].extend(hit.entry.text for hit in kept)
                for threshold, texts in whispered.items():
                    shown[threshold][3] += len(files_named(files, texts))
            compact(root, path.stem, messages)
            dream(root)
    ungated_useful = shown[NO_GATE][1]
    return [{"corpus": folder.name, "sessions": sessions, "user_turns": turns,
             "whisper_min_score": None if threshold == NO_GATE else threshold,
             "whisper_shown_per_turn": round(count / max(turns, 1), 3),
             "whisper_precision": round(good / count, 3) if count else None,
             "whisper_useful_kept": round(good / ungated_useful, 3) if ungated_useful else None,
             "whisper_coverage": round(named / max(files_total, 1), 4),
             "stable_entries_per_session": round(stable_shown / max(sessions, 1), 3),
             "stable_precision": round(stable_useful / stable_shown, 3) if stable_shown else None,
             "coverage": round(store_named / max(files_total, 1), 3),
             "whisper_tokens_per_turn": round(tokens / max(turns, 1), 1),
             "memory_tokens_per_request": round(stable_tokens / max(sessions, 1) + tokens / max(turns, 1), 1)}
            for threshold, (count, good, tokens, named) in shown.items()]


def merit(row: dict) -> float:
    """Precision of the whisper times the share of its useful entries a threshold keeps (0 when it shows nothing)."""
    return (row["whisper_precision"] or 0.0) * (row["whisper_useful_kept"] or 0.0)


def choose(rows: list[dict], corpus: str) -> tuple[float | None, dict[str, bool]]:
    """The threshold with the highest merit on `corpus` (the lowest on ties), and per other corpus whether
    its merit there is at least the ungated whisper's."""
    mine = [row for row in rows if row["corpus"] == corpus]
    best = max(mine, key=lambda row: (round(merit(row), 6), -(row["whisper_min_score"] if row["whisper_min_score"]
                                                               is not None else NO_GATE)))
    threshold = best["whisper_min_score"]
    holds = {}
    for other in sorted({row["corpus"] for row in rows} - {corpus}):
        theirs = {row["whisper_min_score"]: row for row in rows if row["corpus"] == other}
        holds[other] = merit(theirs[threshold]) >= merit(theirs[None])
    return threshold, holds


def chart(rows: list[dict], path: Path, chosen: float | None) -> None:
    """Whisper precision, coverage of touched files and merit against the minimum score, one line per corpus."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(1, 3, figsize=(13, 3.6))
    gated = [row for row in rows if row["whisper_min_score"] is not None]
    for corpus in sorted({row["corpus"] for row in gated}):
        mine = [row for row in gated if row["corpus"] == corpus]
        xs = [row["whisper_min_score"] for row in mine]
        precision = [math.nan if row["whisper_precision"] is None else row["whisper_precision"] for row in mine]
        axes[0].plot(xs, precision, marker="o", label=corpus)
        axes[1].plot(xs, [row["whisper_coverage"] for row in mine], marker="o", label=corpus)
        axes[2].plot(xs, [merit(row) for row in mine], marker="o", label=corpus)
    labels = ("precision of injection", "coverage (touched files a whisper names)", "precision × useful kept")
    for axis, label in zip(axes, labels, strict=True):
        axis.set(xlabel="whisper minimum fused score", ylabel=label)
        if chosen is not None:
            axis.axvline(chosen, color="grey", linestyle="--", linewidth=1)
    axes[0].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, nargs="*", default=sorted(p for p in SHARED.glob("*") if p.is_dir()))
    parser.add_argument("--chart", type=Path, default=RESULTS / "cross_session.png")
    parser.add_argument("--tune-on", default=TUNE_ON, help="the corpus the threshold is chosen on")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="deepmem-cross-") as tmp:
        os.environ["DEEP_MEMORY_GLOBAL_ROOT"] = str(Path(tmp) / "global")
        for folder in args.corpus:
            for row in measure(folder, Path(tmp)):
                print(json.dumps(row))
                rows.append(row)
    threshold, holds = choose(rows, args.tune_on)
    print(json.dumps({"chosen_on": args.tune_on, "whisper_min_score": threshold, "no_worse_than_ungated": holds}))
    chart(rows, args.chart, threshold)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
