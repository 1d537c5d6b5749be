"""`deepmem init`: install the OpenCode plugin and its commands (or remove them with --uninstall).

The plugin file is copied unchanged; the interpreter of the current environment is pinned
in a sidecar `deepmem.json` next to it, which the plugin reads to start the engine.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import resources
from pathlib import Path

import orjson

from deepmem import __version__
from deepmem.checkpoints.slash import SLASH_COMMANDS
from deepmem.cli import add_root
from deepmem.project.config import memory_dir
from deepmem.types import InputError
from deepmem.vault.writer import ensure_gitignore, write_given

PLUGIN_FILE = "deepmem.js"
SIDECAR_FILE = "deepmem.json"
COMMAND_NAMES = tuple(SLASH_COMMANDS)
"""Each slash command is installed as `command/<name>.md`, shipped under `plugin/commands/`."""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `init` parser."""
    parser = subparsers.add_parser("init", help="install the OpenCode plugin and /checkpoint /dream /distill")
    parser.add_argument("--global", dest="global_", action="store_true", help="install into the global OpenCode config dir")
    parser.add_argument("--uninstall", action="store_true", help="remove what init installed")
    add_root(parser)
    parser.set_defaults(run=run)


def global_config_dir() -> Path:
    """OpenCode's global config dir: $OPENCODE_CONFIG_DIR, else $XDG_CONFIG_HOME/opencode."""
    explicit = os.environ.get("OPENCODE_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "opencode"


def target_dir(root: str, global_: bool) -> Path:
    """Where the plugin goes: `<root>/.opencode/` or the global config dir."""
    if global_:
        return global_config_dir()
    project = Path(root)
    if not project.is_dir():
        raise InputError(f"{root}: not a directory")
    return project / ".opencode"


def shipped_files() -> dict[str, bytes]:
    """Relative install path → bytes, for the plugin and its command files."""
    package = resources.files("deepmem.plugin")
    files = {f"plugin/{PLUGIN_FILE}": package.joinpath(PLUGIN_FILE).read_bytes()}
    for name in COMMAND_NAMES:
        files[f"command/{name}.md"] = package.joinpath("commands", f"{name}.md").read_bytes()
    sidecar = {"python": sys.executable, "version": __version__}
    files[f"plugin/{SIDECAR_FILE}"] = orjson.dumps(sidecar, option=orjson.OPT_INDENT_2) + b"\n"
    return files


def write_if_changed(path: Path, data: bytes) -> bool:
    """Atomically write data unless the file already holds exactly it; True when written."""
    try:
        if path.read_bytes() == data:
            return False
    except OSError:
        pass
    write_given(path, data)
    return True


def install(target: Path) -> list[str]:
    """Copy every shipped file into target; one status line per file."""
    lines = []
    for relative, data in shipped_files().items():
        path = target / relative
        try:
            changed = write_if_changed(path, data)
        except OSError as exc:
            raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        lines.append(f"{'installed' if changed else 'unchanged'}  {path}")
    return lines


def uninstall(target: Path) -> list[str]:
    """Remove the files init installs (only ours); one status line per file removed."""
    lines = []
    for relative in shipped_files():
        path = target / relative
        if path.is_file():
            path.unlink()
            lines.append(f"removed    {path}")
    return lines or [f"nothing to remove in {target}"]


def run(args: argparse.Namespace) -> int:
    """Install or uninstall, print what changed."""
    target = target_dir(args.root, args.global_)
    if args.uninstall:
        lines = uninstall(target)
    else:
        lines = install(target)
        if not args.global_:
            written = ensure_gitignore(memory_dir(args.root))
            lines.append(f"{'installed' if written else 'unchanged'}  {memory_dir(args.root) / '.gitignore'}")
        lines.append(f"engine: {sys.executable} -m deepmem bridge (deepmem {__version__})")
    print("\n".join(lines))
    return 0
