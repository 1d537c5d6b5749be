"""Code mode: a tool call whose input is a script that calls the agent's other tools.

Codex's `exec` runs JavaScript such as `const r = await tools.exec_command({cmd: "sed -n
'1,80p' f.go"}); text(r.output);` or `tools.apply_patch("*** Begin Patch …")`. What the
call does is in the string literals it passes: the shell commands (`cmd:`) and the patch
texts (`*** Begin Patch`). They are read here as a `bash` command and an `apply_patch`
patch are, so a file the script prints is a view and a file it patches is edited. A script
that passes `cmd` by name (`const cmds = [["algo", "sed -n '330,500p' a.go"]]; …
tools.exec_command({cmd, workdir})`) runs the string literals it holds that read as a
command line (a program, a space, more words), its labels and paths aside.
"""

from __future__ import annotations

import re
from functools import lru_cache

COMMAND = re.compile(r"""\bcmd["']?\s*:\s*("(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`)""", re.S)
"""A `cmd` property (`cmd:` or `"cmd":`) given as a double-quoted string or a template literal."""
PATCH = re.compile(r'''("\*\*\* Begin Patch(?:[^"\\\n]|\\.)*"|`\*\*\* Begin Patch(?:[^`\\]|\\.)*`)''', re.S)
"""A string literal holding a patch in OpenCode's `*** Begin Patch` format."""
COMMAND_BY_NAME = re.compile(r"""\bcmd["']?\s*(?::\s*[A-Za-z_$][\w$.\[\]]*\s*)?[,}]""")
"""A `cmd` property given by a name (`{cmd, …}`, `{cmd: c.cmd}`), not a literal."""
STRING = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)""", re.S)
"""A JavaScript string literal: double-quoted, single-quoted or a template literal."""
COMMAND_LINE = re.compile(r"[\w./-]+[ \t]+[^\s,;:]")
"""A string that reads as a command line: a program name, a space and another word (no `${…}`)."""
ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.S)
SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "\n": ""}


def unescaped(escape: re.Match[str]) -> str:
    """The character one JavaScript escape stands for."""
    code = escape.group(1)
    if code[0] in "ux" and len(code) > 1:
        return chr(int(code[1:].strip("{}"), 16))
    return SIMPLE_ESCAPES.get(code, code)


def string_value(literal: str) -> str:
    """The value of a JavaScript string literal (quotes off, escapes undone)."""
    return ESCAPE.sub(unescaped, literal[1:-1])


@lru_cache(maxsize=4096)
def script_inputs(code: str) -> dict[str, str]:
    """The shell commands (`command`, one a line) and patches (`patchText`) a script passes
    to the tools it calls; none when it passes neither."""
    commands = [string_value(literal) for literal in COMMAND.findall(code)]
    if COMMAND_BY_NAME.search(code):
        commands += [value for value in map(string_value, STRING.findall(code))
                     if COMMAND_LINE.match(value) and "${" not in value and value not in commands]
    patches = [string_value(literal) for literal in PATCH.findall(code)]
    found = {"command": "\n".join(commands), "patchText": "\n".join(patches)}
    return {key: value for key, value in found.items() if value}
