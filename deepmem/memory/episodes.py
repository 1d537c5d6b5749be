"""Episodes: one line per past session in `episodes.md`, and what the project's history says in sum.

An episode reads `goal · changed `a`, `b` · worked `cmd` · defines `Name` in `a` · outcome`.
Search finds episodes beside MEMORY.md's entries; the stable block ranks the commands that
worked and the files changed most, recent sessions counting more. A line edited by hand
that no longer reads this way only gives fewer facts.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from deepmem.memory.age import time_key
from deepmem.memory.entries import Entry, clean_text, new_id
from deepmem.memory.files import EPISODES, read_memory_file, scope_dir, write_memory_file
from deepmem.memory.staleness import remember_hashes
from deepmem.vault.disk import locked

FIELD = " · "
CHANGED, WORKED, DEFINES = "changed ", "worked ", "defines "
QUOTED = re.compile(r"`([^`\n]+)`")
DEFINITION = re.compile(r"`([^`\n]+)` in `([^`\n]+)`")
RECENT = 40
"""Episodes the sums read, newest first."""
HALF_LIFE = 3
"""Sessions after which an episode's weight in the sums halves: work moves on. Chosen among 3, 5, 10 and 20 on the
first half of the claude-entire history (hot files named that the next session touches: 0.20 at 3, 0.17 at 10);
its second half agrees (0.185 at 3, 0.176 at 10)."""
MIN_TOGETHER = 2
"""Recent sessions that changed both files before two files count as changing together (once is chance)."""


def episodes_path(root: str | os.PathLike[str]) -> Path:
    """The project's episodes.md."""
    return scope_dir(root, "project") / EPISODES


def episodes(root: str | os.PathLike[str]) -> list[Entry]:
    """The project's episodes, oldest first."""
    return sorted(read_memory_file(episodes_path(root), "project").entries, key=lambda entry: time_key(entry.time))


def put_episode(root: str | os.PathLike[str], session_id: str, text: str, time: str) -> Entry:
    """Write a session's episode, replacing the one an earlier checkpoint of the same session wrote."""
    path = episodes_path(root)
    with locked(path.parent):
        state = read_memory_file(path, "project", verify=True)
        entry_id = new_id(f"session {session_id}", {})
        entry = Entry(entry_id, "episode", clean_text(text), time, "project")
        kept = [old for old in state.entries if old.id != entry_id]
        write_memory_file(state, [*kept, entry])
    remember_hashes(root, [entry])
    return entry


def brief(text: str, goal_chars: int) -> str:
    """An episode with its goal cut to `goal_chars`, so that the files and commands after it stay in a short line."""
    goal, *rest = text.split(FIELD)
    goal = goal if len(goal) <= goal_chars else goal[: goal_chars - 1] + "…"
    return FIELD.join([goal, *rest])


def field(text: str, label: str) -> list[str]:
    """The backticked names of one labelled field of an episode."""
    for part in text.split(FIELD):
        if part.startswith(label):
            return QUOTED.findall(part)
    return []


def weighted(root: str | os.PathLike[str], label: str) -> Counter[str]:
    """Each name of a field, summed over the recent episodes with weights halving every HALF_LIFE sessions."""
    recent = episodes(root)[-RECENT:]
    sums: Counter[str] = Counter()
    for age, entry in enumerate(reversed(recent)):
        for name in dict.fromkeys(field(entry.text, label)):
            sums[name] += math.pow(0.5, age / HALF_LIFE)
    return sums


def sessions_with(root: str | os.PathLike[str], label: str) -> Counter[str]:
    """How many recent episodes name each item of a field."""
    return Counter(name for entry in episodes(root)[-RECENT:] for name in dict.fromkeys(field(entry.text, label)))


def definitions(root: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Per file, the names recent episodes saw defined in it, newest first."""
    found: dict[str, list[str]] = {}
    for entry in reversed(episodes(root)[-RECENT:]):
        for part in entry.text.split(FIELD):
            if part.startswith(DEFINES):
                for name, path in DEFINITION.findall(part):
                    if name not in found.setdefault(path, []):
                        found[path].append(name)
    return found


def changed_together(root: str | os.PathLike[str], wanted: Callable[[str], bool]) -> dict[str, Counter[str]]:
    """For each file recent episodes changed that `wanted` picks, the other files changed in the same
    sessions, in at least MIN_TOGETHER of them, with how many."""
    together: dict[str, Counter[str]] = {}
    for entry in episodes(root)[-RECENT:]:
        files = list(dict.fromkeys(field(entry.text, CHANGED)))
        for path in filter(wanted, files):
            together.setdefault(path, Counter()).update(other for other in files if other != path)
    found = {path: Counter({other: count for other, count in others.items() if count >= MIN_TOGETHER})
             for path, others in together.items()}
    return {path: others for path, others in found.items() if others}


def related(root: str | os.PathLike[str], count: int = 2) -> list[Entry]:
    """The earlier episodes that changed the most files the newest one changed (the newer first on a tie)."""
    known = episodes(root)
    files = set(field(known[-1].text, CHANGED)) if known else set()
    shared = [(len(files & set(field(entry.text, CHANGED))), index) for index, entry in enumerate(known[:-1])]
    return [known[index] for overlap, index in sorted(shared, reverse=True)[:count] if overlap]
