"""The shell parser: what kind of command a text is, the file a read shows, the program it starts with."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepmem.toolcalls.shell import (
    DIFF_HUNKS,
    command_kind,
    first_program,
    heredoc_lines,
    prints_a_file,
    read_target,
    searched_files,
    shell_tokens,
    shown_file,
    simple_commands,
)

COMMANDS = [
    ("cat -n src/a.py", "read", ("src/a.py", 1), "cat"),
    ("cd /testbed && sed -n '120,160p' django/db/models/query.py", "read", ("django/db/models/query.py", 120), "sed"),
    ("nl -ba a.py | sed -n '40,60p'", "read", ("a.py", 40), "nl"),
    ("sed -n '480,555p;1350,1410p' internal/sem/search.go", "read", ("internal/sem/search.go", 480), "sed"),
    ("nl -ba a.go | sed -n '340,520p;1530,1695p'", "read", ("a.go", 340), "nl"),
    ("sudo cat /etc/hosts", "read", ("/etc/hosts", 1), "cat"),
    ("PYTHONPATH=. head -n 5 a.py", "read", ("a.py", 1), "head"),
    ("grep -rn 'def foo' src", "search", None, "grep"),
    ("git grep -n foo", "search", None, "git"),
    ("cat a.py | grep foo", "search", None, "cat"),
    ('rg -n "pre.?index|index|timer" /tmp/out config.json | head -240', "search", None, "rg"),
    ("cat a.py > b.py", "command", None, "cat"),
    ("cat > f.py <<'EOF'\nx = 1\nEOF", "command", None, "cat"),
    ("python -m pytest tests/test_a.py -q", "command", None, "python"),
    ("time env X=1 python t.py", "command", None, "python"),
]


@pytest.mark.parametrize(("command", "kind", "target", "program"), COMMANDS)
def test_a_command_read_three_ways(command: str, kind: str, target: tuple[str, int] | None, program: str) -> None:
    """Kind of the main pipeline, the file a read shows (and its first line), the first program."""
    assert command_kind(command) == kind
    if kind == "read":
        assert read_target(command) == target
    assert first_program(command) == program


SEARCHES = [
    ('rg -n "ProfileFast|CONSTRUCTS" internal/sem/provider_test.go internal/sem/provider.go',
     ("internal/sem/provider_test.go", "internal/sem/provider.go")),
    ("grep -n -A 60 name file.go", ("file.go",)),
    ("cd /repo && git grep -n foo a.py | head -40", ("a.py",)),
    ("rg -n foo internal/sem", ()),
    ("grep -rn foo src/a.py src/", ()),
    ("rg -n foo -g '*.go' a.go", ()),
    ("rg --files", ()),
    ("cat a.py", ()),
]


@pytest.mark.parametrize(("command", "files"), SEARCHES)
def test_a_search_of_named_files_names_them(command: str, files: tuple[str, ...]) -> None:
    """A search's operands past the pattern are its files when each is a path with an extension; a folder or glob names none."""
    assert searched_files(command) == files


@pytest.mark.parametrize(("command", "prints"), [
    ("git status --short --branch\nsed -n '1,190p' internal/sem/search.go", True),
    ("git diff --stat\nnl -ba a.go | sed -n '40,80p'", True),
    ("cat > fix.py <<'EOF'\ncat a.py\nEOF", False),
    ("go test ./...\ngit status", False),
    ("git diff --check && git diff -- a.go", True),
    ("git diff HEAD~1 HEAD -- a.go", False),
])
def test_a_command_prints_a_file_when_any_of_its_lines_reads_one(command: str, prints: bool) -> None:
    """A line that reads a file counts wherever it stands; a line inside a heredoc body is text, not a command."""
    assert prints_a_file(command) is prints


@pytest.mark.parametrize(("command", "shown"), [
    ("git diff --stat\nsed -n '330,500p' internal/sem/analyze.go\nsed -n '1,380p' b.go", ("internal/sem/analyze.go", 330)),
    ("git diff -- internal/sem/analyze.go internal/sem/analyze_test.go", ("internal/sem/analyze.go", DIFF_HUNKS)),
    ("git diff --check && git diff main -- a.go | sed -n '1,260p'", ("a.go", DIFF_HUNKS)),
    ("git diff --no-ext-diff --unified=35 617fc5e^ 617fc5e -- a.go", None),
    ("git diff origin/main...HEAD -- a.go", None),
    ("git diff --stat -- a.go", None),
    ("git diff origin/HEAD...HEAD -- .claude docs", None),
    ("git show HEAD", None),
])
def test_the_file_a_command_shows(command: str, shown: tuple[str, int] | None) -> None:
    """A read on any line shows its file from its first line; a diff of named files against the working tree
    shows the first one's hunks; a diff of two revisions, a summary, folders or a commit none."""
    assert shown_file(command) == shown


def test_heredoc_bodies_belong_to_their_line() -> None:
    """A heredoc's body is data: it comes with the line that opens it, never as commands."""
    lines = list(heredoc_lines("cat > f.sh <<'EOF'\nrm -rf /\nEOF\nbash f.sh"))
    assert lines == [("cat > f.sh ", "rm -rf /\n"), ("bash f.sh", None)]


def test_simple_commands_split_outside_quotes_only() -> None:
    """`;`, `&&` and pipes inside quotes stay in their word; a line with an open quote runs nothing."""
    assert list(simple_commands("sed -i '31d;40d' m.py && echo 'a | b' | tee log")) == [
        ["sed", "-i", "31d;40d", "m.py"], ["echo", "a | b"], ["tee", "log"],
    ]
    assert list(simple_commands("echo 'unclosed")) == []


def split_by_shlex(line: str) -> list[str]:
    """The line as POSIX `shlex` splits it, shell punctuation apart."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    return list(lexer)


def split_or_error(split: Callable[[str], list[str]], line: str) -> list[str] | str:
    """The tokens, or `error` when the line's quotes never close."""
    try:
        return split(line)
    except ValueError:
        return "error"


@given(st.text(alphabet=st.sampled_from(list("ab1 \t\r\n();<>|&-./*?=~$`{}!é\x00\x0b'\"'\"")), max_size=60))
def test_lines_split_as_shlex_splits_them(line: str) -> None:
    """Quoted or not, closed or not, a line gives `shlex`'s own tokens (or its error)."""
    assert split_or_error(shell_tokens, line) == split_or_error(split_by_shlex, line)


@pytest.mark.parametrize(
    "line", ["echo 'a b' > c", 'x="1 2"; y', "a'b'\"c\"d", "''", "a\\ b", "ls # note", "cat 'open", 'say "it\'s"']
)
def test_quoted_escaped_and_commented_lines(line: str) -> None:
    """Closed quotes are taken off by the quick split; escapes and comments go to `shlex`."""
    assert split_or_error(shell_tokens, line) == split_or_error(split_by_shlex, line)
