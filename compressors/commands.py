"""What a shell command does, read from its text: a file read, a search, a write, or other."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

READERS = frozenset({"cat", "nl", "head", "tail", "less", "more"})
SEARCHERS = frozenset({"grep", "egrep", "rg", "ag", "ack", "find", "ls", "tree", "locate", "fd"})
SEPARATOR = re.compile(r"&&|\|\||;")
PIPE = re.compile(r"(?<!\|)\|(?!\|)")
SED_RANGE = re.compile(r"(\d+)\s*(?:,\s*\d+\s*)?p")
REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\s*([^\s;&|<>()]+)")
WORD = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"|([^\s'\"]+)")
PYTHON_WRITE = re.compile(r"open\(\s*['\"]([^'\"]+)['\"]\s*,\s*['\"][wa]")


def words(stage: str) -> list[str]:
    """Shell words of one pipeline stage: quoted strings unquoted, no expansion (fast, lenient)."""
    return [next(group for group in match.groups() if group is not None) for match in WORD.finditer(stage)]


def main_stages(command: str) -> list[str]:
    """The pipeline stages of the last `&&`/`;` segment of the command's first line."""
    first_line = command.strip().split("\n", 1)[0]
    segments = [s.strip() for s in SEPARATOR.split(first_line) if s.strip()]
    if not segments:
        return []
    return [s.strip() for s in PIPE.split(segments[-1]) if s.strip()]


def program(stage: str) -> str:
    """The program a stage runs (`git grep` counts as `grep`)."""
    return program_of(words(stage))


def program_of(tokens: list[str]) -> str:
    """The program of a stage's shell words (leading `NAME=value` assignments skipped)."""
    while tokens and "=" in tokens[0] and not tokens[0].startswith("-"):
        tokens = tokens[1:]
    if len(tokens) > 1 and tokens[0] == "git" and tokens[1] in ("grep", "ls-files"):
        return "grep"
    return tokens[0].rsplit("/", 1)[-1] if tokens else ""


@lru_cache(maxsize=16_384)
def command_kind(command: str) -> str:
    """`read`, `search` or `command`, from the programs of the command's main pipeline."""
    stages = main_stages(command)
    if not stages or "<<" in command or REDIRECT.search(stages[-1]):
        return "command"
    programs = [program(stage) for stage in stages]
    if any(name in SEARCHERS for name in programs):
        return "search"
    first = stages[0]
    if programs[0] in READERS or (programs[0] == "sed" and " -n" in f" {first}"):
        return "read"
    return "command"


@lru_cache(maxsize=16_384)
def read_target(command: str) -> tuple[str, int] | None:
    """(path, first line shown) of a `cat`/`nl`/`head`/`sed -n` file read, or None."""
    stages = main_stages(command)
    if not stages:
        return None
    operands = [t for t in words(stages[0])[1:] if not t.startswith("-") and not SED_RANGE.fullmatch(t)]
    if not operands:
        return None
    ranges = [SED_RANGE.match(t) for stage in stages for t in words(stage) if SED_RANGE.match(t)]
    return operands[-1], int(ranges[0].group(1)) if ranges else 1


def shell_lines(command: str) -> list[str]:
    """The command's lines up to and including the first heredoc opener (the rest is data)."""
    lines = command.split("\n")
    for index, line in enumerate(lines):
        if "<<" in line:
            return lines[: index + 1]
    return lines


@lru_cache(maxsize=16_384)
def written_paths(command: str) -> tuple[str, ...]:
    """Files a shell command writes: `sed -i`, `>`/`>>` redirects, `tee`, Python `open(…, 'w')` (memoized)."""
    found: list[str] = []
    for line in shell_lines(command):
        for segment in SEPARATOR.split(line):
            stages = [s for s in PIPE.split(segment) if s.strip()]
            for stage in stages:
                tokens = words(stage)
                name = program_of(tokens)
                if name == "sed" and any(t.startswith("-i") for t in tokens) and len(tokens) > 2:
                    found.append(tokens[-1])
                elif name == "tee":
                    found.extend(t for t in tokens[1:] if not t.startswith("-"))
            found.extend(m.group(1) for m in REDIRECT.finditer(segment))
    found.extend(m.group(1) for m in PYTHON_WRITE.finditer(command))
    return tuple(path for path in found if path and not path.startswith("/dev/") and not path.startswith("&"))


def file_name(path: str) -> str:
    """The last component of a path (two spellings of one file always share it)."""
    return path.rsplit("/", 1)[-1]


def by_file_name(pairs: Iterable[tuple[str, T]]) -> dict[str, tuple[tuple[str, T], ...]]:
    """(path, value) pairs grouped by file name, so a lookup compares only same-named paths."""
    grouped: dict[str, list[tuple[str, T]]] = {}
    for path, value in pairs:
        grouped.setdefault(file_name(path), []).append((path, value))
    return {name: tuple(group) for name, group in grouped.items()}


def same_file(a: str, b: str) -> bool:
    """True when two spellings of a path name the same file (relative vs absolute, `./`)."""
    a, b = a.removeprefix("./"), b.removeprefix("./")
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)
