"""Many writers on one project: the lock loses no update, and two engines corrupt nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from deepmem.memory.files import read_memory_file
from deepmem.project.config import memory_dir

from .conftest import REPO
from .kill_harness import check_files, memory_text, was_written
from .test_bridge import SMALL_BATCHES, Bridge, django_messages, steps_of

WRITERS, ADDS = 8, 500
ADD_MANY = """
import sys
from deepmem.memory.store import store
from deepmem.project.folder import Project
from tests.kill_harness import memory_text
root, first, count = Project.load(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for n in range(first, first + count):
    assert store(root, memory_text(n), "fact").status == "stored"
"""
INCREMENT = """
import sys
from pathlib import Path
from deepmem.vault.disk import locked
folder = Path(sys.argv[1])
for _ in range(int(sys.argv[2])):
    with locked(folder):
        path = folder / "counter"
        value = int(path.read_text()) if path.exists() else 0
        path.write_text(str(value + 1))
"""


@pytest.fixture
def fast_root(tmp_path: Path):
    """A project on a RAM disk when there is one: this checks the lock, not the disk's fsync speed
    (the SIGKILL test checks durability)."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=shm) as folder:
        yield Path(folder)


def run_all(commands: list[list[str]]) -> None:
    """Start every command at once; each must succeed."""
    procs = [subprocess.Popen(command, cwd=REPO, stderr=subprocess.PIPE) for command in commands]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-2000:]


def test_8_processes_adding_500_memories_each_store_exactly_4000(fast_root: Path) -> None:
    run_all([[sys.executable, "-c", ADD_MANY, str(fast_root), str(w * ADDS), str(ADDS)] for w in range(WRITERS)])
    state = read_memory_file(memory_dir(fast_root) / "MEMORY.md", "project", verify=True)
    assert len(state.entries) == WRITERS * ADDS and not state.problems
    assert {entry.text for entry in state.entries} == {memory_text(n) for n in range(WRITERS * ADDS)}
    assert len({entry.id for entry in state.entries}) == WRITERS * ADDS


def test_concurrent_cli_adds_all_land(tmp_path: Path) -> None:
    def add(worker: int) -> list[str]:
        script = "; ".join(f"{sys.executable} -m deepmem memory add '{memory_text(worker * 100 + n)}' --type fact "
                           f"--root {tmp_path} >/dev/null" for n in range(2))
        return ["sh", "-ec", script]

    run_all([add(worker) for worker in range(4)])
    state = read_memory_file(memory_dir(tmp_path) / "MEMORY.md", "project", verify=True)
    assert len(state.entries) == 8 and all(was_written(entry.text) for entry in state.entries)


def test_the_lock_serialises_read_modify_write_across_processes(fast_root: Path) -> None:
    run_all([[sys.executable, "-c", INCREMENT, str(fast_root), "200"] for _ in range(4)])
    assert (fast_root / "counter").read_text() == "800"


def test_two_engines_serve_two_sessions_of_one_project_at_once(tmp_path: Path) -> None:
    messages = django_messages()
    engines = [Bridge(tmp_path, SMALL_BATCHES), Bridge(tmp_path, SMALL_BATCHES)]
    failures: list[str] = []

    def drive(engine: Bridge, session: str) -> None:
        try:
            assert engine.hello()["ok"]
            for length in steps_of(messages):
                assert engine.transform(session, messages[:length])["ok"]
                if length % 7 == 0:
                    # Each fact its own subject: texts that differ only in numbers read as one fact
                    # updated, and the newer (by the minute) would rightly supersede the older.
                    text = f"{session} fact {length}: " + " ".join(f"{word}{session[-1]}x{length}" for word in "pqrstu")
                    assert engine.request("tool", name="memory_store", args={"text": text, "type": "fact"})["ok"]
                    assert engine.request("compacting", session=session)["written"]
            assert engine.request("event", type="session.idle", session=session)["ok"]
        except AssertionError as exc:
            failures.append(f"{session}: {exc}")

    threads = [threading.Thread(target=drive, args=(engine, f"ses_{n}")) for n, engine in enumerate(engines)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert [engine.close() for engine in engines] == [0, 0]
    assert failures == []
    assert check_files(tmp_path) == []
    state = read_memory_file(memory_dir(tmp_path) / "MEMORY.md", "project", verify=True)
    assert {entry.text.split(" ")[0] for entry in state.entries} >= {"ses_0", "ses_1"}
    assert len(list(memory_dir(tmp_path).glob("sessions/*/stats.json"))) == 2
