"""A user's OpenCode history, read-only: the SQLite `opencode.db` of OpenCode 1.18, or exported sessions.

Schema (as OpenCode 1.18.33 writes it): `session(id, parent_id, title, directory,
time_created, …)`, `message(id, session_id, time_created, data)` and `part(id,
message_id, session_id, data)`, where `data` is the JSON of the message info or part
without its ids. A message is `{info: data + id + sessionID, parts: [data + id +
sessionID + messageID]}`, messages ordered by creation time then id, parts by id. The
`migration` table names the schema; a newer one is read if the columns above are there.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import msgspec

from deepmem.types import InputError, Message
from deepmem.vault.sessionio import decode_object, read_session, validate_messages

LATEST_KNOWN_MIGRATION = "20260622202450_simplify_session_input"
"""The newest migration of OpenCode 1.18.33's database."""
REQUIRED_COLUMNS = {
    "session": {"id", "title", "time_created"},
    "message": {"id", "session_id", "time_created", "data"},
    "part": {"id", "message_id", "session_id", "data"},
}
LOCK_WAIT_SECONDS = 2.0


class StoredSession(msgspec.Struct, frozen=True):
    """One session found in the history, before its messages are loaded."""

    id: str
    title: str
    created: int
    """Milliseconds since the epoch (0 when unknown)."""
    source: str
    """The database or export file it comes from."""


def default_db_path() -> Path:
    """Where OpenCode keeps its database: `$XDG_DATA_HOME/opencode/opencode.db` (default ~/.local/share)."""
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "opencode" / "opencode.db"


class OpenCodeDb:
    """An `opencode.db` opened read-only (SQLite URI `mode=ro`); errors become InputError naming the file."""

    def __init__(self, path: Path):
        self.path = path
        if not path.is_file():
            raise InputError(f"{path}: no such database")
        uri = f"{path.resolve().as_uri()}?mode=ro"
        try:
            self.connection = sqlite3.connect(uri, uri=True, timeout=LOCK_WAIT_SECONDS)
            self.notes = self.check_schema()
        except sqlite3.Error as exc:
            raise InputError(f"{path}: unreadable: {exc}") from None

    def check_schema(self) -> list[str]:
        """Raise when a needed column is missing; return a note when the schema is newer than 1.18.33's."""
        for table, needed in REQUIRED_COLUMNS.items():
            columns = {row[1] for row in self.connection.execute(f"PRAGMA table_info({table})")}
            missing = needed - columns
            if missing:
                raise InputError(
                    f"{self.path}: unknown schema: table {table} lacks {', '.join(sorted(missing))}"
                )
        tables = {row[0] for row in self.connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "migration" not in tables:
            return []
        newest = self.connection.execute("SELECT max(id) FROM migration").fetchone()[0]
        if newest and newest > LATEST_KNOWN_MIGRATION:
            return [f"{self.path}: newer schema than OpenCode 1.18.33's (migration {newest}), read by its columns"]
        return []

    def sessions(self) -> list[StoredSession]:
        """Every session, oldest first."""
        rows = self.query("SELECT id, title, time_created FROM session ORDER BY time_created, id")
        return [StoredSession(str(id_), str(title or ""), int(created or 0), str(self.path)) for id_, title, created in rows]

    def messages(self, session_id: str) -> list[Message]:
        """The messages of one session in OpenCode's order, with their parts."""
        parts: dict[str, list[dict]] = {}
        part_rows = self.query(
            "SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY id", (session_id,)
        )
        for part_id, message_id, data in part_rows:
            part = decode_object(data, f"{self.path}: part {part_id}")
            parts.setdefault(message_id, []).append(
                {**part, "id": part_id, "sessionID": session_id, "messageID": message_id}
            )
        message_rows = self.query(
            "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id", (session_id,)
        )
        messages = [
            {
                "info": {**decode_object(data, f"{self.path}: message {message_id}"), "id": message_id, "sessionID": session_id},
                "parts": parts.get(message_id, []),
            }
            for message_id, data in message_rows
        ]
        validate_messages(messages, f"{self.path}: session {session_id}")
        return messages

    def query(self, sql: str, parameters: tuple = ()) -> list[tuple]:
        """All rows of a query; a locked or damaged file raises InputError."""
        try:
            return self.connection.execute(sql, parameters).fetchall()
        except sqlite3.Error as exc:
            raise InputError(f"{self.path}: unreadable: {exc}") from None

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


def export_session(path: Path) -> tuple[StoredSession, list[Message]]:
    """One `opencode export` file: its session (id, title, creation time from `info`) and messages."""
    session = read_session(str(path))
    info = (session.envelope or {}).get("info") or {}
    created = (info.get("time") or {}).get("created") if isinstance(info.get("time"), dict) else None
    stored = StoredSession(
        str(info.get("id") or path.stem),
        str(info.get("title") or ""),
        int(created) if isinstance(created, int | float) else 0,
        str(path),
    )
    return stored, session.messages


def newest(sessions: list[StoredSession], since_ms: int, limit: int | None) -> list[StoredSession]:
    """Sessions created at or after `since_ms`, the newest `limit` of them, oldest first."""
    kept = [session for session in sessions if session.created >= since_ms]
    kept.sort(key=lambda session: (session.created, session.id))
    return kept[-limit:] if limit else kept

