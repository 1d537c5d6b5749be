"""Layers you can see: every import of a deepmem package points down the table, never up.

Lowest first; a package may import its own group and any group of a lower layer:

| layer | group | packages |
|---|---|---|
| 0 | ground | the loose modules every part uses (`types`, `tokens`, `markers`, `part_marks`, `lru`, `phrasing`, `history`) and `text/`, `toolcalls/`, `models/` |
| 1 | vault, bill | `deepmem.vault`; `deepmem.bill` (neither imports the other) |
| 2 | project | `deepmem.project` |
| 3 | compressors, extractors | `deepmem.compressors`; `deepmem.extractors` |
| 4 | transform | `deepmem.transform` |
| 5 | memory | `deepmem.memory` |
| 6 | checkpoints, replay | `deepmem.checkpoints`; `deepmem.replay` |
| 7 | bridge | `deepmem.bridge` |
| 8 | cli | `deepmem.cli`, `deepmem.commands`, `deepmem.__main__` |

What a tool call touches (`toolcalls/`) and how decisions are phrased (`phrasing`) are
ground: compressors, extractors and the transform all ask them. Imports are read from the
source (AST), `if TYPE_CHECKING:` blocks and imports inside functions included; the
bridge's lazy features (`importlib` by module name) are not imports and are not checked.
No module sits loose in `deepmem/` unless it is named in GROUND or is an entry point, so a
new module has to say which part it belongs to. The same table is in docs/architecture.md.
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
    ("ground",),
    ("vault", "bill"),
    ("project",),
    ("compressors", "extractors"),
    ("transform",),
    ("memory",),
    ("checkpoints", "replay"),
    ("bridge",),
    ("cli",),
)
"""Groups, lowest layer first."""

GROUPS: dict[str, str] = {
    "deepmem.vault": "vault",
    "deepmem.bill": "bill",
    "deepmem.project": "project",
    "deepmem.compressors": "compressors",
    "deepmem.extractors": "extractors",
    "deepmem.transform": "transform",
    "deepmem.memory": "memory",
    "deepmem.checkpoints": "checkpoints",
    "deepmem.replay": "replay",
    "deepmem.bridge": "bridge",
    "deepmem.cli": "cli",
    "deepmem.commands": "cli",
    "deepmem.__main__": "cli",
}
"""Package or entry point → its group; the longest matching name wins, anything else is ground."""

GROUND = frozenset(
    {
        "deepmem",
        "deepmem.types",
        "deepmem.tokens",
        "deepmem.markers",
        "deepmem.part_marks",
        "deepmem.lru",
        "deepmem.phrasing",
        "deepmem.history",
        "deepmem.text",
        "deepmem.toolcalls",
        "deepmem.models",
        "deepmem.plugin",
    }
)
"""The ground floor: the loose modules and the packages every part uses."""

RANK = {group: rank for rank, groups in enumerate(LAYERS) for group in groups}


def group_of(module: str) -> str:
    """The group of a deepmem module (see GROUPS)."""
    names = [name for name in GROUPS if module == name or module.startswith(f"{name}.")]
    return GROUPS[max(names, key=len)] if names else "ground"


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
    assert set(GROUPS.values()) | {"ground"} == set(RANK)


def package_of(module: str) -> str:
    """The top-level package (or loose module) of `deepmem` a module belongs to."""
    return ".".join(module.split(".")[:2])


def test_every_loose_module_is_ground_or_an_entry_point() -> None:
    """`deepmem/` holds the entry points and the ground floor; every other module is in the
    package of its part, and the ground floor stays small."""
    loose = {package_of(name) for name in modules()} - set(GROUPS)
    assert loose <= GROUND, f"modules with no part: {sorted(loose - GROUND)}"
    top = list((ROOT / "deepmem").glob("*.py"))
    assert len(top) <= 10, sorted(path.name for path in top)


def test_packages_point_down_the_layers() -> None:
    """Package to package: no package imports a higher layer or another group of its own layer,
    and no chain of package imports returns to where it started."""
    edges: dict[str, set[str]] = {}
    for name, targets in graph().items():
        for _, target in targets:
            if package_of(target) != package_of(name):
                edges.setdefault(package_of(name), set()).add(package_of(target))
    wrong = [
        f"{source} ({group_of(source)}) imports {target} ({group_of(target)})"
        for source, targets in sorted(edges.items())
        for target in sorted(targets)
        if group_of(source) != group_of(target) and RANK[group_of(target)] >= RANK[group_of(source)]
    ]
    assert not wrong, "package imports against the layers:\n" + "\n".join(wrong)
    assert not cycles(edges), "package cycles:\n" + "\n".join(cycles(edges))


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


def cycles(edges: dict[str, set[str]] | dict[str, list[str]]) -> list[str]:
    """Every chain of edges found to return to a node on it (depth first, names in order)."""
    state: dict[str, str] = {}
    found = []

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in sorted(edges.get(name, ())):
            if state.get(target) == "open":
                found.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in sorted(edges):
        if name not in state:
            visit(name, [name])
    return found


def test_no_import_cycles() -> None:
    """No chain of imports leads from a module back to itself (inside a group too)."""
    edges = {name: sorted({target for _, target in targets} - {name}) for name, targets in graph().items()}
    assert not cycles(edges), "import cycles:\n" + "\n".join(cycles(edges))


def test_every_module_of_the_compressors_package_is_a_compressor() -> None:
    """Each module of `deepmem.compressors` is a compressor a route names, its NAME its module
    name (text helpers live in `deepmem.text`, the shell parser in `deepmem.toolcalls`)."""
    names = {info.name for info in pkgutil.iter_modules(compressors.__path__)}
    assert names == set(compressors.REGISTRY)
    for name, module in compressors.REGISTRY.items():
        assert module.NAME == name and callable(module.compress), name


def test_the_schedule_is_entered_once_from_the_plan() -> None:
    """The transform reads in one direction: only the plan imports the schedule, and it calls
    `schedule_layout` once; the layout, prices and sizes come back in one `Schedule`."""
    importers = sorted(
        name for name, targets in graph().items() if any(target.startswith("deepmem.transform.schedule") for _, target in targets)
    )
    assert importers == ["deepmem.transform.plan"], importers
    tree = ast.parse(modules()["deepmem.transform.plan"].read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "schedule_layout"]
    assert len(calls) == 1
