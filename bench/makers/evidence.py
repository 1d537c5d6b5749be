"""Build the fidelity gate's evidence fixtures from corpus sessions.

    python -m bench.makers.evidence [--corpus DIR] [--out fixtures/evidence] [--count 10]

Evidence is what a compressed session must still show (or restore through a marker):
error lines (the last line of each traceback, lines with `Error:` or `FAILED`), failing
test names, the paths of files the session edited (sed -i, redirections, Python scripts
that open files for writing, the final `git diff`) and exit codes
(`<returncode>N</returncode>`). Each item names the part that held it. The chosen
sessions are copied (compact JSON) under `sessions/`, the items into `evidence.json`.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson

from bench.corpora import DEFAULT, REPOSITORY, corpus_folder, load_messages, session_paths
from deepmem.types import Message, Part
from deepmem.vault.sessionio import encode_json
from deepmem.vault.writer import write_given

FIXTURES = REPOSITORY / "fixtures" / "evidence"
MAX_SESSION_BYTES = 300_000
MAX_TOTAL_BYTES = 2_800_000
MAX_ITEM_CHARS = 200
MIN_ITEM_CHARS = 8

EXIT_CODE = re.compile(r"<returncode>-?\d+</returncode>")
ERROR_LINE = re.compile(r"Error:|\bFAILED\b|^(?:FAIL|ERROR):")
SOURCE_LINE = re.compile(
    r"^(?:[+-]|\s*\d+\s|[\w./-]+[:-]\d+[:-]|@@.*?@@)?\s*(?:except|raise|class|def|from|import|try)\b|^\s*#"
)
"""Code quoted in an output (a listing, a diff, grep hits) rather than an error that happened."""
EXCEPTION_LINE = re.compile(r"^[\w.]+(?::\s.*)?$")
PYTEST_FAILED = re.compile(r"^FAILED (\S+::\S+)|^(\S+::\S+) (?:FAILED|ERROR)\b")
UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR): (\w+ \([\w.]+\))")
PATH = r"[\w.][\w./-]*\.\w+"
REDIRECT = re.compile(rf"(?<![\d&>-])>>?\s*['\"]?({PATH})")
PYTHON_WRITE = re.compile(rf"open\(\s*['\"]({PATH})['\"]\s*,\s*['\"][wa]")
GIT_DIFF = re.compile(rf"^diff --git a/({PATH}) b/", re.MULTILINE)
SEGMENT = re.compile(r"&&|\|\||;|\|")


def clip(line: str) -> str:
    """An evidence string from a line: stripped, cut to its first MAX_ITEM_CHARS characters."""
    return line.strip()[:MAX_ITEM_CHARS].rstrip()


def traceback_ends(lines: list[str]) -> Iterator[str]:
    """The exception line closing each `Traceback (most recent call last):` block."""
    inside = False
    for line in lines:
        if line.startswith("Traceback (most recent call last):"):
            inside = True
        elif inside and line.strip() and not line[0].isspace():
            inside = False
            if EXCEPTION_LINE.match(line):
                yield line


def error_lines(output: str) -> Iterator[tuple[str, str]]:
    """(kind, text) for error lines and failing test names in a command's output."""
    lines = output.splitlines()
    for line in traceback_ends(lines):
        yield "error line", clip(line)
    for line in lines:
        if ERROR_LINE.search(line) and not SOURCE_LINE.match(line):
            yield "error line", clip(line)
        match = PYTEST_FAILED.match(line) or UNITTEST_FAILED.match(line)
        if match:
            yield "failing test", next(group for group in match.groups() if group)


def edited_paths(command: str) -> Iterator[str]:
    """Files a shell command writes: `sed -i … FILE`, `> FILE`, `tee FILE`, `open(FILE, 'w')`."""
    heredoc_free = command.split("<<", 1)[0] + "\n" + "\n".join(
        line for line in command.splitlines()[1:] if "<<" in line or line.startswith(("cat", "echo", "printf"))
    )
    for segment in SEGMENT.split(heredoc_free):
        words = _words(segment)
        if words[:2] == ["sed", "-i"] or (words[:1] == ["sed"] and "-i" in words):
            yield from (word for word in words[2:] if re.fullmatch(PATH, word))
        if words[:1] == ["tee"]:
            yield from (word for word in words[1:] if re.fullmatch(PATH, word))
    yield from REDIRECT.findall(heredoc_free)
    yield from PYTHON_WRITE.findall(command)


