"""compact() and resume_block(): files written, prompt, resume budget, and bad input."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from deepmem.checkpoints.api import (
    QUIET_OUTPUT_CHARS,
    RESUME_BUDGET_TOKENS,
    compact,
    extraction_view,
    resume_block,
)
from deepmem.checkpoints.render import END_MARK, SECTIONS
from deepmem.checkpoints.slash import SLASH_COMMANDS
from deepmem.cli import main
from deepmem.project.config import Config
from deepmem.project.folder import Project
from deepmem.tokens import estimate_tokens
from deepmem.vault.redact import Redactor
from deepmem.vault.sealed import MAGIC, read_sealed

from .conftest import FIXTURES

SOURCE = FIXTURES / "sessions" / "django-15499.json"
MESSAGES = orjson.loads(SOURCE.read_bytes())["messages"]
SID = "ses_00bc10485b0f085e180a544015"


def files_under(root: Path) -> set[Path]:
    """Every file below root."""
    return {path for path in root.rglob("*") if path.is_file()}


def test_compact_writes_checkpoint_files_log_and_prompt(tmp_path: Path) -> None:
    """Raw messages, the session and latest checkpoint, one log line; the prompt carries the eight sections."""
    result = compact(Project.load(tmp_path), SID, MESSAGES)
    memory = tmp_path / ".deep-memory"
    assert "error" not in result
    assert result["written"] == [
        str(memory / "sessions" / SID / "checkpoint.raw.json"),
        str(memory / "sessions" / SID / "checkpoint.md"),
        str(memory / "checkpoint.md"),
    ]
    raw = memory / "sessions" / SID / "checkpoint.raw.json"
    assert orjson.loads(read_sealed(raw)) == MESSAGES
    assert raw.read_bytes().startswith(MAGIC) and b"django" not in raw.read_bytes()
    checkpoint = (memory / "checkpoint.md").read_text(encoding="utf-8")
    assert [line[3:] for line in checkpoint.splitlines() if line.startswith("## ")] == list(SECTIONS)
    assert "`django/db/migrations/operations/models.py`" in checkpoint
    assert "UNRESOLVED" not in checkpoint, "the failed `sed -i '38i…` was followed by sed edits that worked"
    assert result["context"] == [checkpoint]
    assert result["prompt"].startswith("You are writing the handoff")
    assert all(f"## {title}" in result["prompt"] for title in SECTIONS)
    assert checkpoint in result["prompt"]
    log = [orjson.loads(line) for line in (memory / ".compaction-log.jsonl").read_bytes().splitlines()]
    assert len(log) == 1 and log[0]["session"] == SID and log[0]["messages"] == len(MESSAGES)
    assert log[0]["tokens_before"] > 20_000 and log[0]["bytes"]["checkpoint.md"] == len(checkpoint.encode())


def test_resume_block_is_stable_and_under_budget(tmp_path: Path) -> None:
    """Same checkpoint, same bytes; a small budget shrinks the block but keeps the sections."""
    assert resume_block(tmp_path) is None
    compact(Project.load(tmp_path), SID, MESSAGES)
    block = resume_block(tmp_path)
    assert block is not None and block == resume_block(tmp_path)
    assert END_MARK not in block and estimate_tokens(block) <= RESUME_BUDGET_TOKENS
    small = resume_block(tmp_path, budget=600)
    assert small is not None and estimate_tokens(small) <= 600
    assert "## Files modified" in small and "django/db/migrations/operations/models.py" in small


def test_same_session_same_checkpoint_bytes(tmp_path: Path) -> None:
    """Checkpoint and prompt are deterministic (only the log line carries a time)."""
    first = compact(Project.load(tmp_path / "a"), SID, MESSAGES)
    second = compact(Project.load(tmp_path / "b"), SID, MESSAGES)
    assert first["prompt"] == second["prompt"]
    assert resume_block(tmp_path / "a") == resume_block(tmp_path / "b")


@pytest.mark.parametrize("session_id", ["../../evil", "a/b", "..", "/", "ses\x00x", "会话 1", "x\n## Errors\n`", "", 42])
def test_odd_session_ids_never_write_outside_memory(tmp_path: Path, session_id: object) -> None:
    """An odd id is sanitised into one folder under sessions/, or refused; compaction still gets its prompt."""
    project = tmp_path / "project"
    project.mkdir()
    result = compact(Project.load(project), session_id, MESSAGES)  # type: ignore[arg-type]
    assert result["prompt"]
    headings = [line for line in result["context"][0].splitlines() if line.startswith("## ")]
    assert headings == [f"## {title}" for title in SECTIONS]
    outside = {p for p in files_under(tmp_path) if ".deep-memory" not in p.relative_to(tmp_path).parts}
    assert outside == set()
    sessions = project / ".deep-memory" / "sessions"
    if "error" in result:
        assert result["written"] == [] and not sessions.exists()
    else:
        (folder,) = sessions.iterdir()
        assert folder.name.replace("-", "").replace("_", "").isalnum()


def test_two_odd_ids_do_not_share_a_folder(tmp_path: Path) -> None:
    """`a/b` and `a_b` sanitise to different folders."""
    compact(Project.load(tmp_path), "a/b", MESSAGES)
    compact(Project.load(tmp_path), "a_b", MESSAGES)
    assert len(list((tmp_path / ".deep-memory" / "sessions").iterdir())) == 2


def test_half_written_checkpoint_is_ignored_and_a_good_one_survives(tmp_path: Path, monkeypatch) -> None:
    """A cut-short latest checkpoint falls back to the session copy; a failed write leaves the old file whole."""
    compact(Project.load(tmp_path), SID, MESSAGES)
    latest = tmp_path / ".deep-memory" / "checkpoint.md"
    good_block = resume_block(tmp_path)
    good = latest.read_bytes()
    latest.write_bytes(good[: len(good) // 2])
    assert resume_block(tmp_path) == good_block
    latest.write_bytes(good)

    def failing_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device", dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    result = compact(Project.load(tmp_path), SID, MESSAGES[:5])
    assert result["error"].startswith("cannot write checkpoint: No space left on device")
    assert result["prompt"]
    assert latest.read_bytes() == good
    assert not [p for p in files_under(tmp_path) if p.name.endswith(".tmp")]


@pytest.mark.parametrize("messages", [[], [{"info": {"role": "robot"}, "parts": []}], "not a list", None])
def test_bad_messages_never_replace_a_good_checkpoint(tmp_path: Path, messages: object) -> None:
    """Empty or malformed messages are reported and write nothing."""
    compact(Project.load(tmp_path), SID, MESSAGES)
    before = {p: p.read_bytes() for p in files_under(tmp_path)}
    result = compact(Project.load(tmp_path), SID, messages)  # type: ignore[arg-type]
    assert result["error"] and result["written"] == []
    assert {p: p.read_bytes() for p in files_under(tmp_path)} == before


@pytest.mark.parametrize("blocker", [".deep-memory", ".deep-memory/sessions"])
def test_unwritable_memory_dir_reports_without_breaking_compaction(tmp_path: Path, blocker: str) -> None:
    """A file where a folder should be (as root, permissions would not stop us): error reported, prompt kept."""
    (tmp_path / blocker).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / blocker).write_text("in the way")
    result = compact(Project(tmp_path, Config()), SID, MESSAGES)
    assert result["error"].startswith("cannot write checkpoint")
    assert result["prompt"] and result["context"]


def test_read_only_memory_dir(tmp_path: Path) -> None:
    """A read-only .deep-memory/ (when permissions apply) or a blocked one: no exception, error reported."""
    memory = tmp_path / ".deep-memory"
    memory.mkdir()
    memory.chmod(0o500)
    try:
        result = compact(Project.load(tmp_path), SID, MESSAGES)
    finally:
        memory.chmod(0o700)
    assert result["prompt"]
    if os.geteuid() != 0:
        assert result["error"].startswith("cannot write checkpoint")


def test_slash_checkpoint_answers_one_line(tmp_path: Path) -> None:
    """`/checkpoint` writes the checkpoint and tells the model where it went, on one line."""
    line = SLASH_COMMANDS["checkpoint"](Project.load(tmp_path), SID, MESSAGES, "")
    assert "\n" not in line and line.endswith("checkpoint.md (3 files)")
    assert "not written" in SLASH_COMMANDS["checkpoint"](Project.load(tmp_path), SID, [], "")


def test_cli_checkpoint_and_resume(tmp_path: Path, capsys) -> None:
    """`deepmem checkpoint FILE` prints where it went; `deepmem resume` prints the block."""
    assert main(["resume", "--root", str(tmp_path)]) == 1
    assert main(["checkpoint", str(SOURCE), "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert str(tmp_path / ".deep-memory" / "checkpoint.md") in out
    assert main(["resume", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == resume_block(tmp_path) + "\n"


def test_cli_checkpoint_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    """An empty messages array is refused with one line and nothing written."""
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert main(["checkpoint", str(empty), "--root", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "deepmem: error: no messages to checkpoint\n"
    assert not (tmp_path / ".deep-memory").exists()


def test_a_secret_is_redacted_before_a_long_line_is_clipped(tmp_path: Path) -> None:
    """A key block that starts near a clipped line's end: its header goes, its body must not stay in clear."""
    body = "MIIEpAIBAAKCAQEA7x9Qq2Lm9Np3Rs5Tv8Wy" + "Zk3f9QaVbN2r7TsLq0PmWx4Hc8Yd1"
    block = "-----BEGIN RSA " + f"PRIVATE KEY-----\n{body}\n{body[::-1]}\n-----END RSA PRIVATE KEY-----"
    text = "Fix the build. " + "word " * 55 + block
    compact(Project.load(tmp_path), SID, [{"info": {"role": "user", "id": "m0"}, "parts": [{"type": "text", "text": text}]}])
    checkpoint = (tmp_path / ".deep-memory" / "checkpoint.md").read_text()
    assert "word word" in checkpoint and body[:12] not in checkpoint and body[::-1][:12] not in checkpoint


