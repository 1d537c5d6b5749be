"""The shell parser: a command's lines, heredocs, simple commands, words and programs.

Two readings of one command, from the same rules:

- the quick reading of its main pipeline (the last `&&`/`;` segment of its first line,
  split outside quotes), split into words by a lenient pattern with no expansion, says
  whether a command is a file read, a search or anything else (`command_kind`,
  `read_target`); it never fails;
- the full reading (`heredoc_lines`, `simple_commands`) follows every line with shell
  quoting, joins heredoc bodies to the line that opens them, and splits at `&&`, `||`,
  `;` and pipes; `deepmem.toolcalls.shell_writes` reads what each simple command changes.

Which file's lines a command prints (`shown_file`) takes both: a read on any of its lines,
else a `git diff` of named files against the working tree (its hunks), the lines a later
patch quotes.

Both find a simple command's program past the same prefixes (`strip_prefixes`): `NAME=value`
assignments, `sudo`, `env`, `time`, `nohup`, `command`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from functools import lru_cache

READERS = frozenset({"cat", "nl", "head", "tail", "less", "more"})
READ_STAGES = READERS | {"sed"}
"""What a read may pipe the file through and still show its lines (`nl -ba a.go | sed -n '40,60p'`);
any other program makes the output its own (`head -5 a.jsonl | python3 -c …`)."""
SEARCHERS = frozenset({"grep", "egrep", "rg", "ag", "ack", "find", "ls", "tree", "locate", "fd"})
FILE_SEARCHERS = frozenset({"grep", "egrep", "rg", "ag", "ack"})
"""Searchers whose operands past the pattern may be files."""
FILE_OPERAND = re.compile(r"[\w./-]*\w\.\w+")
"""A path ending in a name with an extension (`internal/sem/search.go`), no wildcard."""
SUMMARY_ONLY = frozenset({"--stat", "--shortstat", "--numstat", "--name-only", "--name-status", "--check", "--quiet", "--summary"})
"""`git diff` options that print no line of the files."""
DIFF_HUNKS = 0
"""The first line of a diff's view of a file: none, it shows the file's lines hunk by hunk (a
later diff of the file replaces it, a read of any range does not)."""
PREFIXES = frozenset({"sudo", "time", "env", "nohup", "command"})
"""Words that run the next word as the program."""
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")
SEPARATOR = re.compile(r"&&|\|\||;")
QUOTED = re.compile(r"""'[^']*'|"(?:[^"\\]|\\.)*\"""")
"""A quoted string, whose `;` and `|` are its own."""
PIPE = re.compile(r"(?<!\|)\|(?!\|)")
SED_RANGE = re.compile(r"(\d+)\s*(?:,\s*\d+\s*)?p")
REDIRECT = re.compile(r"(?<![<>&\d])>{1,2}\s*([^\s;&|<>()]+)")
WORD = re.compile(r"'([^']*)'|\"((?:[^\"\\]|\\.)*)\"|([^\s'\"]+)")
CLOSED_QUOTES = re.compile(r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^'"\\])*""", re.S)
"""A text whose quotes all close (single, double, backslash escapes)."""
HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "|&", ";;"})
LEXED = re.compile(r"[\\#]")
"""Escapes and comments: a line holding one is split by `shlex` itself."""
PLAIN_TOKEN = re.compile(r"""[();<>|&]+|(?:[^ \t\r\n();<>|&'"]+|'[^']*'|"[^"]*")+""")
"""A run of `shlex` punctuation, or a word: plain characters and closed quotes."""
UNQUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")
SHELL_SPACE = " \t\r\n"
"""What `shlex` splits words at."""


def strip_prefixes(words: list[str]) -> list[str]:
    """A simple command's words from its program on: `NAME=value` assignments and `sudo`/`env`… skipped."""
    while words and (words[0] in PREFIXES or ASSIGNMENT.match(words[0])):
        words = words[1:]
    return words


def program_of(words: list[str]) -> str:
    """The program a simple command runs, by its base name (`git grep` and `git ls-files` count as `grep`)."""
    words = strip_prefixes(words)
    if len(words) > 1 and words[0] == "git" and words[1] in ("grep", "ls-files"):
        return "grep"
    return posixpath.basename(words[0]) if words else ""


def words(stage: str) -> list[str]:
    """Shell words of one pipeline stage: quoted strings unquoted, no expansion (fast, lenient)."""
    return [next(group for group in match.groups() if group is not None) for match in WORD.finditer(stage)]


def split_unquoted(text: str, separator: re.Pattern[str]) -> list[str]:
    """The non-empty pieces of a text split at a separator outside quotes (`sed -n '1,9p;20,30p'` is one piece)."""
    pieces, start = [], 0
    masked = QUOTED.sub(lambda found: "\0" * len(found.group()), text)
    for match in separator.finditer(masked):
        pieces.append(text[start : match.start()])
        start = match.end()
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def main_stages(command: str) -> list[str]:
    """The pipeline stages of the last `&&`/`;` segment of the command's first line."""
    first_line = command.strip().split("\n", 1)[0]
    segments = split_unquoted(first_line, SEPARATOR)
    return split_unquoted(segments[-1], PIPE) if segments else []


def first_program(command: str) -> str:
    """The program a command starts with, past `cd …&&` and prefixes (`git grep` stays `git`)."""
    for segment in re.split(r"&&|\|\||;|\n", command):
        found = strip_prefixes(segment.split())
        if found and found[0] != "cd":
            return posixpath.basename(found[0])
    return ""


