"""`deepmem doctor`: what is installed where, the versions, and whether the engine answers."""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import orjson

from deepmem import __version__
from deepmem.bridge.protocol import PROTOCOL
from deepmem.cli import add_root
from deepmem.commands.init import COMMAND_NAMES, PLUGIN_FILE, SIDECAR_FILE, global_config_dir
from deepmem.project.config import memory_dir
from deepmem.vault.sealed import key_state

VERSION_PATTERN = re.compile(rb'const VERSION = "([^"]+)"')
ENGINE_TIMEOUT_SECONDS = 20


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the `doctor` parser."""
    parser = subparsers.add_parser("doctor", help="check the plugin install and the engine")
    add_root(parser)
    parser.set_defaults(run=run)


def check_install(label: str, folder: Path) -> tuple[list[str], str | None]:
    """Report one config dir; return its lines and the pinned interpreter (if any)."""
    plugin = folder / "plugin" / PLUGIN_FILE
    if not plugin.is_file():
        return [f"{label}: plugin not installed ({plugin})"], None
    found = VERSION_PATTERN.search(plugin.read_bytes())
    version = found.group(1).decode() if found else "unknown"
    state = "ok" if version == __version__ else f"MISMATCH with deepmem {__version__}: run `deepmem init`"
    lines = [f"{label}: plugin {version} at {plugin} — {state}"]
    python = None
    sidecar = folder / "plugin" / SIDECAR_FILE
    try:
        python = orjson.loads(sidecar.read_bytes()).get("python")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        lines.append(f"{label}: no readable {sidecar}: the plugin falls back to python3")
    if python:
        exists = "ok" if Path(python).exists() else "MISSING"
        lines.append(f"{label}: engine interpreter {python} — {exists}")
    missing = [name for name in COMMAND_NAMES if not (folder / "command" / f"{name}.md").is_file()]
    lines.append(f"{label}: commands " + (f"missing: {', '.join(missing)}" if missing else "ok"))
    return lines, python


def check_engine(python: str, root: str) -> tuple[str, bool]:
    """Start the engine, say hello, shut it down; one line and whether it answered."""
    hello = {"id": 1, "op": "hello", "version": __version__, "protocol": PROTOCOL}
    shutdown = {"id": 2, "op": "shutdown"}
    lines = orjson.dumps(hello) + b"\n" + orjson.dumps(shutdown) + b"\n"
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [python, "-m", "deepmem", "bridge", "--root", root],
            input=lines, capture_output=True, timeout=ENGINE_TIMEOUT_SECONDS, check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"engine: did not answer ({exc})", False
    elapsed = (time.perf_counter() - started) * 1000
    first = done.stdout.split(b"\n", 1)[0]
    try:
        reply = orjson.loads(first)
    except orjson.JSONDecodeError:
        return f"engine: no reply (exit {done.returncode}): {done.stderr.decode(errors='replace')[-300:]}", False
    if reply.get("ok"):
        return f"engine: answers (deepmem {reply['version']}, protocol {reply['protocol']}, {elapsed:.0f} ms round trip)", True
    return f"engine: {reply.get('error', {}).get('message', reply)}", False


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 1 when the engine does not answer."""
    lines = [f"deepmem {__version__} (protocol {PROTOCOL}) on {sys.executable}"]
    project_lines, project_python = check_install("project", Path(args.root) / ".opencode")
    global_lines, global_python = check_install("global", global_config_dir())
    lines += project_lines + global_lines
    opencode = shutil.which("opencode")
    lines.append(f"opencode: {opencode or 'not on PATH'}")
    ignore = memory_dir(args.root) / ".gitignore"
    lines.append(f"memory dir: {memory_dir(args.root)} ({'.gitignore ok' if ignore.is_file() else 'no .gitignore: run `deepmem init`'})")
    lines.append(key_state())
    line, answered = check_engine(project_python or global_python or sys.executable, args.root)
    lines.append(line)
    print("\n".join(lines))
    return 0 if answered else 1
