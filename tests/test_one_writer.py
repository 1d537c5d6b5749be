"""One way to write: no module of the package opens a file for writing but `deepmem.vault.writer` (and the
crash-safe primitives of `deepmem.vault.disk` it calls), so every shared file is redacted and every private
file sealed in one place. Calls are read from the source (AST), as the layer tests read imports."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from .test_layers import ROOT, modules

LOW_LEVEL = {"vault.disk", "vault.writer"}
"""Modules (under `deepmem.`) that may open, create or replace a file themselves."""
PRIMITIVES = {"atomic_write": {"vault.writer"}, "append_capped": {"vault.writer"}, "create_once": {"vault.sealed"}}
"""`deepmem.vault.disk`'s write primitives and the modules that may call them (the key file lives outside every project)."""
GIVEN = {"vault.writer", "vault.sessionio", "project.upkeep", "commands.init", "memory.index"}
"""Modules that write bytes as given: the user's `-o` file, installed plugin files, empty markers and `.gitignore`s."""
WRITE_CALLS = {"write_text", "write_bytes", "mkstemp", "NamedTemporaryFile", "TemporaryFile", "fdopen",
               "FileHandler", "RotatingFileHandler", "TimedRotatingFileHandler", "WatchedFileHandler",
               "save_pretrained", "copyfile", "copy2", "copytree", "savetxt", "tofile"}
"""Callables that write a file whatever their arguments."""
OS_WRITES = {"open", "write", "link", "replace", "rename", "symlink"}
WRITE_MODES = set("wax+")


def called_name(node: ast.Call) -> tuple[str, str]:
    """(the object a call is made on, or '' for a bare name; the name called)."""
    func = node.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        return owner, func.attr
    return "", func.id if isinstance(func, ast.Name) else ""


def opens_for_writing(node: ast.Call) -> bool:
    """`open(path, 'w')`, `path.open('a')`, `open(path, mode='x')`: a mode that writes."""
    modes = [arg for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    modes += [kw.value for kw in node.keywords if kw.arg == "mode" and isinstance(kw.value, ast.Constant)]
    return any(isinstance(mode.value, str) and WRITE_MODES & set(mode.value) for mode in modes)


def writes_in(path: Path) -> list[tuple[int, str]]:
    """(line, what) for every call in a module's source that writes a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        owner, name = called_name(node)
        if (name in WRITE_CALLS or (owner == "os" and name in OS_WRITES) or (owner == "shutil" and name.startswith("copy"))
                or (name == "open" and owner != "os" and opens_for_writing(node))):
            found.append((node.lineno, f"{owner + '.' if owner else ''}{name}"))
    return found


def calls_of(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) for every call of one of `names` in a module's source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [(node.lineno, called_name(node)[1]) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and called_name(node)[1] in names]


def short(name: str) -> str:
    return name.removeprefix("deepmem.")


def test_no_module_but_the_writer_writes_a_file() -> None:
    """Opening, creating or replacing a file happens in `deepmem.vault.disk` and `deepmem.vault.writer` alone."""
    wrong = [f"{os.path.relpath(path, ROOT)}:{line}: {what}" for name, path in modules().items()
             if short(name) not in LOW_LEVEL for line, what in writes_in(path)]
    assert not wrong, "files written outside deepmem.vault.writer:\n" + "\n".join(wrong)


def test_the_disk_primitives_are_called_by_the_writer_alone() -> None:
    """Redaction and sealing cannot be skipped by calling the crash-safe replace directly."""
    wrong = [f"{os.path.relpath(path, ROOT)}:{line}: {what}" for name, path in modules().items()
             if short(name) != "vault.disk" for line, what in calls_of(path, set(PRIMITIVES))
             if short(name) not in PRIMITIVES[what]]
    assert not wrong, "disk primitives called outside deepmem.vault.writer:\n" + "\n".join(wrong)


def test_bytes_as_given_come_from_the_few_places_without_session_content() -> None:
    """`write_given` skips redaction, so only the modules that write no session content call it."""
    wrong = [f"{os.path.relpath(path, ROOT)}:{line}" for name, path in modules().items()
             if short(name) not in GIVEN for line, _ in calls_of(path, {"write_given"})]
    assert not wrong, "write_given called where session content may be written:\n" + "\n".join(wrong)


def test_the_walk_finds_a_writer(tmp_path: Path) -> None:
    """The walk is not blind: each way of writing a file is found in a module's source."""
    source = tmp_path / "sample.py"
    source.write_text(
        "import os, shutil, logging.handlers\n"
        "open(p, 'w')\nopen(p)\np.open(mode='ab')\np.write_text('x')\nos.replace(a, b)\n"
        "shutil.copyfile(a, b)\nlogging.handlers.RotatingFileHandler(p)\nos.open(p, flags)\n"
    )
    assert [line for line, _ in writes_in(source)] == [2, 4, 5, 6, 7, 8, 9]
