"""Layers you can see: every import of a deepmem module points down the table, never up.

Lowest first; a module may import its own group and any group of a lower layer:

| layer | group | modules |
|---|---|---|
| 0 | core | every `deepmem.*` module not named below: `types`, `config`, `disk`, `lru`, `history`, `ccr`, `text/`, `toolcalls/`, `phrasing`, … |
| 1 | compressors, extractors | `deepmem.compressors`; `deepmem.extractors` (two groups: neither imports the other) |
| 2 | transform | `facts`, `working_set`, `nudges`, `outcomes`, `schedule`, `plan` |
| 3 | memory | `deepmem.memory` |
| 4 | checkpoints, replay | `deepmem.checkpoints`; `deepmem.replay`, `deepmem.audit` |
| 5 | bridge | `deepmem.bridge` |
| 6 | cli | `deepmem.cli`, `deepmem.commands`, `deepmem.__main__` |

What a tool call touches (`toolcalls/`) and how decisions are phrased (`phrasing`) are
core: compressors, extractors and the transform all ask them. Imports are read from the
source (AST), `if TYPE_CHECKING:` blocks and imports inside functions included; the
bridge's lazy features (`importlib` by module name) are not imports and are not checked.
The same table is in docs/architecture.md.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import pkgutil
import tomllib
from pathlib import Path

from deepmem import compressors

ROOT = Path(__file__).resolve().parent.parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("compressors", "extractors"),
    ("transform",),
    ("memory",),
    ("checkpoints", "replay"),
    ("bridge",),
    ("cli",),
)
"""Groups, lowest layer first."""

GROUPS: dict[str, str] = {
    "deepmem.compressors": "compressors",
    "deepmem.facts": "transform",
    "deepmem.working_set": "transform",
    "deepmem.nudges": "transform",
    "deepmem.outcomes": "transform",
    "deepmem.schedule": "transform",
    "deepmem.plan": "transform",
    "deepmem.extractors": "extractors",
    "deepmem.memory": "memory",
    "deepmem.checkpoints": "checkpoints",
    "deepmem.replay": "replay",
    "deepmem.audit": "replay",
    "deepmem.bridge": "bridge",
    "deepmem.cli": "cli",
    "deepmem.commands": "cli",
    "deepmem.__main__": "cli",
}
"""Module or package → its group; the longest matching name wins, any other module is core."""

RANK = {group: rank for rank, groups in enumerate(LAYERS) for group in groups}


def group_of(module: str) -> str:
    """The group of a deepmem module (see GROUPS)."""
    names = [name for name in GROUPS if module == name or module.startswith(f"{name}.")]
    return GROUPS[max(names, key=len)] if names else "core"


def modules() -> dict[str, Path]:
    """Every module of every package pyproject.toml ships (the `compressors/` and `extractors/`
    folders mapped inside deepmem included), by dotted name, with its source file."""
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    found = {}
    for package in packages:
        for info in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
            spec = importlib.util.find_spec(info.name)
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                found[info.name] = Path(spec.origin)
        found[package] = Path(importlib.import_module(package).__file__ or "")
    return found


def imports(name: str, path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, deepmem module) for every import in a module's source."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = name.split(".")[: len(name.split(".")) - (0 if is_package else 1) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.append((node.lineno, target if target in known else base))
    return [(line, target) for line, target in found if target == "deepmem" or target.startswith("deepmem.")]


def graph() -> dict[str, list[tuple[int, str]]]:
    """Each deepmem module's deepmem imports."""
    found = modules()
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def test_every_group_has_a_layer() -> None:
    """The table names no group twice and leaves none out."""
    assert len(RANK) == sum(len(groups) for groups in LAYERS)
    assert set(GROUPS.values()) | {"core"} == set(RANK)


def test_imports_point_down_the_layers() -> None:
    """No module imports a higher layer, or another group of its own layer."""
    found = modules()
    wrong = []
    for name, targets in graph().items():
        group = group_of(name)
        for line, target in targets:
            other = group_of(target)
            if other != group and RANK[other] >= RANK[group]:
                wrong.append(
                    f"{os.path.relpath(found[name], ROOT)}:{line}: {name} ({group}, layer {RANK[group]}) imports "
                    f"{target} ({other}, layer {RANK[other]})"
                )
    assert not wrong, "imports against the layers (tests/test_layers.py):\n" + "\n".join(wrong)


def test_no_import_cycles() -> None:
    """No chain of imports leads from a module back to itself (inside a group too)."""
    edges = {name: sorted({target for _, target in targets} - {name}) for name, targets in graph().items()}
    state: dict[str, str] = {}
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in edges.get(name, ()):
            if state.get(target) == "open":
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_every_module_of_the_compressors_package_is_a_compressor() -> None:
    """Each module of `deepmem.compressors` is a compressor a route names, its NAME its module
    name (text helpers live in `deepmem.text`, the shell parser in `deepmem.toolcalls`)."""
    names = {info.name for info in pkgutil.iter_modules(compressors.__path__)}
    assert names == set(compressors.REGISTRY)
    for name, module in compressors.REGISTRY.items():
        assert module.NAME == name and callable(module.compress), name
