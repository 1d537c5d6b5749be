"""Project facts from outcomes: the build, test and lint commands that succeeded, and where symbols are defined.

Read from what the tools did, never from what anyone said: a command counts when its run
ended with exit status 0, a definition when an edit or a write put it into a file.
"""

from __future__ import annotations

import re

import msgspec

from deepmem.extractors.calls import Timeline
from deepmem.extractors.files import project_path
from deepmem.toolcalls.touches import call_touches

BUILD_TOOLS = frozenset("""go cargo make mise npm yarn pnpm just task pytest tox nox ruff mypy flake8 golangci-lint
    gradle mvn tsc eslint prettier python python3 uv""".split())
BUILD_WORDS = re.compile(
    r"\b(?:test|tests|build|lint|fmt|format|vet|check|pytest|tox|nox|ruff|mypy|flake8|golangci-lint|make|"
    r"cargo|tsc|eslint|prettier|compile)\b")
"""A build, test or lint command: a build tool's program, with one of these words among its stable words."""
COMMAND_WORD = re.compile(r"^[\w:+-]+$")
KEY_WORDS = 3
DEFINITION = re.compile(
    r"^\s*(?:func\s+(?:\([^)]*\)\s*)?|type\s+|(?:async\s+)?def\s+|class\s+|(?:export\s+)?(?:async\s+)?function\s+|"
    r"(?:pub\s+)?(?:fn|struct|enum|trait)\s+)([A-Za-z_]\w{2,})", re.M)
"""A line that defines a function, method, type or class (Go, Python, JS/TS, Rust)."""
MAX_SYMBOLS = 2
"""Definitions kept per file: the first ones written."""


class Outcomes(msgspec.Struct, frozen=True):
    """What a session's tools showed to work."""

    commands: tuple[str, ...] = ()
    """Build, test and lint commands (their stable words) whose newest run exited 0, in order of first use."""
    symbols: tuple[tuple[str, str], ...] = ()
    """(name, file) for definitions the session's edits and writes put into files."""


def command_key(command: str) -> str:
    """A shell command's stable words: program and subcommands, without paths, flags or a leading `cd`."""
    line = command.strip().split("\n", 1)[0]
    pieces = [piece.strip() for piece in re.split(r"&&|;|\|", line)]
    pieces = [piece for piece in pieces if piece and not piece.startswith("cd ")] or [""]
    key: list[str] = []
    for word in pieces[0].split():
        if "=" in word and not key:
            continue
        if word == "-m" and key:
            key.append(word)
        elif word.startswith("-") or not COMMAND_WORD.match(word):
            break
        else:
            key.append(word)
        if len(key) == KEY_WORDS:
            break
    return " ".join(key)


def build_command(command: str) -> str:
    """The command's stable words when it builds, tests or lints; '' otherwise."""
    key = command_key(command)
    return key if key.split(" ", 1)[0] in BUILD_TOOLS and BUILD_WORDS.search(key) else ""


def find_outcomes(timeline: Timeline) -> Outcomes:
    """Commands whose newest run succeeded, and definitions written into files."""
    newest: dict[str, bool] = {}
    symbols: dict[tuple[str, str], None] = {}
    per_file: dict[str, int] = {}
    for call in timeline.calls:
        key = build_command(call.command) if call.command else ""
        if key:
            newest[key] = not call.failed
        if call.failed or call.command:
            continue
        text = "\n".join(str(call.input.get(field) or "") for field in ("newString", "content"))
        for path in call_touches(call.tool, call.input).changed[:1]:
            where = project_path(path, call.cwd, timeline.root)
            for name in DEFINITION.findall(text):
                if per_file.get(where, 0) < MAX_SYMBOLS and (name, where) not in symbols:
                    symbols[(name, where)] = None
                    per_file[where] = per_file.get(where, 0) + 1
    return Outcomes(tuple(key for key, ok in newest.items() if ok), tuple(symbols))
