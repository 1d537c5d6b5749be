"""Capture-time trimming: a new output over its cap is cut to fit, once and for all (a new
long shell command is trimmed next to it by `long_inputs`).

File views (a read, a search of named files such as `rg -n NAME a.go b.go`, a command one
of whose lines reads a file or diffs named files against the working tree, an output that
prints back a text of several lines its input passed, as a plan approved) have
`capture_cap_tokens`, by default as much as the views kept whole may take together
(`deepmem.history.whole_view_tokens`): the agent quotes their lines
in the edits that follow, so a view is cut later, once its file is no longer worked on, not
before the agent has used it. Every other output (searches of folders, test runs, installs,
scripts' prints) has the smaller `capture_command_cap_tokens`: what the agent uses of it is
its status, errors, first matches and tail, which the trim keeps, and trimming it here costs no cached prefix,
whereas cutting it later at a jump rewrites the requests after it. A pure function of the
part and the caps, so every later step trims it identically.
"""

from __future__ import annotations

from deepmem.history import view_cap_tokens
from deepmem.markers import gap_marker
from deepmem.text.fields import main_text
from deepmem.text.lines import Budget, shorten_part
from deepmem.text.patterns import command_key_lines
from deepmem.tokens import estimate_tokens
from deepmem.toolcalls.echoes import echoes_input
from deepmem.toolcalls.kinds import tool_input, tool_kind
from deepmem.toolcalls.shell import prints_a_file, searched_files
from deepmem.types import Context, Part, Result

NAME = "capture"
READS_FACTS = False
"""Its result depends only on the part, tier, settings and copied lines, so the pipeline may reuse it."""

LINE_CHARS = 2_000
"""Kept lines are cut to this width at most (a 10 MB line becomes one short line and a marker);
under a small cap, to the tail's share of it, so that one line always fits."""
VIEW_KINDS = ("read",)
"""Output kinds whose lines the agent quotes later: they get the larger cap, and so does a
search of named files (`rg -n NAME a.go b.go`, `grep -n -A 60 name file.go`), which shows
those files' lines, and a command one of whose lines shows a file's lines (`git status`, then
`sed -n '1,190p' a.go`; `git diff -- a.go`). A search of folders keeps the smaller one: what the agent uses of
it is where the matches are."""


def shows_file_lines(part: Part) -> bool:
    """A file view, a search of named files (`deepmem.toolcalls.shell.searched_files`), a
    command that prints a file's lines on a later line or in a diff (`deepmem.toolcalls.shell.prints_a_file`), or
    an output that prints back its input's text (`deepmem.toolcalls.echoes.echoes_input`)."""
    kind = tool_kind(part)
    command = tool_input(part).get("command")
    if kind in VIEW_KINDS or not isinstance(command, str):
        return kind in VIEW_KINDS or echoes_input(part)
    return bool(searched_files(command)) if kind == "search" else prints_a_file(command)


def is_text_view(part: Part, text: str) -> bool:
    """File lines an edit can quote: not binary, not minified (no line over `LINE_CHARS`)."""
    return shows_file_lines(part) and "\x00" not in text and max(map(len, text.split("\n"))) <= LINE_CHARS


def cap_for(part: Part, text: str, ctx: Context) -> int:
    """The token cap of a new output: views of text files keep more than any other output."""
    settings = ctx.settings
    if not is_text_view(part, text):
        return settings.capture_command_cap_tokens
    return view_cap_tokens(settings)


def lines_within(lengths: list[int], limit: int, line_chars: int) -> int:
    """How many lines of the given lengths fit in `limit` characters (long lines count clipped)."""
    total = 0
    for count, length in enumerate(lengths):
        total += min(length, line_chars) + 1
        if total > limit:
            return count
    return len(lengths)


def compress(part: Part, ctx: Context) -> Result | None:
    """Keep ~40% of the cap from the head, ~30% from the tail and ~20% of key lines."""
    text = main_text(part)
    tokens = estimate_tokens(text) if text else 0
    if tokens <= (cap := cap_for(part, text, ctx)):
        return None
    lines = text.split("\n")
    lengths = [len(line) for line in lines]
    chars = cap * len(text) // tokens  # the cap in characters at this output's own density
    line_chars = min(LINE_CHARS, chars * 3 // 10 - 1)
    # A key line away from the others opens a run of cut lines, so it costs its gap marker too.
    per_key = sum(min(n, line_chars) for n in lengths) // len(lines) + 1 + len(gap_marker(len(lines), len(lines))) + 1
    budget = Budget(
        head=lines_within(lengths, chars * 4 // 10, line_chars),
        tail=lines_within(lengths[::-1], chars * 3 // 10, line_chars),
        key=chars * 2 // 10 // per_key,
        line_chars=line_chars,
    )
    return shorten_part(part, NAME, budget, command_key_lines)
