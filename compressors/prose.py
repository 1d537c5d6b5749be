"""Old assistant prose: structure kept (headings, list items, code fences' first lines, paths,
decisions), other sentences cut; one marker at the end counts what went."""

from __future__ import annotations

import itertools
import re

import msgspec

from deepmem.markers import marker
from deepmem.phrasing import KEY_SENTENCE, KEY_SENTENCE_ANCHORS
from deepmem.text.fields import main_text, with_main_text
from deepmem.text.lines import worth_cutting
from deepmem.text.patterns import HEADER, SCAN_CHARS, fold, lines_holding, names_a_path
from deepmem.types import Context, Original, Part, Result, Tier, cache_key

NAME = "prose"
TOOLS: tuple[str, ...] = ()


class ProseBudget(msgspec.Struct, frozen=True):
    """How much prose survives: key sentences per paragraph, their width, code lines per fence."""

    min_chars: int
    key_sentences: int
    sentence_chars: int
    item_chars: int
    code_lines: int


BUDGETS: dict[Tier, ProseBudget] = {
    "low": ProseBudget(min_chars=240, key_sentences=1, sentence_chars=160, item_chars=160, code_lines=1),
    "medium": ProseBudget(min_chars=240, key_sentences=1, sentence_chars=130, item_chars=130, code_lines=1),
    "high": ProseBudget(min_chars=200, key_sentences=1, sentence_chars=100, item_chars=100, code_lines=0),
}
FENCE = re.compile(r"^\s*(```|~~~)")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def clip_text(text: str, width: int) -> str:
    """The text cut to `width` characters, ending with `…` when cut."""
    return text if len(text) <= width else text[:width].rstrip() + "…"


def shorten_paragraph(line: str, budget: ProseBudget, first: bool, decisive: bool) -> str | None:
    """The opening sentence of the first paragraph, then sentences with decisions or paths
    (decisions are looked for only in a `decisive` paragraph, one holding an anchor)."""
    sentences = SENTENCE_END.split(line.strip())
    keys = (
        s
        for s in sentences[1 if first else 0 :]
        if (decisive and KEY_SENTENCE.search(s, 0, SCAN_CHARS)) or names_a_path(s)
    )
    kept = ([sentences[0]] if first else []) + list(itertools.islice(keys, budget.key_sentences))
    if not kept:
        return None
    text = " ".join(clip_text(s, budget.sentence_chars) for s in kept)
    return text + (" …" if len(kept) < len(sentences) else "")


def shorten_lines(lines: list[str], budget: ProseBudget, decisive: set[int]) -> list[str]:
    """Walk the lines: fences keep their first lines, headings stay, items and prose shrink."""
    out: list[str] = []
    fence_left: int | None = None
    skipped = 0
    first = True
    for index, line in enumerate(lines):
        if FENCE.match(line):
            if fence_left is None:
                fence_left = budget.code_lines
            else:
                if skipped:
                    out.append(f"… ({skipped} code lines)")
                fence_left, skipped = None, 0
            out.append(line)
        elif fence_left is not None:
            if fence_left > 0:
                out.append(clip_text(line, budget.item_chars))
                fence_left -= 1
            else:
                skipped += 1
        elif not line.strip() or HEADER.match(line) or line.startswith("[… "):
            out.append(line)
        elif LIST_ITEM.match(line):
            out.append(clip_text(line, budget.item_chars))
        else:
            shortened = shorten_paragraph(line, budget, first, index in decisive)
            first = False
            if shortened is not None:
                out.append(shortened)
    if skipped:
        out.append(f"… ({skipped} code lines)")
    return out


def compress(part: Part, ctx: Context) -> Result | None:
    """Shorten prose over the tier's size, keeping its structure; one marker at the end."""
    text = main_text(part)
    budget = BUDGETS[ctx.tier]
    if not text or len(text) < budget.min_chars:
        return None
    decisive = set(lines_holding(fold(text), KEY_SENTENCE_ANCHORS))
    body = "\n".join(line for line in shorten_lines(text.split("\n"), budget, decisive) if line.strip())
    key = cache_key(text, NAME)
    shortened = f"{body}\n{marker(len(text) - len(body), len(text), 'chars', key)}"
    if not worth_cutting(text, shortened):
        return None
    return Result(part=with_main_text(part, shortened), originals=(Original(key, text),))