def test_the_extractors_read_redacted_text_and_only_the_head_of_what_worked() -> None:
    """Secrets are redacted everywhere; a failing call keeps its whole output, one that worked its head."""
    key = "sk-" + "proj-" + "Zq3Xv8Lm2Np7Rt5Wy9Bc4Df6Gh1Jk0MnQ2s"
    def bash(output: str, code: int) -> dict:
        return {"type": "tool", "tool": "bash", "state": {"status": "completed", "input": {"command": f"run {key}"},
                                                          "output": output, "metadata": {"exit": code}}}
    long = "x" * 5_000 + f"\nOPENAI_API_KEY={key}\n"
    messages = [{"info": {"id": "m1", "role": "user"}, "parts": [{"type": "text", "text": f"use {key}"}]},
                {"info": {"id": "m2", "role": "assistant"}, "parts": [bash(long, 0), bash(long, 1)]}]
    view = extraction_view(messages, Redactor())
    worked, failed = (part["state"] for part in view[1]["parts"])
    assert key not in orjson.dumps(view).decode()
    assert len(worked["output"]) == QUIET_OUTPUT_CHARS and failed["output"].endswith("OPENAI_API_KEY=[REDACTED:openai-key]\n")
    assert messages[1]["parts"][0]["state"]["output"] == long
