"""Writers killed with SIGKILL at random moments; after each kill every file must hold old or new content.

Run as `python -m tests.kill_harness FOLDER ROUNDS SEED`: for each round a forked child
loops over one kind of write (memory add, checkpoint on compaction, CCR put) until the
parent kills it after a random delay; the parent then checks every file of that project.
Prints a JSON report: kills per kind, entries written, problems found.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from pathlib import Path

import orjson
import xxhash

from deepmem.bridge.sessions import REQUEST_STATE_FILE
from deepmem.checkpoints.api import compact, findings_for
from deepmem.checkpoints.render import render_checkpoint
from deepmem.checkpoints.store import LATEST, RAW, read_checkpoint
from deepmem.memory.files import read_memory_file
from deepmem.memory.store import store
from deepmem.project.config import ccr_folder, memory_dir
from deepmem.project.folder import Project
from deepmem.project.upkeep import start_up
from deepmem.types import cache_key
from deepmem.vault.ccr import CCRStore
from deepmem.vault.sealed import SealError, read_sealed
from deepmem.vault.sessionio import encode_json, read_session

SEALED_JSON = (RAW, REQUEST_STATE_FILE)
"""JSON files kept sealed: read through the key."""
KINDS = ("memory", "checkpoint", "ccr")
SESSION = Path(__file__).resolve().parent.parent / "fixtures" / "sessions" / "django-15499.json"
LENGTHS = (8, 16, 24, 32, 61)
CCR_NAME = "kill-test"
CCR_CAP = 1_000_000
"""A small cap, so eviction runs (and gets killed) too."""
SID = "ses_kill"


def memory_text(n: int) -> str:
    """A memory unlike every other one (no near-duplicate merging)."""
    words = [xxhash.xxh64_hexdigest(f"{n}:{k}".encode())[:10] for k in range(5)]
    return f"Fact {n}: " + " ".join(words)


def ccr_text(n: int) -> str:
    """A large original, so a kill often lands inside its write."""
    return "".join(f"line {i} of original {n}\n" for i in range(4_000))


def write_forever(kind: str, root: Path, start: int) -> None:
    """The child: one kind of write, again and again, until killed."""
    messages = read_session(str(SESSION)).messages if kind == "checkpoint" else []
    project = Project.load(root)
    store_ = CCRStore(ccr_folder(project), project.config.compress)
    n = start
    while True:
        if kind == "memory":
            store(project, memory_text(n), "fact")
        elif kind == "checkpoint":
            compact(project, SID, messages[: LENGTHS[n % len(LENGTHS)]])
        else:
            text = ccr_text(n)
            store_.put(cache_key(text, CCR_NAME), text)
        n += 1


def expected_checkpoints(root: Path) -> tuple[set[bytes], set[bytes]]:
    """Every checkpoint.md and raw transcript a writer may have left, byte for byte."""
    messages = read_session(str(SESSION)).messages
    redactor = Project.load(root).redactor
    markdown = {redactor.text(render_checkpoint(findings_for(redactor.json(messages[:n])), SID)).encode()
                for n in LENGTHS}
    raw = {encode_json(messages[:n]) for n in LENGTHS}
    return markdown, raw


def check_files(root: Path) -> list[str]:
    """Every file of a project that does not parse as what it is (empty when all is well)."""
    problems = []
    folder = memory_dir(root)
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.endswith(".tmp") or path.name == ".lock":
            continue
        name = str(path.relative_to(folder))
        data = path.read_bytes()
        if path.suffix == ".json" and not _is_json(unsealed(path) if path.name in SEALED_JSON else data):
            problems.append(f"{name}: not JSON")
        if path.suffix == ".jsonl" and not all(line.strip() and _is_json(line) for line in data.splitlines()):
            problems.append(f"{name}: a line is not JSON")
        if path.name in ("MEMORY.md", "notes.md") and read_memory_file(path, "project", verify=True).problems:
            problems.append(f"{name}: unparsable lines")
        if path.name == LATEST and read_checkpoint(path) is None:
            problems.append(f"{name}: not a whole checkpoint")
    return problems


def check_project(root: Path, checkpoints: tuple[set[bytes], set[bytes]]) -> list[str]:
    """`check_files`, and every file holds content some writer of this harness wrote whole."""
    problems = check_files(root)
    folder = memory_dir(root)
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.endswith(".tmp"):
            continue
        name = str(path.relative_to(folder))
        data = path.read_bytes()
        if path.name == "MEMORY.md" and root.name == "memory":
            state = read_memory_file(path, "project", verify=True)
            unknown = [entry.text for entry in state.entries if not was_written(entry.text)]
            if unknown or len(state.entries) != len({entry.id for entry in state.entries}):
                problems.append(f"{name}: entries nobody wrote or repeated ids")
        if path.name == LATEST and data not in checkpoints[0]:
            problems.append(f"{name}: not one of the checkpoints written")
        if path.name == RAW and unsealed(path) not in checkpoints[1]:
            problems.append(f"{name}: not one of the transcripts written")
        if path.parent.parent == folder / "ccr" and cache_key(unsealed(path).decode(), CCR_NAME) != path.name:
            problems.append(f"{name}: content does not match its key")
    return problems


def unsealed(path: Path) -> bytes:
    """A private file's exact bytes; its problem as text when it does not unseal (never equal to content)."""
    try:
        return read_sealed(path)
    except SealError as exc:
        return f"unsealable: {exc}".encode()


