"""Writes survive SIGKILL at any moment: every file holds its old or its new content."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from deepmem.vault.disk import PRIVATE, append_capped, atomic_write

from .conftest import REPO
from .kill_harness import check_project, expected_checkpoints

ROUNDS = 210


def test_writers_killed_at_random_moments_leave_only_whole_files(tmp_path: Path) -> None:
    """210 SIGKILLs across memory add, checkpoint on compaction and CCR put (with eviction)."""
    run = subprocess.run([sys.executable, "-m", "tests.kill_harness", str(tmp_path), str(ROUNDS), "20261123"],
                         cwd=REPO, capture_output=True, timeout=600, check=True)
    report = orjson.loads(run.stdout)
    assert sum(report["kills"].values()) >= 200 and min(report["kills"].values()) >= 60, report["kills"]
    assert report["problems"] == []
    assert report["entries"] > 0 and report["ccr_bytes"] > 0
    assert report["temp_files_after_start"] == 0 and report["temp_files_removed_at_start"] == report["temp_files_left"]
    checkpoints = expected_checkpoints(tmp_path / "checkpoint")
    for kind in ("memory", "checkpoint", "ccr"):
        assert check_project(tmp_path / kind, checkpoints) == []
    assert (tmp_path / "checkpoint" / ".deep-memory" / "checkpoint.md").is_file()


def test_a_failed_write_keeps_the_old_content_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "a" / "file.json"
    atomic_write(path, b"old")
    with pytest.raises(TypeError):
        atomic_write(path, "not bytes")  # type: ignore[arg-type]
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in path.parent.iterdir()) == ["file.json"]
    atomic_write(path, b"new", PRIVATE)
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == PRIVATE


def test_a_capped_log_drops_its_oldest_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    for n in range(2_000):
        append_capped(path, orjson.dumps({"n": n}) + b"\n", 4_096)
    lines = path.read_bytes().splitlines()
    numbers = [orjson.loads(line)["n"] for line in lines]
    assert path.stat().st_size <= 4_096 and numbers[-1] == 1_999
    assert numbers == list(range(numbers[0], 2_000))
