"""The `deepmem` command line: one registry of subcommands, errors as one line and exit 2."""

from __future__ import annotations

import argparse
import importlib
import sys

from deepmem import __version__
from deepmem.checkpoints.slash import SLASH_COMMANDS
from deepmem.project.config import check_config
from deepmem.project.folder import Project
from deepmem.types import DeepmemError

COMMAND_MODULES = (
    "deepmem.commands.compress",
    "deepmem.commands.expand",
    "deepmem.commands.bridge",
    "deepmem.commands.init",
    "deepmem.commands.doctor",
    "deepmem.commands.stats",
    "deepmem.commands.audit",
    "deepmem.commands.checkpoint",
    "deepmem.commands.resume",
    "deepmem.commands.dream",
    "deepmem.commands.distill",
    "deepmem.commands.memory",
)
"""Each module exposes `register(subparsers)`, which adds its parser and sets `run`."""


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="deepmem", description="Persistent memory and small contexts for OpenCode."
    )
    parser.add_argument("--version", action="version", version=f"deepmem {__version__}")
    parser.set_defaults(check_config=True)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def add_root(parser: argparse.ArgumentParser) -> None:
    """The `--root DIR` option every command touching `.deep-memory/` takes."""
    parser.add_argument(
        "--root", default=".", metavar="DIR", help="project dir holding .deep-memory/ (default: cwd)"
    )


def add_slash_parser(subparsers: argparse._SubParsersAction, name: str, help_text: str) -> None:
    """A subcommand running the slash command `name` on `--root` and printing its line."""
    parser = subparsers.add_parser(name, help=help_text)
    add_root(parser)

    def run(args: argparse.Namespace) -> int:
        print(SLASH_COMMANDS[name](args.root, "", [], ""))
        return 0

    parser.set_defaults(run=run)


def main(argv: list[str] | None = None) -> int:
    """Run one command on its project, settings read once here; a bad setting or any DeepmemError
    becomes `deepmem: error: …` and exit code 2."""
    args = build_parser().parse_args(argv)
    try:
        if getattr(args, "root", None) is not None and args.check_config:
            args.root = Project(args.root, check_config(args.root))
        return int(args.run(args) or 0)
    except DeepmemError as exc:
        print(f"deepmem: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        return 130
