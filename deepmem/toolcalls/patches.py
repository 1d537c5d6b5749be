"""Paths named by patch texts: unified diffs and OpenCode's `*** Begin Patch` format."""

from __future__ import annotations

import re

UNIFIED_TARGET = re.compile(r"(?m)^(\+\+\+|---) (?:[ab]/)?([^\t\n]+?)(?:\t.*)?$")
GIT_HEADER = re.compile(r"(?m)^diff --git a/(\S+) b/(\S+)$")
OPENCODE_FILE = re.compile(r"(?m)^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
OPENCODE_MOVE = re.compile(r"(?m)^\*\*\* Move to: (.+?)\s*$")
OPENCODE_ACTIONS = {"Add": "created", "Update": "edited", "Delete": "deleted"}


def patch_targets(text: str) -> list[tuple[str, str]]:
    """(path, action) for every file a patch text changes, in order of appearance."""
    found: dict[str, str] = {}
    for match in OPENCODE_FILE.finditer(text):
        found.setdefault(match.group(2), OPENCODE_ACTIONS[match.group(1)])
    for match in OPENCODE_MOVE.finditer(text):
        found.setdefault(match.group(1), "created")
    for match in GIT_HEADER.finditer(text):
        found.setdefault(match.group(2), "edited")
    old_path = ""
    for match in UNIFIED_TARGET.finditer(text):
        sign, path = match.groups()
        if sign == "---":
            old_path = path
        elif path != "/dev/null":
            found.setdefault(path, "created" if old_path == "/dev/null" else "edited")
        elif old_path and old_path != "/dev/null":
            found[old_path] = "deleted"
    return list(found.items())
