"""Files a shell command writes, moves or deletes: redirects, sed -i, tee, mv, cp, rm,
git mv / git rm, patch and git apply, and Python run from a heredoc, `-c` or a script the
session wrote. Commands are read by the one shell parser, `deepmem.toolcalls.shell`."""

from __future__ import annotations

import posixpath
import re

from deepmem.toolcalls.changes import FileChange
from deepmem.toolcalls.patches import patch_targets
from deepmem.toolcalls.python_writes import python_writes
from deepmem.toolcalls.shell import heredoc_lines, simple_commands, strip_prefixes

REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
DESCRIPTOR_REDIRECTS = frozenset({">&", "<&", "<", "<<<", "<>"})
NOT_FILES = ("/dev/", "/proc/")
NOT_A_PATH = re.compile(r"[*?\[\]$`{}~'\"\s]")
"""Globs, variables, quotes and spaces: a word we cannot name a file by (or a mis-split one)."""
PYTHONS = re.compile(r"^python(\d(\.\d+)?)?$")
SHELLS = frozenset({"bash", "sh", "zsh", "source", "."})
MAY_WRITE = re.compile(r">|<|\b(?:cd|sed|perl|tee|mv|cp|rm|unlink|touch|ln|patch|git|python[\d.]*|bash|sh|zsh|source)\b|\./|^\s*\.\s")
"""Lines without any of these cannot write a file: they skip the tokenizer."""


def command_writes(command: str, scripts: dict[str, str]) -> list[FileChange]:
    """Every file the command changes, its path joined to the folder a `cd` in the command moved to.

    `scripts` maps paths written earlier in the session to their text, so that
    `python fix.py` or `patch -p1 < fix.diff` is followed into what it changes; files
    this command writes from a heredoc are added to it.
    """
    found: list[FileChange] = []
    cwd = ""
    for line, body in heredoc_lines(command):
        if body is None and not MAY_WRITE.search(line):
            continue
        for words in simple_commands(line):
            if words[:1] == ["cd"]:
                cwd = posixpath.join(cwd, words[1]) if len(words) > 1 else ""
                continue
            for change in simple_command_writes(words, body, scripts):
                found.append(_in_folder(change, cwd))
                if body is not None and change.action == "written":
                    scripts[posixpath.normpath(posixpath.join(cwd, change.path))] = body
    return found


def _in_folder(change: FileChange, cwd: str) -> FileChange:
    """The change with its paths taken relative to `cwd` (unchanged when `cwd` is '')."""
    if not cwd:
        return change
    moved_from = posixpath.join(cwd, change.moved_from) if change.moved_from else ""
    return FileChange(posixpath.join(cwd, change.path), change.action, moved_from)


def simple_command_writes(words: list[str], body: str | None, scripts: dict[str, str]) -> list[FileChange]:
    """What one simple command changes: its redirect targets plus its program's own writes."""
    changes: list[FileChange] = []
    plain: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in REDIRECTS and index + 1 < len(words):
            changes.append(FileChange(words[index + 1], "written"))
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
    changes.extend(program_writes(strip_prefixes(plain), body, scripts))
    return [change for change in changes if _is_file_path(change.path)]


def program_writes(words: list[str], body: str | None, scripts: dict[str, str]) -> list[FileChange]:
    """The files a program changes through its arguments (sed -i, tee, mv, cp, rm, patch…)."""
    if not words:
        return []
    program, args = posixpath.basename(words[0]), words[1:]
    if program == "git" and args[:1] in (["mv"], ["rm"]):
        program, args = args[0], args[1:]
        if "--cached" in args:
            return []
    operands = [arg for arg in args if not arg.startswith("-")]
    if program == "sed" and any(arg.startswith("-i") or arg == "--in-place" for arg in args):
        return [FileChange(path, "written") for path in _sed_files(args)]
    if program == "perl" and any(arg.startswith("-i") or (arg.startswith("-") and "i" in arg[1:]) for arg in args):
        return [FileChange(path, "written") for path in operands[1:]]
    if program == "tee":
        return [FileChange(path, "written") for path in operands]
    if program in ("mv", "cp") and len(operands) >= 2:
        return _copies(program == "mv", operands[:-1], operands[-1])
    if program in ("rm", "unlink"):
        return [FileChange(path, "deleted") for path in operands]
    if program == "touch":
        return [FileChange(path, "created") for path in operands]
    if program == "ln" and len(operands) >= 2:
        return [FileChange(_into(operands[-1], operands[0]), "created")]
    if program in SHELLS or program.endswith(".sh") or words[0].startswith("./"):
        return _script_writes(words[0] if program not in SHELLS else (operands or ["-"])[0], body, scripts)
    if program == "patch" or (program == "git" and args[:1] == ["apply"]):
        return _as_changes(_patch_writes(program, operands, body, scripts))
    if PYTHONS.match(program):
        return _as_changes(_python_writes(args, body, scripts))
    return []


def _copies(move: bool, sources: list[str], target: str) -> list[FileChange]:
    """`cp` writes each target; `mv` also deletes each source, and names it on the target it moved to."""
    landed = [
        FileChange(_into(target, source), "written", source if move and _is_file_path(source) else "") for source in sources
    ]
    return landed + [FileChange(source, "deleted") for source in sources] if move else landed


def _as_changes(pairs: list[tuple[str, str]]) -> list[FileChange]:
    """(path, action) pairs of the patch and Python readers as changes."""
    return [FileChange(path, action) for path, action in pairs]


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


def _patch_writes(program: str, operands: list[str], body: str | None, scripts: dict[str, str]) -> list[tuple[str, str]]:
    """Files changed by `patch` or `git apply` fed a heredoc or a patch file the session wrote."""
    texts = [body] if body else []
    patch_files = operands[1:] if program == "git" else operands
    texts += [scripts[path] for path in map(posixpath.normpath, patch_files) if path in scripts]
    return [target for text in texts for target in patch_targets(text)]


def _python_writes(args: list[str], body: str | None, scripts: dict[str, str]) -> list[tuple[str, str]]:
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


def _script_writes(script: str, body: str | None, scripts: dict[str, str]) -> list[FileChange]:
    """Writes of a shell script the session wrote earlier (or fed on stdin), followed once."""
    key = posixpath.normpath(script)
    text = scripts.pop(key, None) if script != "-" else body
    if text is None:
        return []
    try:
        return command_writes(text, scripts)
    finally:
        if script != "-":
            scripts[key] = text


def _is_file_path(path: str) -> bool:
    """A word that names one file (no glob, variable, quote or device)."""
    return bool(path) and not path.startswith(NOT_FILES) and not NOT_A_PATH.search(path) and not path.startswith("&")
