"""Path identity: two spellings of one file (relative or absolute, with or without `./`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


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
