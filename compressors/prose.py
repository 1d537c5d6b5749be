"""Old assistant prose: structure kept (headings, list items, code fences, paths, decisions),
other sentences cut; one marker at the end counts what went.

The code between fences is counted, not kept: its first line is mostly an import or a
shebang, and code an agent shows in its text is what it then runs or writes, which its
tool call holds. A message keeps at most `ProseBudget.lines` items and paragraphs: its
opening sentence first, then those holding a decision, then the rest in order. An old
message's narration matters less than what it decided, and in a long debugging monologue
nearly every paragraph names an error or a cause. The original is one `deep_expand` away.
"""

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
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""


class ProseBudget(msgspec.Struct, frozen=True):
    """How much prose survives: key sentences per paragraph, their width, and how many
    items and paragraphs besides those holding a decision."""

    min_chars: int
    key_sentences: int
    sentence_chars: int
    item_chars: int
    lines: int


BUDGETS: dict[Tier, ProseBudget] = {
    "low": ProseBudget(min_chars=240, key_sentences=1, sentence_chars=160, item_chars=160, lines=6),
    "medium": ProseBudget(min_chars=240, key_sentences=1, sentence_chars=130, item_chars=130, lines=5),
    "high": ProseBudget(min_chars=200, key_sentences=1, sentence_chars=100, item_chars=100, lines=4),
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


def stays_as_is(line: str) -> bool:
    """Blank lines, headings and markers of earlier cuts stay as they are."""
    return not line.strip() or HEADER.match(line) is not None or line.startswith("[… ")


def shorten_item(line: str, budget: ProseBudget, first: bool, decisive: bool) -> str | None:
    """A list item clipped, or a paragraph shortened (`shorten_paragraph`); None when nothing stays."""
    if LIST_ITEM.match(line):
        return clip_text(line, budget.item_chars)
    return shorten_paragraph(line, budget, first, decisive)


def line_roles(lines: list[str]) -> list[str]:
    """Each line's role: `fence`, `code` (between fences), `kept` (`stays_as_is`) or `prose`."""
    roles, in_fence = [], False
    for line in lines:
        if FENCE.match(line):
            in_fence = not in_fence
            roles.append("fence")
        elif in_fence:
            roles.append("code")
        else:
            roles.append("kept" if stays_as_is(line) else "prose")
    return roles


def chosen_lines(lines: list[str], roles: list[str], budget: ProseBudget, decisive: set[int]) -> dict[int, str]:
    """Index → shortened text of the items and paragraphs (outside fences) that survive: at
    most `budget.lines` of those that keep anything; the first paragraph's opening sentence
    (what the message is about) first, then the ones holding a decision, then the others in order."""
    prose = [index for index, role in enumerate(roles) if role == "prose"]
    first = next((index for index in prose if not LIST_ITEM.match(lines[index])), None)
    ranked = sorted(prose, key=lambda index: (index != first, index not in decisive))  # stable: in order within each rank
    chosen: dict[int, str] = {}
    for index in ranked:
        if len(chosen) == budget.lines:
            break
        kept = shorten_item(lines[index], budget, index == first, index in decisive)
        if kept is not None:
            chosen[index] = kept
    return chosen


def shorten_lines(lines: list[str], budget: ProseBudget, decisive: set[int]) -> list[str]:
    """Walk the lines: headings and fences stay (the code between fences is counted, not
    kept); items and paragraphs shrink, at most `budget.lines` of them (`chosen_lines`)."""
    roles = line_roles(lines)
    chosen = chosen_lines(lines, roles, budget, decisive)
    out: list[str] = []
    code = 0
    for index, (line, role) in enumerate(zip(lines, roles, strict=True)):
        if role == "fence":
            if code:
                out.append(f"… ({code} code lines)")
            code = 0
            out.append(line)
        elif role == "code":
            code += 1
        elif role == "kept":
            out.append(line)
        elif index in chosen:
            out.append(chosen[index])
    if code:
        out.append(f"… ({code} code lines)")
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
