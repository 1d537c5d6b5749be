"""The user's open requests as quote lines within a token budget: the newest first, then the others newest first,
the first request last; where one does not fit, its first line, then the lines that name the work and say the most
first."""

from __future__ import annotations

import re

from deepmem.checkpoints.fit import QUOTE, cut_to
from deepmem.extractors.context import CODE_NAME, PATH
from deepmem.extractors.progress import Progress
from deepmem.extractors.requests import Request
from deepmem.tokens import tokens_for_cap

REQUEST_FLOOR = 150
"""Each open request keeps at least this many tokens however much the newer ones took (about 600 characters, what
each earlier request kept before the budget was shared)."""
NAMES_WORK = re.compile(rf"`|{PATH.pattern}|{CODE_NAME.pattern}|^\W*(?:\d+[.)]|(?i:step) \d+)|^\s*\$ |\s--?[a-z][\w-]*(?!\S)")
"""A line that names a file, code, a command (a prompt `$`, a flag) or a numbered step."""
WORD = re.compile(r"[^\W\d_]{3,}")
"""A word of a request line (numbers left out), for telling whether the line says anything new."""
CUT_NOTE = "those naming files, code, commands and steps first"


def request_lines(progress: Progress, budget: int) -> list[str]:
    """The newest request, then the other latest requests and refusals, newest first, the first request last: what
    the work goes on with first, since a block cut short keeps a section's first lines. The budget is spent in the
    same order."""
    first = progress.first if not progress.first_is_newest else None
    others = progress.requests[::-1]
    labeled = [*([(f"- newest request (step {progress.newest.step})", progress.newest)] if progress.newest else []),
               *((request_label(request), request) for request in others),
               *([(f"- first request (step {first.step})", first)] if first else [])]
    quotes = budgeted_quotes([request for _, request in labeled], budget)
    lines: list[str] = []
    for i, ((label, request), (kept, count)) in enumerate(zip(labeled, quotes, strict=True)):
        if others and i == bool(progress.newest):
            lines.append("- other latest requests, newest first:")
        if not request.text:
            lines.append(label)
        elif len(kept) == count:
            lines += [label + ":", *kept]
        else:
            lines += [f"{label}, {len(kept)} of {count} lines, {CUT_NOTE}:", *kept]
    return lines


def request_label(request: Request) -> str:
    """How an earlier open request is named: its step, or the call it refused."""
    if request.refused:
        return f"- refused `{request.refused}` (step {request.step})" + (", saying" if request.text else "")
    return f"- step {request.step}"


def budgeted_quotes(requests: list[Request], budget: int) -> list[tuple[list[str], int]]:
    """Each request's quote lines and its count of lines, `budget` tokens spent in the order given (each request
    at least REQUEST_FLOOR); a line whose words were all quoted already, for this request or one before it in the
    order, is not quoted (a pasted log's repeated lines, a request pasted twice)."""
    said: set[str] = set()
    quotes = []
    for request in requests:
        lines = [line for line in request.text.splitlines() if line.strip()]
        kept = ranked_quote(lines, max(REQUEST_FLOOR, budget), said)
        budget -= sum(tokens_for_cap(line + "\n") for line in kept)
        quotes.append((kept, len(lines)))
    return quotes


def ranked_quote(lines: list[str], budget: int, said: set[str]) -> list[str]:
    """The lines that say something not in `said` (which grows by their terms) as `> ` quotes within `budget`
    tokens, in their own order. When the budget binds, the first line is kept first (a title, or the user's own
    words before what they pasted), then the lines that name files, code, commands and numbered steps, then the
    others; among those, the ones that say the most per token (of a pasted log, its headings and its findings
    before its long paths), and the first line that does not fit is cut to the room left."""
    costs = [tokens_for_cap(QUOTE + line + "\n") for line in lines]
    ranked = sorted(range(len(lines)), key=lambda i: (i > 0, NAMES_WORK.search(lines[i]) is None,
                                                      -len(terms(lines[i]) - said) / costs[i], i))
    kept: dict[int, str] = {}
    room = budget
    for i in ranked:
        words = terms(lines[i])
        if words and words <= said:
            continue
        if costs[i] > room:
            kept[i] = cut_to(QUOTE + lines[i], room)
            break
        kept[i], room = QUOTE + lines[i], room - costs[i]
        said |= words
    return [kept[i] for i in sorted(kept) if kept[i]]


def terms(line: str) -> set[str]:
    """What a request line says, to tell whether it says anything not quoted already: its words (numbers left
    out, so a log's lines that differ only by a count or a time say nothing new), file paths and code names."""
    return {*WORD.findall(line.lower()), *PATH.findall(line), *CODE_NAME.findall(line)}
