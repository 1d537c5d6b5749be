"""`deepmem audit` on an `opencode.db` written by the real OpenCode binary: read-only, like the export, bad files skipped."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from deepmem.cli import main
from deepmem.project.opencode_store import OpenCodeDb
from tests.e2e.harness import start_project
from tests.e2e.test_harness_smoke import CALC, TEST_CALC

MODULE = "".join(f"def handler_{n}(request):\n    return respond(request, code={n})\n\n" for n in range(150))
SCRIPT = [
    {"tool": "read", "args": {"filePath": "$ROOT/handlers.py"}},
    {"tool": "bash", "args": {"command": "seq 1 3000", "description": "Count"}},
    {"tool": "read", "args": {"filePath": "$ROOT/calc.py"}},
    {"tool": "bash", "args": {"command": "python3 -m unittest test_calc 2>&1", "description": "Run the tests"}},
    {"tool": "edit", "args": {"filePath": "$ROOT/calc.py", "oldString": "    return sum(values) / len(values) + 1", "newString": "    return sum(values) / len(values)"}},
    {"tool": "bash", "args": {"command": "python3 -m unittest test_calc 2>&1", "description": "Run the tests again"}},
    {"text": "Fixed mean()."},
]


class Recorded:
    """One real session: OpenCode's database folder and the session's `opencode export`."""

    def __init__(self, data_dir: Path, export: dict):
        self.data_dir = data_dir
        self.export = export

    @property
    def db(self) -> Path:
        """The database file."""
        return self.data_dir / "opencode.db"

    def copy(self, folder: Path) -> Path:
        """A copy of the database with its WAL files, for tests that damage it."""
        folder.mkdir(parents=True, exist_ok=True)
        for path in self.data_dir.glob("opencode.db*"):
            shutil.copy(path, folder / path.name)
        return folder / "opencode.db"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    """Run the scripted session once through the real OpenCode and keep its database."""
    base = tmp_path_factory.mktemp("audit")
    project = start_project(base, SCRIPT, files={"calc.py": CALC, "test_calc.py": TEST_CALC, "handlers.py": MODULE})
    try:
        run = project.run("fix the failing test", export=True)
        assert run.ok, run.stderr[-3000:]
        yield Recorded(project.home / ".local" / "share" / "opencode", run.session)
    finally:
        project.close()


def audit(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict, str]:
    """Run `deepmem audit --json ARGS`: (exit code, report, stderr)."""
    code = main(["audit", "--json", *args])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every database file in a folder."""
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.glob("opencode.db*"))}


def compressing_root(tmp_path: Path) -> str:
    """A project whose settings compress a 7-step session (tail 1, batch 2)."""
    (tmp_path / ".deep-memory").mkdir(exist_ok=True)
    (tmp_path / ".deep-memory" / "config.toml").write_text("[compress]\ntail_steps = 1\nbatch_steps = 2\n")
    return str(tmp_path)


def test_the_database_gives_the_exported_messages(recorded: Recorded) -> None:
    """Messages rebuilt from the session, message and part tables equal `opencode export`'s."""
    db = OpenCodeDb(recorded.db)
    (session,) = db.sessions()
    assert session.id == recorded.export["info"]["id"]
    assert db.messages(session.id) == recorded.export["messages"]
    assert db.notes == []


def test_audit_reads_without_writing_and_matches_the_export(recorded: Recorded, capsys, tmp_path) -> None:
    """Same figures from the database as from the export file; the database files are unchanged."""
    root = compressing_root(tmp_path)
    export = tmp_path / "export.json"
    export.write_text(json.dumps(recorded.export))
    before = digests(recorded.data_dir)
    code, from_db, err = audit(capsys, "--db", str(recorded.db), "--root", root)
    assert code == 0, err
    assert digests(recorded.data_dir) == before
    _, from_export, _ = audit(capsys, "--export", str(export), "--root", root)
    (row,) = from_db["sessions"]
    assert row["steps"] == len(SCRIPT)
    assert row["tokens_with"] < row["tokens_without"]
    assert row["quoted_lines"] >= 1
    assert {**row, "source": ""} == {**from_export["sessions"][0], "source": ""}


def corrupt(path: Path) -> None:
    """Overwrite the file's header and first pages with garbage."""
    for wal in path.parent.glob("opencode.db-*"):
        wal.unlink()
    path.write_bytes(b"not a database " * 400)


def unknown_schema(path: Path) -> None:
    """Rename the part table's data column, as a future schema might."""
    with sqlite3.connect(path) as connection:
        connection.execute("ALTER TABLE part RENAME COLUMN data TO body")


@pytest.mark.parametrize(("damage", "message"), [(corrupt, "unreadable"), (unknown_schema, "unknown schema")])
def test_a_bad_database_is_named_and_skipped(recorded: Recorded, capsys, tmp_path, damage, message) -> None:
    """Exit 1: the bad database in a one-line warning, the good one still reported."""
    bad = recorded.copy(tmp_path / "bad")
    damage(bad)
    code, report, err = audit(capsys, "--db", str(bad), str(recorded.db), "--root", str(tmp_path))
    assert code == 1
    assert len(report["sessions"]) == 1
    (warning,) = err.strip().splitlines()
    assert str(bad) in warning and message in warning


def test_a_locked_database_is_named_and_skipped(recorded: Recorded, capsys, tmp_path) -> None:
    """A database another process holds an exclusive lock on (rollback journal) is skipped, exit 2 alone."""
    locked = recorded.copy(tmp_path / "locked")
    with sqlite3.connect(locked) as connection:
        connection.execute("PRAGMA journal_mode=DELETE")
    holder = sqlite3.connect(locked, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        code, report, err = audit(capsys, "--db", str(locked), "--root", str(tmp_path))
    finally:
        holder.close()
    assert (code, report["sessions"]) == (2, [])
    assert str(locked) in err and "locked" in err


def test_a_newer_schema_with_known_columns_is_read_with_a_note(recorded: Recorded, capsys, tmp_path) -> None:
    """A migration newer than 1.18.33's: a note naming it, the sessions still audited, exit 0."""
    newer = recorded.copy(tmp_path / "newer")
    with sqlite3.connect(newer) as connection:
        connection.execute("INSERT INTO migration VALUES ('29990101000000_future_change', 0)")
    code, report, err = audit(capsys, "--db", str(newer), "--root", str(tmp_path))
    assert code == 0
    assert len(report["sessions"]) == 1
    assert "29990101000000_future_change" in err
