"""A checkpoint cut to a block's budget: the requests quoted take what the other sections leave, and the files and
commands the cut sections lose are still named, on two short lines at the end.

The block is 1,000 tokens; a checkpoint after a long request is up to 3,000. Cut by section shares alone, the
files modified (long lines with their code names) and the commands (whole command lines) were the first to go: at
the split points after long requests the block held 0.64 of the commands the continuation ran where checkpoint.md
held 0.91 (claude-gitsync), 0.74 of its files where checkpoint.md held 0.97 (swe-gemini3); with the index, 0.89
and 0.94. Paths and commands alone are a tenth of the lines they come from, so the block names them all and cuts
the rest around them.
"""

from __future__ import annotations

import re

from deepmem.checkpoints.fit import QUOTE, cut_to, fit_sections, section_chosen
from deepmem.checkpoints.quotes import quotes_within
from deepmem.checkpoints.render import END_MARK, LEFT_OUT_OF_BLOCKS, SECTION_WEIGHTS
from deepmem.extractors.context import PATH
from deepmem.tokens import tokens_for_cap

RESUME_TASK_FLOOR = 450
"""The tokens the requests quoted keep in a resume block however much the other sections take."""
TASK_SECTION = "Task overview"
COMMAND_LINE = re.compile(r"^- (?:command|passing:|failing:) `(?P<command>[^`]+)`")
"""A checkpoint line naming a command it ran: a command that worked, a check that passed or failed."""
CD_PREFIX = re.compile(r"^cd \S+ && ")
"""A change of folder in front of a command, which says nothing of the command."""
NAMED_FILE = re.compile(rf"{PATH.pattern}|`(?:AUTHORS|CHANGELOG|CONTRIBUTING|Dockerfile|Gemfile|LICENSE|Makefile|README)`")
"""A file the body names: a path, or a file of the ones that have no extension, in backticks."""
INDEX_COMMAND_CHARS = 80
"""A command named on the index line is cut to this many characters: enough for its program, its first words and
flags."""
INDEX_TITLE = "## Also in checkpoint.md"
INDEX_SHARE = 0.5
"""The most of the block's room the index may take; each of its two lines is cut to half of that."""
INDEX_ROUNDS = 3
"""How often the index is made again from the text fitted around it (each round names only what that text lost;
the second round is almost always the last)."""


def block_body(checkpoint: str) -> str:
    """The checkpoint as a block shows it: without its end mark, the line naming its session and its empty sections."""
    return LEFT_OUT_OF_BLOCKS.sub("", checkpoint.replace(END_MARK, "")).rstrip() + "\n"


def fitted_block(opening: str, close: str, body: str, room: int) -> str:
    """The body between `opening` and `close` within `room` estimated tokens: whole when it fits; else its sections
    cut to their shares around an index of the files and commands the cut text no longer names."""
    around = opening + close
    if tokens_for_cap(around + body) <= room:
        return opening + body + close
    files, commands = named_work(body)
    index = ""
    for _ in range(INDEX_ROUNDS):
        fitted = fitted_sections(body, room - tokens_for_cap(index), around)
        again = index_section(files, commands, fitted, int(room * INDEX_SHARE / 2))
        if again == index:
            break
        index = again
    else:  # not settled: the sections are fitted around the last index made, so that the block keeps its room
        fitted = fitted_sections(body, room - tokens_for_cap(index), around)
    return opening + fitted + ("\n" if index and not fitted.endswith("\n\n") else "") + index + close


def fitted_sections(body: str, room: int, around: str) -> str:
    """The sections cut to their shares within `room`. The requests quoted take what the other sections leave, but
    at least RESUME_TASK_FLOOR, their lines naming the work first."""
    others = tokens_for_cap(around + section_chosen(body, TASK_SECTION, lambda lines: []))
    left = max(room - others, RESUME_TASK_FLOOR)
    body = section_chosen(body, TASK_SECTION, lambda lines: quotes_within(lines, left))
    return fit_sections(body, room, SECTION_WEIGHTS, around)


def named_work(body: str) -> tuple[list[str], list[str]]:
    """The file paths and the commands the body names, in the order it names them first (a command without the
    change of folder in front of it, cut to INDEX_COMMAND_CHARS)."""
    files: dict[str, None] = {}
    commands: dict[str, None] = {}
    for line in body.splitlines():
        if found := COMMAND_LINE.match(line):
            command = CD_PREFIX.sub("", found["command"])
            commands.setdefault(command if len(command) <= INDEX_COMMAND_CHARS else command[: INDEX_COMMAND_CHARS - 1] + "…")
        files.update(dict.fromkeys(name.strip("`") for name in NAMED_FILE.findall(line.removeprefix(QUOTE))))
    return list(files), list(commands)


def index_section(files: list[str], commands: list[str], fitted: str, line_room: int) -> str:
    """A section naming the files and commands that the fitted text does not, each line within `line_room` tokens
    ('' when it names them all)."""
    lost_files = [path for path in files if path not in fitted]
    lost_commands = [command for command in commands if command.rstrip("…") not in fitted]
    lines = [*(["- files: " + ", ".join(lost_files)] if lost_files else []),
             *(["- commands: " + "; ".join(f"`{command}`" for command in lost_commands)] if lost_commands else [])]
    kept = [line if tokens_for_cap(line + "\n") <= line_room else cut_to(line, line_room) for line in lines]
    return f"{INDEX_TITLE}\n" + "\n".join(kept) + "\n\n" if lines else ""
