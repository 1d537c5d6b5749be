"""Checkpoint benchmark over the swe-gemini3 corpus: files-modified recall, unresolved errors
kept, and the time to checkpoint a ~1M-token session.

    python -m bench.runners.checkpoint [CORPUS]

Ground truth is independent of the extractors but for what a command's program and
subcommands are (`deepmem.extractors.outcomes.command_key`): the files of each session's
final submitted diff (the last tool output holding `diff --git` lines), and failing bash
calls (non-zero `<returncode>`) still live at the end: neither their exact command nor any
command with the same program and subcommands ran successfully after them.

Recall is printed twice: over all diff files, and over the diff files some tool call names.
The difference is files no tool call ever touched: the benchmark environment's own edits
(astropy's `pyproject.toml`, sphinx's `setup.py` and `tox.ini`, present before the agent's
first step) and files a program created as a side effect (Django migrations written by a
reproduction script). Listing those would break the rule "no listed file that no tool call
touched", so the extractor cannot and should not find them.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from bench.corpora import DEFAULT, corpus_folder
from deepmem.checkpoints.api import compact
from deepmem.checkpoints.render import checkpoint_sections, render_checkpoint
from deepmem.extractors import extract
from deepmem.extractors.calls import NO_MATCH_PROGRAMS
from deepmem.extractors.outcomes import command_key
from deepmem.extractors.statements import sentences
from deepmem.history import history_tokens
from deepmem.project.folder import Project
from deepmem.toolcalls.python_writes import python_writes

DIFF_FILE = re.compile(r"(?m)^diff --git a/(\S+) b/")
RETURNCODE = re.compile(r"<returncode>(-?\d+)</returncode>")
TARGET_TOKENS = 1_000_000


def tool_states(messages: list[dict]) -> list[dict]:
    """The state of every tool part, in order."""
    return [p.get("state") or {} for m in messages for p in m["parts"] if p.get("type") == "tool"]


def diff_files(messages: list[dict]) -> list[str]:
    """Files of the last tool output that holds `diff --git` lines."""
    outputs = [str(s.get("output") or "") for s in tool_states(messages)]
    final = next((o for o in reversed(outputs) if "diff --git" in o), "")
    return sorted(set(DIFF_FILE.findall(final)))


def touched(path: str, messages: list[dict]) -> bool:
    """True when some tool call's input names the file (by path or by file name)."""
    inputs = [orjson.dumps(s.get("input")).decode() for s in tool_states(messages)]
    name = path.rsplit("/", 1)[-1]
    return any(path in text or name in text for text in inputs)


def unresolved_commands(messages: list[dict]) -> list[str]:
    """Failing bash commands after which neither they nor a command of the same program and subcommands exited 0."""
    status: dict[str, bool] = {}
    for state in tool_states(messages):
        command = (state.get("input") or {}).get("command")
        if not isinstance(command, str):
            continue
        match = RETURNCODE.search(str(state.get("output") or ""))
        code = int(match.group(1)) if match else None
        program = command.split()[0].rsplit("/", 1)[-1] if command.split() else ""
        failed = state.get("status") == "error" or (code not in (None, 0) and not (code == 1 and program in NO_MATCH_PROGRAMS))
        if failed:
            status[command] = True
        elif code == 0:
            status = {seen: failing and command_key(seen) != command_key(command) for seen, failing in status.items()}
            status[command] = False
    return [command for command, failing in status.items() if failing]


def measure(paths: list[Path]) -> None:
    """Print per-corpus recall figures and error coverage."""
    hit = total = touched_total = touched_hit = untouched_listed = 0
    errors_total = errors_kept = 0
    misses: list[str] = []
    for path in paths:
        messages = orjson.loads(path.read_bytes())["messages"]
        findings = extract(messages)
        listed = {f.path for f in findings.files}
        for file in diff_files(messages):
            total += 1
            hit += file in listed
            if touched(file, messages):
                touched_total += 1
                touched_hit += file in listed
                if file not in listed:
                    misses.append(f"{path.name}: {file}")
        untouched = sorted(file for file in listed if not touched(file, messages))
        untouched_listed += len(untouched)
        misses += [f"{path.name}: listed but untouched: {file}" for file in untouched]
        errors_section = checkpoint_sections(render_checkpoint(findings, path.stem))["Errors"]
        kept = [line.split("`", 2)[1].rstrip("…") for line in errors_section if line.startswith("UNRESOLVED: ")]
        for command in unresolved_commands(messages):
            errors_total += 1
            label = " ".join(command.split())
            errors_kept += any(label.startswith(k) for k in kept)
    print(f"sessions                              {len(paths)}")
    print(f"files-modified recall (all diff files) {hit}/{total} = {hit / max(total, 1):.3f}")
    print(f"recall (diff files a tool call named)  {touched_hit}/{touched_total} = {touched_hit / max(touched_total, 1):.3f}")
    print(f"listed files no tool call touched      {untouched_listed}")
    print(f"unresolved errors in checkpoint Errors {errors_kept}/{errors_total}")
    for miss in misses:
        print(f"  missed: {miss}")


def long_session(paths: list[Path]) -> list[dict]:
    """Corpus sessions concatenated until the history holds about TARGET_TOKENS tokens."""
    messages: list[dict] = []
    for path in paths * 4:
        messages += orjson.loads(path.read_bytes())["messages"]
        if history_tokens(messages) >= TARGET_TOKENS:
            break
    return messages


def time_long_session(paths: list[Path]) -> None:
    """Time extract() and a full compact() (writes included) on a ~1M-token session, cold caches."""
    messages = long_session(paths)
    tokens = history_tokens(messages)
    with tempfile.TemporaryDirectory() as root:
        extract_times = [cold_run(extract, messages) for _ in range(3)]
        compact_times = [cold_run(compact, Project.load(root), "ses_bench", messages) for _ in range(3)]
    print(f"long session: {len(messages)} messages, {tokens:,} estimated tokens; load average {os.getloadavg()[0]:.1f}")
    print(f"extract, best of 3 (wall / cpu)        {min(extract_times)[0]:.3f} s / {min(extract_times)[1]:.3f} s")
    print(f"compact incl. writes (wall / cpu)      {min(compact_times)[0]:.3f} s / {min(compact_times)[1]:.3f} s")


def cold_run(function: Callable[..., object], *args: object) -> tuple[float, float]:
    """(wall, cpu) seconds of one call with the extractors' caches emptied first."""
    python_writes.cache_clear()
    sentences.cache_clear()
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    if isinstance(result, dict) and result.get("error"):
        raise SystemExit(f"compact failed: {result['error']}")
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    """Run both measurements over the corpus given (default: the shared corpus)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", default=DEFAULT, type=corpus_folder, help="a corpus name or folder")
    paths = sorted(parser.parse_args(argv).corpus.glob("*__*.json"))
    measure(paths)
    time_long_session(paths)


if __name__ == "__main__":
    main()
