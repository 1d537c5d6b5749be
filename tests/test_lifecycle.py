"""Memory lifecycle: cleanup (dry run, then archive), usage tracking, reindex after a model change."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from deepmem.cli import main
from deepmem.memory import api
from deepmem.memory.lifecycle import cleanup, reindex
from deepmem.project.folder import Project
from deepmem.types import ConfigError

MEMORY = """# Memory

## Constraints

- [c1] (2025-01-01T00:00Z) Never push to main without review

## Gotchas

- [g1] (2025-01-01T00:00Z) The importer reads latin-1 files
- [g2] (2026-01-10T00:00Z) The exporter writes UTF-8 with a BOM
- [g3] (2026-01-20T00:00Z) The cron job runs at 02:00 UTC
- [h1] Hand-written: the VPN drops idle SSH sessions
"""
NOW = datetime(2026, 2, 1, tzinfo=UTC)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A project with a year-old gotcha, a three-week-old one, a fresh one and a hand-written one."""
    folder = tmp_path / ".deep-memory"
    folder.mkdir()
    (folder / "MEMORY.md").write_text(MEMORY)
    return Project.load(tmp_path)


def test_cleanup_is_a_dry_run_until_applied(root: Path) -> None:
    """Old unused gotchas are proposed; constraints, fresh and hand-written entries are not; --apply archives."""
    before = (root / ".deep-memory" / "MEMORY.md").read_bytes()
    changes = cleanup(root, NOW)
    assert [(c.action, c.entry.id) for c in changes] == [("never retrieved", "g1")]
    assert (root / ".deep-memory" / "MEMORY.md").read_bytes() == before
    cleanup(root, NOW, apply=True)
    assert [e.id for e in api.entries(root, "project")] == ["c1", "g2", "g3", "h1"]
    assert "The importer reads latin-1 files" in (root / ".deep-memory" / "archive.md").read_text()


def test_retrieval_keeps_a_memory_from_cleanup(root: Path) -> None:
    """A whisper hit counts as a retrieval: the entry is then stale only after STALE_DAYS."""
    assert api.whisper(root, "how does the importer read latin-1 files", NOW) is not None
    assert cleanup(root, NOW) == []
    later = datetime(2026, 9, 1, tzinfo=UTC)
    assert [(c.action, c.entry.id) for c in cleanup(root, later)][:1] == [("stale", "g1")]


def test_cleanup_cli_prints_the_dry_run(root: Path, capsys) -> None:
    """The CLI lists what would move and says it is a dry run."""
    assert main(["memory", "cleanup", "--root", str(root), "--unused-days", "3650", "--stale-days", "3650"]) == 0
    assert capsys.readouterr().out == "0 memories would move out of MEMORY.md (dry run; --apply to do it)\n"


def test_model_change_in_place_rebuilds_vectors(root: Path, caplog, monkeypatch) -> None:
    """Cached vectors made by another model under the same name are detected and rebuilt."""
    from deepmem.memory import embed, index

    assert api.search(root, "importer")
    index.forget_caches()
    monkeypatch.setattr(index, "model_fingerprint", lambda name: "another model")
    with caplog.at_level(logging.WARNING, logger="deepmem.memory"):
        assert api.search(root, "importer")
    assert "rebuilding" in caplog.text
    assert embed.model_fingerprint(embed.model_name(root))


def test_reindex_rebuilds_and_an_unknown_model_changes_nothing(root: Path, tmp_path: Path, capsys) -> None:
    """`memory reindex` rebuilds the caches; a missing model folder fails before anything is removed."""
    assert main(["memory", "reindex", "--root", str(root)]) == 0
    assert capsys.readouterr().out.startswith("reindexed 5 memories with ")
    caches = sorted(p.name for p in (root / ".deep-memory" / "index").iterdir())
    with pytest.raises(ConfigError, match="no-such-model does not exist"):
        reindex(root, str(tmp_path / "no-such-model"))
    assert sorted(p.name for p in (root / ".deep-memory" / "index").iterdir()) == caches


def test_corrupt_index_files_are_rebuilt(root: Path) -> None:
    """Garbage in every index cache: search still answers, and the caches are written again."""
    from deepmem.memory import index

    assert api.search(root, "importer")
    folder = root / ".deep-memory" / "index"
    for path in folder.iterdir():
        if path.name != ".gitignore":
            path.write_bytes(b"\x00garbage")
    index.forget_caches()
    assert api.search(root, "importer")[0]["id"] == "g1"
