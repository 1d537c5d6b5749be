"""Files a Python snippet writes, found statically (a heredoc, `python -c`, or a script)."""

from __future__ import annotations

import ast
import re
from functools import lru_cache

WRITE_MODE = re.compile(r"[wax+]")
WRITE_METHODS = frozenset({"write_text", "write_bytes", "touch", "unlink", "rename", "replace"})
MOVE_FUNCTIONS = frozenset({"rename", "replace", "move", "copy", "copyfile", "copy2", "symlink", "link"})
SAVE_METHODS = frozenset({"write", "writeto", "savefig", "save", "dump", "to_csv", "to_json", "to_excel", "to_parquet", "to_netcdf", "to_hdf"})
"""Library calls that save to the file named by their first argument (Table.write, plt.savefig…)."""
FILE_NAME = re.compile(r"^[\w./-]*\w\.[A-Za-z]\w{0,5}$")
MAY_WRITE = re.compile(r"open\(|write|save|dump|to_\w+\(|rename|replace|remove|unlink|symlink|link\(|move|copy|touch")
DELETE_FUNCTIONS = frozenset({"remove", "unlink"})
OPEN_FOR_WRITE = re.compile(r"""open\(\s*(['"])([^'"\n]+)\1\s*,\s*(['"])[^'"]*[wax+]""")


@lru_cache(maxsize=1024)
def python_writes(code: str) -> tuple[tuple[str, str], ...]:
    """(path, action) for files the code opens for writing, writes, moves or deletes."""
    if not MAY_WRITE.search(code):
        return ()
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return tuple((match.group(2), "written") for match in OPEN_FOR_WRITE.finditer(code))
    nodes = list(ast.walk(tree))  # walked once, read twice
    names = _string_bindings(nodes)
    found: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Call):
            for target, action in _call_writes(node, names):
                for path in target:
                    found.setdefault(path, action)
    return tuple(found.items())


def _string_bindings(nodes: list[ast.AST]) -> dict[str, list[str]]:
    """Names bound to string constants (or loops over lists of them), last binding wins, in the
    order the nodes come."""
    names: dict[str, list[str]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = _strings(node.value, names)
            if values:
                names[node.targets[0].id] = values
        elif isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name):
            values = _strings(node.iter, names)
            if values:
                names[node.target.id] = values
    return names


def _strings(node: ast.AST, names: dict[str, list[str]]) -> list[str]:
    """The string values an expression stands for: a constant, a name, Path(…), a list."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Name):
        return names.get(node.id, [])
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [value for element in node.elts for value in _strings(element, names)]
    if isinstance(node, ast.Call) and _callee(node) in ("Path", "PurePath", "str") and len(node.args) == 1:
        return _strings(node.args[0], names)
    return []


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _call_writes(node: ast.Call, names: dict[str, list[str]]) -> list[tuple[list[str], str]]:
    """What one call writes: open(…, 'w'), p.write_text(…), os.rename(a, b), os.remove(a)…"""
    name = _callee(node)
    args = node.args
    if name == "open" and args and _is_write_mode(node):
        return [(_strings(args[0], names), "written")]
    if isinstance(node.func, ast.Attribute) and name in WRITE_METHODS:
        owner = _strings(node.func.value, names)
        if owner:
            action = "deleted" if name == "unlink" else "written"
            return [(owner, action)]
    if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        module = node.func.value.id
        if module in ("os", "shutil") and name in MOVE_FUNCTIONS and len(args) == 2:
            moved = [(_strings(args[1], names), "written")]
            if name in ("rename", "replace", "move"):
                moved.append((_strings(args[0], names), "deleted"))
            return moved
        if module == "os" and name in DELETE_FUNCTIONS and args:
            return [(_strings(args[0], names), "deleted")]
    if name in SAVE_METHODS and args:
        return [([path for path in _strings(args[0], names) if FILE_NAME.match(path)], "written")]
    return []


def _is_write_mode(node: ast.Call) -> bool:
    mode: ast.AST | None = node.args[1] if len(node.args) > 1 else None
    for keyword in node.keywords:
        if keyword.arg == "mode":
            mode = keyword.value
    return isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(WRITE_MODE.search(mode.value))