def _is_json(line: bytes) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def was_written(text: str) -> bool:
    """True for a memory text some writer stored whole."""
    number = text.removeprefix("Fact ").split(":", 1)[0]
    return number.isdigit() and memory_text(int(number)) == text


def entries(root: Path) -> int:
    """How many memories the project's MEMORY.md holds."""
    return len(read_memory_file(memory_dir(root) / "MEMORY.md", "project", verify=True).entries)


def run(folder: Path, rounds: int, seed: int) -> dict[str, object]:
    """Kill `rounds` writers, cycling through the kinds; check every project after each kill."""
    rng = random.Random(seed)
    roots = {kind: folder / kind for kind in KINDS}
    memory_dir(roots["ccr"]).mkdir(parents=True)
    (memory_dir(roots["ccr"]) / "config.toml").write_text(f"[compress]\nccr_disk_bytes = {CCR_CAP}\n")
    checkpoints = expected_checkpoints(roots["checkpoint"])
    kills = dict.fromkeys(KINDS, 0)
    problems: list[str] = []
    started = dict.fromkeys(KINDS, 0)
    for round_ in range(rounds):
        kind = KINDS[round_ % len(KINDS)]
        start = entries(roots["memory"]) if kind == "memory" else started[kind]
        pid = os.fork()
        if pid == 0:
            try:
                write_forever(kind, roots[kind], start)
            finally:
                os._exit(1)
        time.sleep(rng.uniform(0.002, 0.25 if kind == "checkpoint" else 0.04))
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            kills[kind] += 1
        started[kind] += 1000
        for name, root in roots.items():
            problems += [f"round {round_} ({kind}), {name}: {problem}" for problem in check_project(root, checkpoints)]
    ccr_bytes = sum(path.stat().st_size for path in memory_dir(roots["ccr"]).glob("ccr/*/*"))
    leftovers = sum(1 for root in roots.values() for path in memory_dir(root).rglob("*.tmp"))
    removed = sum(start_up(root)["temp_removed"] for root in roots.values())
    after = sum(1 for root in roots.values() for path in memory_dir(root).rglob("*.tmp"))
    return {"kills": kills, "entries": entries(roots["memory"]), "problems": problems, "temp_files_left": leftovers,
            "temp_files_removed_at_start": removed, "temp_files_after_start": after, "ccr_bytes": ccr_bytes}


def main(argv: list[str]) -> int:
    """`python -m tests.kill_harness FOLDER ROUNDS SEED` → a JSON report on stdout."""
    report = run(Path(argv[0]), int(argv[1]), int(argv[2]))
    sys.stdout.buffer.write(orjson.dumps(report) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
