"""Record OpenCode-format fixture sessions with the real `opencode` binary and a scripted model.

    python -m bench.makers.opencode_fixtures [NAME ...] [--out fixtures/sessions]

Builds a demo project (the small modules of bench/opencode_sessions.py plus copies of the
json, email and logging packages of this Python's stdlib in lib/), plays each named session
(all by default) through `opencode run`, exports it, rewrites the temporary paths to
/home/user/demo and writes `opencode-NAME.json`. Prints steps, tool statuses, size and
time per session. Needs the OpenCode that .ci/run installs in .cache/opencode.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sysconfig
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.makers.opencode_sessions import PROJECT_FILES, SESSIONS, STDLIB_PACKAGES
from deepmem.vault.writer import write_given
from tests.e2e.harness import REPO, start_project

DEMO_HOME = "/home/user"
DEMO_ROOT = f"{DEMO_HOME}/demo"
SIZE_BUDGET = 400_000


def build_template(folder: Path) -> Path:
    """The demo project: our modules at the top, stdlib package copies under lib/."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for package in STDLIB_PACKAGES:
        shutil.copytree(stdlib / package, folder / "lib" / package, ignore=shutil.ignore_patterns("__pycache__"))
    for relative, text in PROJECT_FILES.items():
        (folder / relative).write_text(text)
    return folder


def record(name: str, work: Path, template: Path) -> tuple[dict[str, Any], Path, Path]:
    """Play session `name` in a fresh copy of the template; return the export, project root and home."""
    prompt, script = SESSIONS[name]
    project = start_project(work / name, script, copy_from=template)
    try:
        run = project.run(prompt, export=True, timeout=900)
        if not run.ok or run.session is None:
            raise RuntimeError(f"{name}: opencode run failed ({run.returncode}): {run.stderr[-3000:]}")
        played = project.llm.steps_played()
        if played != len(script):
            raise RuntimeError(f"{name}: the model played {played} of {len(script)} steps")
        return run.session, project.root, project.home
    finally:
        project.close()


def rewrite_paths(session: dict[str, Any], root: Path, home: Path, base: Path) -> str:
    """The session as indented JSON, temporary folders replaced by /home/user[/demo], the stdlib by /usr/lib."""
    text = json.dumps(session, indent=2, ensure_ascii=False) + "\n"
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    renames = ((root, DEMO_ROOT), (home, DEMO_HOME), (base, DEMO_HOME), (stdlib, f"/usr/lib/{stdlib.name}"))
    for real, demo in renames:
        text = text.replace(str(real), demo)
    return text


def tool_statuses(session: dict[str, Any]) -> Counter[str]:
    """How many tool parts each (tool, status) pair has."""
    parts = [p for m in session["messages"] for p in m["parts"] if p["type"] == "tool"]
    return Counter(f"{p['tool']}:{p['state']['status']}" for p in parts)


def main(argv: list[str] | None = None) -> None:
    """Record the named sessions (all by default) into the output folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"sessions to record: {', '.join(SESSIONS)}")
    parser.add_argument("--out", type=Path, default=REPO / "fixtures" / "sessions")
    options = parser.parse_args(argv)
    unknown = sorted(set(options.names) - set(SESSIONS))
    if unknown:
        parser.error(f"unknown session {', '.join(unknown)}; choose from {', '.join(SESSIONS)}")
    with tempfile.TemporaryDirectory(prefix="opencode-fixtures-") as scratch:
        work = Path(scratch)
        template = build_template(work / "template")
        for name in options.names or list(SESSIONS):
            started = time.perf_counter()
            session, root, home = record(name, work, template)
            text = rewrite_paths(session, root, home, work)
            target = options.out / f"opencode-{name}.json"
            write_given(target, text.encode())
            seconds = time.perf_counter() - started
            size = len(text.encode())
            steps = len(SESSIONS[name][1])
            flag = "" if size <= SIZE_BUDGET else f"  OVER {SIZE_BUDGET} BYTES"
            print(f"{target.name}: {steps} steps, {size} bytes, {seconds:.1f} s{flag}")
            print("  " + ", ".join(f"{k}={v}" for k, v in sorted(tool_statuses(session).items())))


if __name__ == "__main__":
    main()
