"""The user's open requests as quote lines within a token budget: the newest first, then the others newest first,
the first request last; where one does not fit, the user's own words, then the lines that name the work, then the
rest, those that say the most first.

What the user pasted (a fenced block, a log, a diff) is told from what they wrote by its lines' shape; of a pasted log
only the lines that name the work are wanted (its error lines, the files its stack frames name): the rest of a log is
quoted only when the room is there anyway."""

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
NAMES_FILE = re.compile(rf"{PATH.pattern}|https?://\S*/[\w.-]+\.[A-Za-z]\w{{0,7}}\b|['\"][\w./-]+\.[A-Za-z]\w{{0,7}}['\"]")
"""A line that names a file: a path, a link to a file (a source file on a forge), a quoted file name
(`open('out.fits')`)."""
WORD = re.compile(r"[^\W\d_]{3,}")
"""A word of a request line (numbers left out), for telling whether the line says anything new."""
CUT_NOTE = "the user's own words first, then those naming files, code, commands and steps"
FENCE = re.compile(r"^\s*(?:```|~~~)")
LOG_LINE = re.compile(
    r"^\s*(?:\d{4}-\d\d-\d\d[T ]|\[?\d\d:\d\d:\d\d|\[?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b[\]:]?"
    r"|at [\w$.<>]+\(|File \"[^\"]+\", line \d|\S+:\d+:(?:\d+:)? )")
"""A line of a pasted log: a timestamp, a level, a stack frame, `file:line:`."""
PASTED = re.compile(r"^\s*(?:[+-](?![+-]{2}\s)|@@ |diff --git |index [0-9a-f]+\.\.|[|│├└─]|\$ )|^(?: {4}|\t)")
"""A line of something else pasted rather than written: a diff's, a table's or a terminal's, or one indented as
code."""
PASTE_HEADER = re.compile(r"^(?:diff --git |--- |\+\+\+ |@@ .*@@)|(?i:\b(?:error|exception|fail(?:ed|ure)?|panic|fatal"
                          r"|traceback|denied|refused|not found|cannot|undefined)\b|[a-z](?:Error|Exception)\b)")
"""A pasted line the work goes on with: a diff's file or hunk header, a log's error line (a pasted line that names a
file, a stack frame's, is one too)."""
LETTER = re.compile(r"[^\W\d_]")
OWN_WORDS, NAMES_THE_WORK, PASTED_TEXT, LOG = range(4)
"""What a request line is, in the order it is quoted: the user's own words, a line that names files, code, commands,
steps (or a pasted error line, a diff header), the rest of what was pasted (code, a diff), the rest of a log."""


def request_lines(progress: Progress, budget: int) -> list[str]:
    """The newest request, then the other latest requests and refusals, newest first, the first request last: what
    the work goes on with first, since a block cut short keeps a section's first lines. The budget is spent in the
    same order."""
    first = first_open(progress)
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


def first_open(progress: Progress) -> Request | None:
    """The first request, when it is not the newest too."""
    return progress.first if not progress.first_is_newest else None


def open_requests(progress: Progress) -> list[Request]:
    """The requests quoted, in the order the budget is spent on them: the newest, the others newest first, the
    first."""
    first = first_open(progress)
    return [*([progress.newest] if progress.newest else []), *progress.requests[::-1], *([first] if first else [])]


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


def ranked_quote(lines: list[str], budget: int, said: set[str], work_first: bool = False) -> list[str]:
    """The lines that say something not in `said` (which grows by their terms) as `> ` quotes within `budget`
    tokens, in their own order. When the budget binds, the user's own words are kept first, then the lines that
    name files, code, commands and numbered steps, then the others (`line_kinds`); among those, the ones that say the
    most per token, and the first line that does not fit is cut to the room left. `work_first` puts the lines that
    name files, then those that name code, commands or steps, before the others."""
    costs = [tokens_for_cap(QUOTE + line + "\n") for line in lines]
    kinds = line_kinds(lines)
    ranked = sorted(range(len(lines)), key=lambda i: (work_first and NAMES_FILE.search(lines[i]) is None,
                                                      work_first and NAMES_WORK.search(lines[i]) is None, kinds[i],
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


def line_kinds(lines: list[str]) -> list[int]:
    """What each line of a request is: OWN_WORDS, NAMES_THE_WORK, PASTED_TEXT or LOG."""
    kinds = []
    fenced = False
    for line in lines:
        fence = FENCE.match(line) is not None
        log = LOG_LINE.match(line) is not None
        pasted = fenced or fence or log or PASTED.match(line) is not None or not written(line)
        fenced ^= fence
        if not pasted:
            kinds.append(OWN_WORDS)
        elif not fence and (PASTE_HEADER.search(line) or PATH.search(line)):
            kinds.append(NAMES_THE_WORK)
        else:
            kinds.append(LOG if log else PASTED_TEXT)
    return kinds


def written(line: str) -> bool:
    """True for a line a person wrote: letters for at least half of what is not space."""
    visible = "".join(line.split())
    return bool(visible) and len(LETTER.findall(visible)) * 2 >= len(visible)


def wanted_tokens(text: str) -> int:
    """The tokens of a request's lines worth quoting whole: all but the lines of a pasted log that are no error and
    name no file, each line once."""
    lines = list(dict.fromkeys(line for line in text.splitlines() if line.strip()))
    return sum(tokens_for_cap(QUOTE + line + "\n") for line, kind in zip(lines, line_kinds(lines), strict=True)
               if kind != LOG)


def quotes_within(lines: list[str], room: int) -> list[str]:
    """A quoting section's lines within `room` tokens: every line that labels a request, and of each request's quote
    lines, the newest request's first, those `ranked_quote` keeps first when the lines naming the work go first (a
    resume block cut short keeps the files and commands a request names)."""
    groups: list[tuple[str, list[str]]] = []
    for line in lines:
        if line.startswith(QUOTE) and groups:
            groups[-1][1].append(line[len(QUOTE):])
        else:
            groups.append((line, []))
    room -= sum(tokens_for_cap(label + "\n") for label, _ in groups)
    said: set[str] = set()
    kept: list[str] = []
    for label, quotes in groups:
        quoted = ranked_quote(quotes, max(room, 0), said, work_first=True) if quotes else []
        room -= sum(tokens_for_cap(line + "\n") for line in quoted)
        kept += [label, *quoted]
    return kept
