"""A user message as a search query: the words a person typed, without a client's slash-command wrappers, and the
files it names."""

from __future__ import annotations

import posixpath
import re

from deepmem.memory.entries import CONTROL

WRAPPED = re.compile(r"<([A-Za-z][\w-]*-(?:name|message|stdout|stderr))>.*?</\1>", re.S)
"""A client's echo of a slash command or a shell run: its name, its banner, its output."""
QUOTED = re.compile(r"`([^`\n]+)`")
WORD = re.compile(r"[\w./-]+")
MIN_STEM = 4
"""A file's name without its extension counts as named when it has at least this many characters."""
TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SLASH = re.compile(r"^\s*/[\w:.-]+(?=\s|$)")
"""A slash command opening the message (`/workflows:review`)."""


def clean_query(text: str) -> str:
    """The text without wrapped command echoes, tags, terminal colours, a leading slash command or control bytes."""
    text = TAG.sub(" ", WRAPPED.sub(" ", ANSI.sub("", text or "")))
    return " ".join(CONTROL.sub(" ", SLASH.sub(" ", text)).split())


def file_names(text: str) -> set[str]:
    """The files a text names in backticks, lowercased, each as its path and as its name without the extension."""
    names: set[str] = set()
    for name in QUOTED.findall(text):
        base = posixpath.basename(name)
        if "." in base or "/" in name:
            stem = base.split(".", 1)[0].lower()
            names |= {name.lower(), *([stem] if len(stem) >= MIN_STEM else [])}
    return names


def query_words(query: str) -> set[str]:
    """The words of a query as file_names spells them: as written, and each file name without folder or extension."""
    words = {word.lower().strip("./") for word in WORD.findall(query)}
    return words | {posixpath.basename(word).split(".", 1)[0] for word in words}
