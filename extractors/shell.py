"""Files a shell command writes, moves or deletes: redirects, sed -i, tee, mv, cp, rm,
patch and git apply, and Python run from a heredoc, `-c` or a script the session wrote."""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator

from deepmem.extractors.patches import patch_targets
from deepmem.extractors.python_writes import python_writes

CLOSED_QUOTES = re.compile(r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|[^'"\\])*""", re.S)
"""A text whose quotes all close (single, double, backslash escapes)."""
HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
DESCRIPTOR_REDIRECTS = frozenset({">&", "<&", "<", "<<<", "<>"})
SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "|&", ";;"})
NOT_FILES = ("/dev/", "/proc/")
NOT_A_PATH = re.compile(r"[*?\[\]$`{}~'\"\s]")
"""Globs, variables, quotes and spaces: a word we cannot name a file by (or a mis-split one)."""
PYTHONS = re.compile(r"^python(\d(\.\d+)?)?$")
PREFIXES = frozenset({"sudo", "time", "env", "nohup", "command"})
SHELLS = frozenset({"bash", "sh", "zsh", "source", "."})
MAY_WRITE = re.compile(r">|<|\b(?:cd|sed|perl|tee|mv|cp|rm|unlink|touch|ln|patch|git|python[\d.]*|bash|sh|zsh|source)\b|\./|^\s*\.\s")
"""Lines without any of these cannot write a file: they skip the tokenizer."""

Write = tuple[str, str]
"""(path as written in the command, action): action is written, deleted or created."""


def command_writes(command: str, scripts: dict[str, str]) -> list[tuple[str, str, str]]:
    """(path, action, directory the path is relative to) for every file the command changes.

    `scripts` maps paths written earlier in the session to their text, so that
    `python fix.py` or `patch -p1 < fix.diff` is followed into what it changes; files
    this command writes from a heredoc are added to it.
    """
    found: list[tuple[str, str, str]] = []
    cwd = ""
    for line, body in heredoc_lines(command):
        if body is None and not MAY_WRITE.search(line):
            continue
        for words in simple_commands(line):
            if words[:1] == ["cd"]:
                cwd = posixpath.join(cwd, words[1]) if len(words) > 1 else ""
                continue
            for path, action in simple_command_writes(words, body, scripts):
                found.append((path, action, cwd))
                if body is not None and action == "written":
                    scripts[posixpath.normpath(posixpath.join(cwd, path))] = body
    return found


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
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return

    words: list[str] = []
    for token in tokens:
        if token in SEPARATORS:
            if words:
                yield words
            words = []
        else:
            words.append(token)
    if words:
        yield words


def simple_command_writes(words: list[str], body: str | None, scripts: dict[str, str]) -> list[Write]:
    """What one simple command changes: its redirect targets plus its program's own writes."""
    writes: list[Write] = []
    plain: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in REDIRECTS and index + 1 < len(words):
            writes.append((words[index + 1], "written"))
            index += 2
            continue
        if word in DESCRIPTOR_REDIRECTS and index + 1 < len(words):
            if body is None and word == "<":
                body = scripts.get(posixpath.normpath(words[index + 1]))
            index += 2
            continue
        if not (word.isdigit() and index + 1 < len(words) and words[index + 1] in REDIRECTS | DESCRIPTOR_REDIRECTS):
            plain.append(word)
        index += 1
    writes.extend(program_writes(_strip_prefixes(plain), body, scripts))
    return [(path, action) for path, action in writes if _is_file_path(path)]


def _strip_prefixes(words: list[str]) -> list[str]:
    while words and (words[0] in PREFIXES or re.match(r"^[A-Za-z_]\w*=", words[0])):
        words = words[1:]
    return words


def program_writes(words: list[str], body: str | None, scripts: dict[str, str]) -> list[Write]:
    """The files a program changes through its arguments (sed -i, tee, mv, cp, rm, patch…)."""
    if not words:
        return []
    program, args = posixpath.basename(words[0]), words[1:]
    operands = [arg for arg in args if not arg.startswith("-")]
    if program == "sed" and any(arg.startswith("-i") or arg == "--in-place" for arg in args):
        return [(path, "written") for path in _sed_files(args)]
    if program == "perl" and any(arg.startswith("-i") or (arg.startswith("-") and "i" in arg[1:]) for arg in args):
        return [(path, "written") for path in operands[1:]]
    if program == "tee":
        return [(path, "written") for path in operands]
    if program in ("mv", "cp") and len(operands) >= 2:
        target = operands[-1]
        moved = [(_into(target, source), "written") for source in operands[:-1]]
        if program == "mv":
            moved += [(source, "deleted") for source in operands[:-1]]
        return moved
    if program in ("rm", "unlink"):
        return [(path, "deleted") for path in operands]
    if program == "touch":
        return [(path, "created") for path in operands]
    if program == "ln" and len(operands) >= 2:
        return [(_into(operands[-1], operands[0]), "created")]
    if program in SHELLS or program.endswith(".sh") or words[0].startswith("./"):
        return _script_writes(words[0] if program not in SHELLS else (operands or ["-"])[0], body, scripts)
    if program == "patch" or (program == "git" and args[:1] == ["apply"]):
        return _patch_writes(program, operands, body, scripts)
    if PYTHONS.match(program):
        return _python_writes(args, body, scripts)
    return []


def _sed_files(args: list[str]) -> list[str]:
    """Files of `sed -i`: every operand after the script (or all of them with -e/-f)."""
    files: list[str] = []
    script_given = False
    skip_next = False
    for arg in args:
        if skip_next:
            skip_next = False
            continue
        if arg in ("-e", "-f", "--expression", "--file"):
            script_given, skip_next = True, True
        elif arg.startswith("-"):
            continue
        elif not script_given:
            script_given = True
        else:
            files.append(arg)
    return files


def _into(target: str, source: str) -> str:
    """The path a copy or move lands on: inside target when it names a folder (`dir/`)."""
    return posixpath.join(target, posixpath.basename(source)) if target.endswith("/") else target


def _patch_writes(program: str, operands: list[str], body: str | None, scripts: dict[str, str]) -> list[Write]:
    texts = [body] if body else []
    patch_files = operands[1:] if program == "git" else operands
    texts += [scripts[path] for path in map(posixpath.normpath, patch_files) if path in scripts]
    return [target for text in texts for target in patch_targets(text)]


def _python_writes(args: list[str], body: str | None, scripts: dict[str, str]) -> list[Write]:
    """Writes of `python - <<EOF`, `python -c CODE` and `python script.py` (when known)."""
    if "-c" in args:
        position = args.index("-c")
        return list(python_writes(args[position + 1])) if position + 1 < len(args) else []
    operands = [arg for arg in args if not arg.startswith("-")]
    script = scripts.get(posixpath.normpath(operands[0])) if operands else None
    if script is not None:
        return list(python_writes(script))
    if body is not None and (not operands or operands[0] == "-"):
        return list(python_writes(body))
    return []


def _script_writes(script: str, body: str | None, scripts: dict[str, str]) -> list[Write]:
    """Writes of a shell script the session wrote earlier (or fed on stdin), followed once."""
    key = posixpath.normpath(script)
    text = scripts.pop(key, None) if script != "-" else body
    if text is None:
        return []
    try:
        return [(posixpath.join(cwd, path), action) for path, action, cwd in command_writes(text, scripts)]
    finally:
        if script != "-":
            scripts[key] = text


def _is_file_path(path: str) -> bool:
    return bool(path) and not path.startswith(NOT_FILES) and not NOT_A_PATH.search(path) and not path.startswith("&")