def _words(segment: str) -> list[str]:
    try:
        return shlex.split(segment.split("\n", 1)[0])
    except ValueError:
        return segment.split()


def part_evidence(part: Part, final: bool) -> Iterator[tuple[str, str]]:
    """(kind, text) items held by one bash tool part; `final` adds the git diff's file paths."""
    state = part.get("state") or {}
    command = (state.get("input") or {}).get("command")
    if isinstance(command, str):
        for path in edited_paths(command):
            yield "edited path", path
    output = state.get("output") if isinstance(state.get("output"), str) else state.get("error")
    if not isinstance(output, str):
        return
    for code in EXIT_CODE.findall(output):
        yield "exit code", code
    yield from error_lines(output)
    if final:
        for path in GIT_DIFF.findall(output):
            yield "edited path", path


def session_evidence(messages: list[Message]) -> list[dict[str, str]]:
    """Every evidence item of a session, once per part that holds it, in order."""
    tools = [
        (message, part)
        for message in messages
        for part in message["parts"]
        if part.get("type") == "tool" and part.get("tool") == "bash"
    ]
    items = []
    for number, (message, part) in enumerate(tools, 1):
        seen = set()
        for kind, text in part_evidence(part, final=number == len(tools)):
            if len(text) >= MIN_ITEM_CHARS and (kind, text) not in seen:
                seen.add((kind, text))
                items.append({"kind": kind, "text": text, "message": message["info"]["id"], "part": part["id"]})
    return items


def choose_sessions(paths: list[Path], count: int) -> list[tuple[Path, list[dict[str, str]]]]:
    """Per repository the small session with the most non-exit-code evidence; the top `count`."""
    best: dict[str, tuple[int, Path, list[dict[str, str]]]] = {}
    for path in paths:
        if path.stat().st_size > MAX_SESSION_BYTES:
            continue
        items = session_evidence(load_messages(path))
        score = sum(item["kind"] != "exit code" for item in items)
        repository = path.stem.split("__")[1]
        if repository not in best or score > best[repository][0]:
            best[repository] = (score, path, items)
    ranked = sorted(best.values(), key=lambda entry: (-entry[0], entry[1].name))
    chosen, total = [], 0
    for _, path, items in ranked:
        if len(chosen) < count and total + path.stat().st_size <= MAX_TOTAL_BYTES:
            chosen.append((path, items))
            total += path.stat().st_size
    return sorted(chosen)


def write_fixtures(corpus: Path, out: Path, count: int) -> dict[str, list[dict[str, str]]]:
    """Copy the chosen sessions, their licence and their evidence into `out`."""
    chosen = choose_sessions(session_paths(corpus), count)
    evidence = {}
    for path, items in chosen:
        name = path.stem.split("__", 1)[1] + ".json"
        data = orjson.dumps(orjson.loads(path.read_bytes())) + b"\n"
        write_given(out / "sessions" / name, data)
        evidence[name] = items
    write_given(out / "evidence.json", encode_json(evidence))
    shutil.copyfile(corpus / "LICENSE", out / f"LICENSE-{corpus.name}")
    return evidence


def main(argv: list[str] | None = None) -> int:
    """Regenerate the evidence fixtures and print what they hold."""
    parser = argparse.ArgumentParser(prog="python -m bench.makers.evidence", description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=corpus_folder, default=DEFAULT, help="a corpus name or a folder of exports")
    parser.add_argument("--out", type=Path, default=FIXTURES)
    parser.add_argument("--count", type=int, default=10, help="number of sessions")
    args = parser.parse_args(argv)
    evidence = write_fixtures(args.corpus, args.out, args.count)
    for name, items in evidence.items():
        kinds: dict[str, int] = {}
        for item in items:
            kinds[item["kind"]] = kinds.get(item["kind"], 0) + 1
        print(f"{name:<34}{len(items):>5} items  " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