@lru_cache(maxsize=16_384)
def command_kind(command: str) -> str:
    """`read`, `search` or `command`, from the programs of the command's main pipeline."""
    stages = main_stages(command)
    if not stages or "<<" in command or REDIRECT.search(stages[-1]):
        return "command"
    programs = [program_of(words(stage)) for stage in stages]
    if any(name in SEARCHERS for name in programs):
        return "search"
    first = stages[0]
    reads = programs[0] in READERS or (programs[0] == "sed" and " -n" in f" {first}")
    return "read" if reads and all(name in READ_STAGES for name in programs[1:]) else "command"


@lru_cache(maxsize=16_384)
def searched_files(command: str) -> tuple[str, ...]:
    """The files a `grep`/`rg` of named files searches (`rg -n NAME a.go b.go`), read from the
    first search of the command's first line: its operands past the pattern (counts such as
    `-A 60`'s left out), when each is a path with an extension; () for a search of folders."""
    first_line = command.strip().split("\n", 1)[0]
    search = next((found for found in map(strip_prefixes, simple_commands(first_line)) if program_of(found) in FILE_SEARCHERS), [])
    operands = [word for word in search[2 if search[:1] == ["git"] else 1 :] if not word.startswith("-") and not word.isdigit()]
    files = operands[1:]
    return tuple(files) if files and all(FILE_OPERAND.fullmatch(path) for path in files) else ()


def diffed_file(line: str) -> str | None:
    """The first file of a `git diff` on one line whose paths are all named files and which
    compares them with the working tree (`git diff -- a.go b.go`, `git diff main -- a.go`): it
    shows their current lines, hunk by hunk. A diff of two revisions (`A B`, `A..B`, `A...B`)
    shows past lines, a summary (`--stat`) none, a diff of folders too many files."""
    for found in map(strip_prefixes, simple_commands(line)):
        if found[:2] != ["git", "diff"] or "--" not in found or SUMMARY_ONLY & set(found):
            continue
        split = found.index("--")
        revisions, paths = [word for word in found[2:split] if not word.startswith("-")], found[split + 1 :]
        if len(revisions) < 2 and not any(".." in word for word in revisions) and paths and all(
            FILE_OPERAND.fullmatch(path) for path in paths
        ):
            return paths[0]
    return None


def line_shows(line: str) -> tuple[str, int] | None:
    """(path, first line shown) of the file one line of a command prints: a file read, or the
    hunks of a diff (`diffed_file`, from `DIFF_HUNKS`)."""
    if command_kind(line) == "read":
        return read_target(line)
    path = diffed_file(line)
    return (path, DIFF_HUNKS) if path is not None else None


@lru_cache(maxsize=16_384)
def shown_file(command: str) -> tuple[str, int] | None:
    """(path, first line shown) of the file a command prints: its main pipeline's read, else the
    first of its lines that shows a file's lines (`git diff --stat`, then `sed -n '330,500p' a.go`)."""
    if command_kind(command) == "read":
        return read_target(command)
    lines = (line for line, _ in heredoc_lines(command) if line.strip())
    return next(filter(None, map(line_shows, lines)), None)


def prints_a_file(command: str) -> bool:
    """Whether some line of a command (its heredoc bodies aside) shows a file's lines (`git status`
    then `sed -n '1,90p' a.go`; `git diff -- a.go`)."""
    return shown_file(command) is not None


@lru_cache(maxsize=16_384)
def read_target(command: str) -> tuple[str, int] | None:
    """(path, first line shown) of a `cat`/`nl`/`head`/`sed -n` file read, or None."""
    stages = main_stages(command)
    if not stages:
        return None
    operands = [t for t in words(stages[0])[1:] if not t.startswith("-") and not SED_RANGE.fullmatch(t)]
    if not operands:
        return None
    ranges = [SED_RANGE.match(t) for stage in stages for t in words(stage) if SED_RANGE.match(t)]
    return operands[-1], int(ranges[0].group(1)) if ranges else 1


def heredoc_lines(command: str) -> Iterator[tuple[str, str | None]]:
    """Each logical line of a command with the body of the heredoc it opens (or None)."""
    lines = command.replace("\\\n", " ").split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        while index < len(lines) and not CLOSED_QUOTES.fullmatch(line):
            line += "\n" + lines[index]
            index += 1
        match = HEREDOC.search(line)
        if not match:
            yield line, None
            continue
        strip_tabs, delimiter = match.group(1) == "-", match.group(3)
        body: list[str] = []
        while index < len(lines) and (lines[index].lstrip("\t") if strip_tabs else lines[index]) != delimiter:
            body.append(lines[index])
            index += 1
        index += 1
        yield line[: match.start()] + line[match.end() :], "\n".join(body) + "\n"


def simple_commands(line: str) -> Iterator[list[str]]:
    """The simple commands of one line, as words, split at `&&`, `||`, `;` and pipes.

    A line whose quotes never close is a shell syntax error: nothing of it runs.
    """
    try:
        tokens = shell_tokens(line)
    except ValueError:
        return

    found: list[str] = []
    for token in tokens:
        if token in SEPARATORS:
            if found:
                yield found
            found = []
        else:
            found.append(token)
    if found:
        yield found


def shell_tokens(line: str) -> list[str]:
    """The line's words and operators as POSIX `shlex` splits them (ValueError: a quote never closes).

    A line without escapes or comments, whose quotes all close, is split by one pattern and
    its quotes taken off (the same tokens, several times faster); any other goes through `shlex`.
    """
    if not LEXED.search(line) and not PLAIN_TOKEN.sub("", line).strip(SHELL_SPACE):
        return [UNQUOTED.sub(r"\1\2", token) for token in PLAIN_TOKEN.findall(line)]
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)
