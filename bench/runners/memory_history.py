"""Does memory carry a project forward? A corpus replayed in time order, measured before each session.

    python -m bench.runners.memory_history [--corpus DIR ...] [--limit N] [--out DIR]

Sessions of one repository are taken in the order they started (the manifest's `start`, else
the first message's time), never by file name. Memory is built as the product builds it, in a
temporary project folder: `compact` (the checkpoint) at each session's end, which runs
`/dream` on its own schedule. Before each session, what the bridge would give it at its start
(stable block with the resume block, and the whisper on its first user message) is held
against what the session then does:

- ceiling: share of the files it reads or changes that an earlier session touched;
- file recall at start: of those, the share the start text names;
- file precision: of the files the start text names, the share the session touches;
- item precision: of the files, code names and commands shown, the share its tool calls use;
- episodes: for sessions editing a file an earlier session edited, whether the top 3 of a
  memory search on the first user message name such a file;
- commands: build, test and lint commands that succeeded in an earlier session and that this
  one runs: the share the start text names;
- cost: start-text tokens (median); memory tokens per request as `bench.runners.cross_session` counts
  them (memory's part of the stable block plus the mean whisper of a user turn), and as the
  context holds them (the block plus every whisper so far; and with the resume block too);
  whether the stable block is the same bytes at the session's end.

Claude-entire is also reported as its early and late halves, to see that nothing is fitted to
one part of the history. Prints a table, writes `bench/results/memory_history.json` and a chart.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from bench.corpora import REPOSITORY, corpora, corpus_folder
from bench.report import RESULTS
from deepmem.bridge.engine import Engine
from deepmem.checkpoints.api import compact
from deepmem.extractors.calls import build_timeline
from deepmem.extractors.context import PATH
from deepmem.extractors.files import project_path
from deepmem.extractors.outcomes import build_command
from deepmem.history import is_user_typed
from deepmem.memory import api
from deepmem.memory.consolidate import NAME
from deepmem.memory.entries import CONTROL
from deepmem.memory.episodes import episodes
from deepmem.memory.search import MAX_QUERY_CHARS
from deepmem.project.folder import Project
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.touches import call_touches
from deepmem.vault.sessionio import read_session

FIXTURES = REPOSITORY / "fixtures"
LABEL_FILES = ("memory_labels.json", "memory_history_labels.json")
SUFFIX = re.compile(r"(?: \((?:in|also:) [^()]*\))+$")
"""What a memory adds to the sentence it was said as: the file it concerns, the names it also holds for."""
TARGETS = {"file_recall": 0.45, "file_precision": 0.40, "start_tokens_median": 1_500,
           "memory_tokens_per_request": 400, "episodes_top3": 0.7, "commands_known": 0.8}


class Seen(msgspec.Struct):
    """What one session does: files it touches and changes, its commands, its first request, its size."""

    files: set[str]
    changed: set[str]
    commands: list[tuple[str, bool]]
    """Build, test and lint command keys in order of use, with whether the run succeeded."""
    inputs: str
    first_request: str
    requests: list[int]
    """Per LLM request, how many user turns came before it."""
    turns: list[str]


def what_it_does(messages: list[dict[str, Any]]) -> Seen:
    """Files (relative to the session's project), changed files, build commands, first request, requests."""
    timeline = build_timeline(messages)
    files: set[str] = set()
    changed: set[str] = set()
    commands: list[tuple[str, bool]] = []
    inputs = []
    for call in timeline.calls:
        found = call_touches(call.tool, call.input)
        if call.status != "error":
            files.update(project_path(path, call.cwd, timeline.root) for path in found.reads)
            edits = {project_path(path, call.cwd, timeline.root) for path in found.changed}
            files |= edits
            changed |= edits
        inputs.append(json.dumps(call.input, ensure_ascii=False))
        key = build_command(call.command) if call.command else ""
        if key:
            commands.append((key, not call.failed))
    turns, requests, before = [], [], 0
    for message in messages:
        role = message.get("info", {}).get("role")
        if role == "user":
            text = "\n".join(part.get("text", "") for part in message.get("parts", [])
                             if is_user_typed(message, part)).strip()
            if text:
                turns.append(text)
                before += 1
        elif role == "assistant":
            requests.append(before)
    files = {path for path in files if not path.startswith("/")} or files
    return Seen(files, changed, commands, "\n".join(inputs).lower(), turns[0] if turns else "", requests, turns)


def started(path: Path, manifest: dict[str, dict[str, Any]]) -> str:
    """A session's start time: the manifest's `start`, else its first message's creation time."""
    entry = manifest.get(path.name, {})
    if entry.get("start"):
        return str(entry["start"])
    messages = read_session(str(path)).messages
    created = (messages[0].get("info", {}).get("time") or {}).get("created") if messages else None
    return datetime.fromtimestamp(created / 1000, UTC).isoformat() if isinstance(created, int | float) else ""


def histories(folder: Path) -> dict[str, list[Path]]:
    """Per repository, its session files in the order they started (repositories with one session left out)."""
    listed = json.loads((folder / "manifest.json").read_text())["sessions"]
    manifest = {entry["file"]: entry for entry in listed}
    groups: dict[str, list[tuple[str, str, Path]]] = {}
    for name, entry in manifest.items():
        path = folder / name
        if path.is_file():
            groups.setdefault(str(entry.get("repo") or "project"), []).append((started(path, manifest), name, path))
    return {repo: [path for *_, path in sorted(items)] for repo, items in sorted(groups.items()) if len(items) > 1}


def named_paths(text: str) -> set[str]:
    """The file paths a text names (relative form, without a leading `./`)."""
    return {match.removeprefix("./") for match in PATH.findall(text)}


def matches(path: str, named: str) -> bool:
    """A touched file is the named one: the same path, or the named path is its tail."""
    return path == named or path.endswith("/" + named)


def shown_items(text: str) -> set[str]:
    """Files, code names and commands a text shows, lowercased."""
    items = {(match.group(1) or match.group(2)).lower().rstrip("()") for match in NAME.finditer(text)}
    return {item for item in items if len(item) > 2} | {path.lower() for path in named_paths(text)}


def session_time(messages: list[dict[str, Any]]) -> datetime:
    """When the session started (its first message), for the whisper's relative ages."""
    created = (messages[0].get("info", {}).get("time") or {}).get("created") if messages else None
    return datetime.fromtimestamp(created / 1000, UTC) if isinstance(created, int | float) else datetime(2026, 1, 1,
                                                                                                        tzinfo=UTC)


def whisper(root: Project, query: str, now: datetime, shown: str) -> str:
    """The whisper text the bridge would append to a user message ('' when silent), leaving out what was `shown`."""
    return (api.whisper(root, query, now, shown) or "") if query.strip() else ""


def measure_session(root: Project, sid: str, messages: list[dict[str, Any]], seen: Seen,
                    before: dict[str, Any]) -> dict[str, Any]:
    """The figures of one session against the memory built from the sessions before it."""
    now = session_time(messages)
    stable = Engine(root).injection.start_block(sid, seen.first_request)
    first = whisper(root, seen.first_request, now, stable)
    start = "\n\n".join(part for part in (stable, first) if part)
    ceiling = {path for path in seen.files if path in before["touched"]}
    named = named_paths(start)
    recalled = {path for path in ceiling if any(matches(path, name) for name in named)}
    named_used = {name for name in named if any(matches(path, name) for path in seen.files)}
    items = shown_items(start)
    shared_edits = seen.changed & before["changed"]
    record: dict[str, Any] = {
        "session": sid, "files": len(seen.files), "ceiling": len(ceiling), "recalled": len(recalled),
        "named_files": len(named), "named_used": len(named_used),
        "items": len(items), "items_used": sum(item in seen.inputs for item in items),
        "start_tokens": estimate_tokens(start), "episode_eligible": bool(shared_edits), "episode_found": False,
    }
    if shared_edits:
        query = CONTROL.sub(" ", seen.first_request)[:MAX_QUERY_CHARS]
        hits = api.search(root, query, 3, "all") if query.strip() else []
        record["episode_found"] = any(matches(path, name) for hit in hits for name in named_paths(hit["text"])
                                      for path in shared_edits)
    worked = [key for key in dict.fromkeys(key for key, _ in seen.commands) if key in before["worked"]]
    record["commands"] = len(worked)
    record["commands_known"] = sum(key in start for key in worked)
    shown, whispers = start, [estimate_tokens(first) if first else 0]
    for turn in seen.turns[1:]:
        text = whisper(root, turn, now, shown)
        shown += "\n" + text
        whispers.append(estimate_tokens(text) if text else 0)
    memory_block, whole = estimate_tokens(api.stable_block(root)), estimate_tokens(stable)
    record["memory_turn_tokens"] = memory_block + statistics.mean(whispers)
    record["memory_tokens"] = sum(memory_block + sum(whispers[:count]) for count in seen.requests)
    record["block_tokens"] = sum(whole + sum(whispers[:count]) for count in seen.requests)
    record["requests"] = len(seen.requests)
    record["stable_bytes"] = stable
    return record


def replay(paths: list[Path], root: Project, limit: int | None) -> list[dict[str, Any]]:
    """Replay one repository's sessions in order: measure each, then checkpoint it (dream runs on schedule)."""
    before: dict[str, Any] = {"touched": set(), "changed": set(), "worked": set()}
    records = []
    for number, path in enumerate(paths[:limit]):
        messages = read_session(str(path)).messages
        seen = what_it_does(messages)
        sid = path.stem
        if number:
            records.append(measure_session(root, sid, messages, seen, before))
        compact(root, sid, messages)
        if number:
            again = Engine(root).injection.system([], sid).append
            records[-1]["stable_same"] = (again[0] if again else "") == records[-1].pop("stable_bytes")
        before["touched"] |= seen.files
        before["changed"] |= seen.changed
        before["worked"] |= {key for key, ok in seen.commands if ok}
    return records


def ratio(part: float, whole: float) -> float | None:
    """part / whole to three places, None when there is nothing to divide."""
    return round(part / whole, 3) if whole else None


def summarise(name: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """The corpus figures from per-session records."""
    total = lambda key: sum(record[key] for record in records)  # noqa: E731
    eligible = [record for record in records if record["episode_eligible"]]
    return {
        "corpus": name, "sessions": len(records),
        "ceiling": ratio(total("ceiling"), total("files")),
        "file_recall": ratio(total("recalled"), total("ceiling")),
        "file_precision": ratio(total("named_used"), total("named_files")),
        "item_precision": ratio(total("items_used"), total("items")),
        "episodes_top3": ratio(sum(record["episode_found"] for record in eligible), len(eligible)),
        "episode_sessions": len(eligible),
        "commands_known": ratio(total("commands_known"), total("commands")),
        "commands": total("commands"),
        "start_tokens_median": statistics.median(record["start_tokens"] for record in records) if records else None,
        "memory_tokens_per_request": round(total("memory_turn_tokens") / len(records), 1) if records else None,
        "memory_held_per_request": round(total("memory_tokens") / total("requests"), 1) if total("requests") else None,
        "with_resume_held_per_request": round(total("block_tokens") / total("requests"), 1) if total("requests") else None,
        "stable_block_same": ratio(sum(record["stable_same"] for record in records), len(records)),
    }


def labels() -> dict[str, bool]:
    """Hand labels of memory texts (keep or not), from the fixtures of the SWE corpora and of the history."""
    return {item["text"]: item["keep"] for name in LABEL_FILES
            for item in json.loads((FIXTURES / name).read_text())["labels"]}


def memory_file_stats(root: Project, known: dict[str, bool]) -> dict[str, Any]:
    """Entries of the project's MEMORY.md per type, its size, and how many of its labelled entries last."""
    entries = api.entries(root, "project")
    kinds: dict[str, int] = {}
    for entry in entries:
        kinds[entry.type] = kinds.get(entry.type, 0) + 1
    said = [SUFFIX.sub("", entry.text) for entry in entries]
    labelled = [known[text] for text in said if text in known]
    path = root / ".deep-memory" / "MEMORY.md"
    return {"entries": len(entries), "by_type": kinds, "bytes": path.stat().st_size if path.is_file() else 0,
            "labelled": len(labelled), "lasting": sum(labelled), "episodes": len(episodes(root))}


def measure_corpus(folder: Path, base: Path, limit: int | None) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Rows for a corpus (and, for one long history, its early and late halves) and its final MEMORY.md."""
    records, memory = [], {}
    for repo, paths in histories(folder).items():
        root = Project.load(base / folder.name / re.sub(r"[^\w.-]", "_", repo))
        root.root.mkdir(parents=True)
        os.environ["DEEP_MEMORY_GLOBAL_ROOT"] = str(root / "global")
        records += replay(paths, root, limit)
        memory[repo] = memory_file_stats(root, labels())
    rows = [summarise(folder.name, records)]
    if len(memory) == 1 and len(records) >= 20:
        half = len(records) // 2
        rows += [summarise(f"{folder.name} (early)", records[:half]), summarise(f"{folder.name} (late)", records[half:])]
    return rows, memory


def chart(rows: list[dict[str, Any]], path: Path) -> None:
    """The shares against their targets, one group of bars per corpus."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figures = ("ceiling", "file_recall", "file_precision", "item_precision", "episodes_top3", "commands_known")
    figure, axes = pyplot.subplots(1, 2, figsize=(13, 4), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / max(len(rows), 1)
    for number, row in enumerate(rows):
        xs = [slot + number * width for slot in range(len(figures))]
        axes[0].bar(xs, [row[name] or 0 for name in figures], width, label=row["corpus"])
        axes[1].bar([slot + number * width for slot in range(2)],
                    [row["start_tokens_median"] or 0, row["memory_tokens_per_request"] or 0], width)
    for slot, name in enumerate(figures):
        if name in TARGETS:
            axes[0].hlines(TARGETS[name], slot - 0.1, slot + 0.8, colors="black", linestyles="--", linewidth=1)
    for slot, name in enumerate(("start_tokens_median", "memory_tokens_per_request")):
        axes[1].hlines(TARGETS[name], slot - 0.1, slot + 0.8, colors="black", linestyles="--", linewidth=1)
    axes[0].set_xticks([slot + 0.4 - width / 2 for slot in range(len(figures))], figures, rotation=20)
    axes[0].set(ylabel="share", ylim=(0, 1))
    axes[0].legend(fontsize=8)
    axes[1].set_xticks([0.4 - width / 2, 1.4 - width / 2], ["start tokens (median)", "memory tokens / request"],
                       rotation=10)
    axes[1].set(ylabel="tokens")
    figure.suptitle("Memory before each session (dashed: targets)")
    figure.tight_layout()
    figure.savefig(path, dpi=100)


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    keys = [key for key in rows[0] if key != "corpus"]
    lines = ["| corpus | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    lines += ["| " + row["corpus"] + " | " + " | ".join("–" if row[key] is None else str(row[key]) for key in keys)
              + " |" for row in rows]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, nargs="*", help="corpus names or folders (default: the shared corpora)",
                        default=[folder for name, folder in corpora().items() if name != "fixtures"])
    parser.add_argument("--limit", type=int, default=None, help="sessions per repository (for a quick look)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for memory_history.json and .png")
    args = parser.parse_args()
    rows, memory = [], {}
    with tempfile.TemporaryDirectory(prefix="deepmem-history-") as tmp:
        for folder in args.corpus:
            if not (folder / "manifest.json").is_file():
                parser.error(f"{folder}: no manifest.json (a corpus folder holds one)")
            found, memory[folder.name] = measure_corpus(folder, Path(tmp), args.limit)
            rows += found
    print(table(rows))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "memory_history.json").write_text(json.dumps({"rows": rows, "memory": memory, "targets": TARGETS},
                                                             indent=1, sort_keys=True) + "\n")
    chart(rows, args.out / "memory_history.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
