"""Dream's consolidation: duplicates merge, newer supersedes older, a cap archives, nothing is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepmem.checkpoints.dream import dream
from deepmem.memory import api as memory
from deepmem.memory.consolidate import consolidate
from deepmem.memory.entries import Entry
from deepmem.project.folder import Project
from deepmem.types import DeepmemError

MEMORY = """# Memory

## Decisions

- [a1] (2026-01-05T10:00Z) Session cache uses Redis
- [a2] (2026-03-01T10:00Z) Session cache now uses Memcached instead of Redis
- [a3] (2026-01-05T10:00Z) 日志时间统一使用 UTC 时间
- [a4] (2026-02-05T10:00Z) 日志时间统一使用 UTC 时间。
- [h1] Build with make, never with the IDE

## Constraints

- [c1] (2026-01-01T00:00Z) Tabs for indentation in Makefiles
- [c2] (2026-01-01T00:00Z) Spaces for indentation in Makefiles

## Unparsed lines

this line was written by hand
"""


def write(root: Path, text: str) -> Path:
    """MEMORY.md of a fresh project."""
    path = root / ".deep-memory" / "MEMORY.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_supersede_merge_and_second_run_changes_nothing(tmp_path: Path) -> None:
    """Redis → Memcached supersedes, the Chinese near-duplicate merges, hand-written and same-time entries stay."""
    path = write(tmp_path, MEMORY)
    result = dream(Project.load(tmp_path))
    assert (result["superseded"], result["merged"], result["stored"]) == (1, 1, 0)
    ids = [entry.id for entry in memory.entries(tmp_path, "project")]
    assert ids == ["a2", "a3", "h1", "c1", "c2"]
    text = path.read_text()
    assert "this line was written by hand" in text
    history = (tmp_path / ".deep-memory" / "history.md").read_text()
    assert "Session cache uses Redis" in history and "superseded into [a2]" in history
    assert "a4" not in history, "an exact duplicate loses nothing, so it is not kept aside"
    assert result["conflicts"] == ["conflict: [c1] and [c2] change the same subject at the same time "
                                   "(2026-01-01T00:00Z); both kept, edit MEMORY.md to keep one"]
    once = path.read_bytes()
    again = dream(Project.load(tmp_path))
    assert again["changes"] == [] and path.read_bytes() == once and len(again["conflicts"]) == 1


@pytest.mark.parametrize(("old_text", "new_text", "kept_text"), [
    ("the importer reads latin-1 files from the legacy export folder",
     "the importer reads latin-1 files from the legacy export folder only",
     "the importer reads latin-1 files from the legacy export folder only"),
    ("部署前必须运行全部测试", "部署之前必须运行全部测试", "部署前必须运行全部测试"),
])
def test_near_duplicates_merge_into_the_older_id(old_text: str, new_text: str, kept_text: str) -> None:
    """English or Chinese near-duplicates merge; the newer text wins only when it adds words."""
    old = Entry("o1", "gotcha", old_text, "2026-01-01T00:00Z")
    new = Entry("o2", "gotcha", new_text, "2026-02-01T00:00Z")
    plan = consolidate([old, new], 200)
    assert [(entry.id, entry.text) for entry in plan.kept] == [("o1", kept_text)]
    assert plan.changes[0].action == "merged" and plan.changes[0].into == "o1"


@pytest.mark.parametrize(("old_text", "new_text"), [
    ("Use PostgreSQL 15 in production", "Use PostgreSQL 16 in production"),
    ("Session cache uses Redis", "Session cache uses Memcached"),
    ("会话缓存使用 Redis", "会话缓存改用 Memcached"),
])
def test_a_changed_value_supersedes(old_text: str, new_text: str) -> None:
    """A number, one word, or a change word (English or Chinese): the newer entry holds."""
    old = Entry("p1", "decision", old_text, "2026-01-01T00:00Z")
    new = Entry("p2", "decision", new_text, "2026-05-01T00:00Z")
    plan = consolidate([old, new], 200)
    assert plan.kept == [new] and plan.changes[0].action == "superseded"


def test_cap_archives_least_useful_and_keeps_hand_written(tmp_path: Path) -> None:
    """Over the cap, old notes go to archive.md before constraints; untimed lines never move."""
    words = ["alpha", "bravo", "charlie", "delta", "echo"]
    lines = [f"- [n{i}] (2026-01-{i + 1:02d}T00:00Z) remember {word}" for i, word in enumerate(words)]
    write(tmp_path, "# Memory\n\n## Constraints\n\n- [c1] (2026-01-01T00:00Z) Never push to main\n"
          "- [h1] Hand rule without a time\n\n## Notes\n\n" + "\n".join(lines) + "\n")
    (tmp_path / ".deep-memory" / "config.toml").write_text("[memory]\nmax_entries = 3\n")
    result = dream(Project.load(tmp_path))
    assert result["archived"] == 4
    assert [entry.id for entry in memory.entries(tmp_path, "project")] == ["c1", "h1", "n4"]
    archive = (tmp_path / ".deep-memory" / "archive.md").read_text()
    assert all(f"remember {word}" in archive for word in words[:4])


def test_empty_and_missing_memory(tmp_path: Path) -> None:
    """No MEMORY.md and an empty one: nothing to do, no error, no file invented."""
    assert dream(Project.load(tmp_path))["changes"] == []
    path = write(tmp_path, "")
    dream(Project.load(tmp_path))
    assert path.read_text() == ""


def test_a_superseded_statement_captured_again_does_not_come_back(tmp_path: Path) -> None:
    """A later checkpoint of the same session notes the old statement again: history.md already holds it."""
    write(tmp_path, MEMORY)
    dream(Project.load(tmp_path))
    memory.add_note(Project.load(tmp_path), "Session cache uses Redis", "checkpoint ses_a", "decision")
    result = dream(Project.load(tmp_path))
    assert result["stored"] == 0 and memory.notes(tmp_path) == []
    assert "Session cache uses Redis" not in (tmp_path / ".deep-memory" / "MEMORY.md").read_text()


@pytest.mark.parametrize("text", ["Build with make", "(old) build with make"])
def test_an_untimed_entry_keeps_its_text_through_a_rewrite(tmp_path: Path, text: str) -> None:
    """A hand-written line comes back without empty parentheses, and a text starting with `(` stays whole."""
    path = write(tmp_path, f"# Memory\n\n## Facts\n\n- {text}\n- [n1] (2026-01-01T00:00Z) Session cache uses Redis\n"
                           "- [n2] (2026-02-01T00:00Z) Session cache uses Memcached\n")
    dream(Project.load(tmp_path))
    assert [entry.text for entry in memory.entries(tmp_path, "project")] == [text, "Session cache uses Memcached"]
    assert "- [" in path.read_text() and "] () Build" not in path.read_text()


@pytest.mark.parametrize(("memory_bytes", "config", "error"), [
    (b"# Memory\n\n## Facts\n\n- caf\xe9 latin-1 text\n", "", "not UTF-8 at byte 25"),
    (b"# Memory\n", "[memory]\nmax_entries = 0\n", "max_entries must be an integer >= 1"),
])
def test_bad_input_changes_nothing(tmp_path: Path, memory_bytes: bytes, config: str, error: str) -> None:
    """A MEMORY.md that is not UTF-8, or a bad cap: a clear error and the file as it was."""
    path = write(tmp_path, "")
    path.write_bytes(memory_bytes)
    (tmp_path / ".deep-memory" / "config.toml").write_text(config)
    with pytest.raises(DeepmemError, match=error):
        dream(Project.load(tmp_path))
    assert path.read_bytes() == memory_bytes


def test_an_invalid_note_stays_in_notes_md(tmp_path: Path) -> None:
    """A note too long to become a memory is counted invalid and left where it was; the others fold."""
    write(tmp_path, "")
    notes = tmp_path / ".deep-memory" / "notes.md"
    notes.write_text("# Notes\n\n## Notes\n\n- [x1] (2026-01-01T00:00Z · nudge) " + "long " * 2000
                     + "\n- [x2] (2026-01-01T00:00Z · nudge) Releases ship from main\n")
    result = dream(Project.load(tmp_path))
    assert (result["stored"], result["invalid"]) == (1, 1)
    assert [note["id"] for note in memory.notes(tmp_path)] == ["x1"]
    assert dream(Project.load(tmp_path))["invalid"] == 1 and [n["id"] for n in memory.notes(tmp_path)] == ["x1"]


@pytest.mark.parametrize("newer_time", ["2026-01-05T10:00Z", "2026-03-01T10:00Z"], ids=["same-minute", "later"])
def test_a_replaced_text_reaches_history(tmp_path: Path, newer_time: str) -> None:
    """Whether the newer entry supersedes the older or the older takes its wording, the older text is kept aside."""
    old, new = ("Session cache uses Redis with a 10 minute TTL.",
                "Session cache now uses Memcached with a 10 minute TTL instead of Redis.")
    write(tmp_path, f"# Memory\n\n## Decisions\n\n- [r1] (2026-01-05T10:00Z) {old}\n- [r2] ({newer_time}) {new}\n")
    dream(Project.load(tmp_path))
    assert [entry.text for entry in memory.entries(tmp_path, "project")] == [new]
    history = (tmp_path / ".deep-memory" / "history.md").read_text()
    assert old in history
    assert dream(Project.load(tmp_path))["changes"] == []
