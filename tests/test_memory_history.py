"""bench.runners.memory_history on a small history: sessions in start order, and what memory gives each before it runs."""

from __future__ import annotations

import json
from pathlib import Path

from bench.runners.memory_history import histories, measure_corpus
from tests.test_project_memory import DAY, START, global_root  # noqa: F401 (an autouse fixture)


def session(day: int, request: str, files: tuple[str, ...], command: str) -> dict:
    """An OpenCode export: one request, then edits of `files` under /repo and one successful command."""
    parts = [{"type": "tool", "tool": "edit", "state": {"status": "completed", "output": "", "input": {
        "filePath": f"/repo/{path}", "oldString": "a", "newString": "b"}}} for path in files]
    parts.append({"type": "tool", "tool": "bash", "state": {"status": "completed", "output": "",
                                                           "input": {"command": command}, "metadata": {"exit": 0}}})
    created = START + day * DAY
    return {"info": {"id": f"ses_{day}"}, "messages": [
        {"info": {"role": "user", "id": f"u{day}", "time": {"created": created}},
         "parts": [{"type": "text", "text": request}]},
        {"info": {"role": "assistant", "id": f"a{day}", "path": {"root": "/repo", "cwd": "/repo"},
                  "time": {"created": created + 60_000}}, "parts": parts}]}


def corpus(folder: Path) -> Path:
    """Three sessions whose file names sort against their start times."""
    folder.mkdir()
    plan = [("c-first.json", 0, "Add the parser for config files", ("cmd/parse.go",), "go test ./..."),
            ("b-second.json", 1, "Make the parser accept comments", ("cmd/parse.go", "cmd/lex.go"), "go test ./cmd/..."),
            ("a-third.json", 2, "Report parser errors with line numbers", ("cmd/parse.go",), "go test ./...")]
    sessions = []
    for name, day, request, files, command in plan:
        (folder / name).write_text(json.dumps(session(day, request, files, command)))
        sessions.append({"file": name, "repo": "one/project", "start": f"2026-01-0{5 + day}T10:00:00Z"})
    (folder / "manifest.json").write_text(json.dumps({"sessions": sessions}))
    return folder


def test_sessions_come_in_start_order_not_name_order(tmp_path: Path) -> None:
    folder = corpus(tmp_path / "history")
    assert [path.name for path in histories(folder)["one/project"]] == ["c-first.json", "b-second.json",
                                                                         "a-third.json"]


def test_each_session_is_measured_against_the_memory_of_the_ones_before(tmp_path: Path) -> None:
    """The third session is told the test command and the file two sessions changed; the block keeps its bytes."""
    rows, memory = measure_corpus(corpus(tmp_path / "history"), tmp_path / "work", None)
    row = rows[0]
    assert row["sessions"] == 2 and row["ceiling"] == round(2 / 3, 3)
    assert row["commands"] == 2 and row["commands_known"] == 1.0
    assert row["file_recall"] == 1.0
    assert row["episode_sessions"] == 2 and row["episodes_top3"] == 1.0
    assert row["stable_block_same"] == 1.0
    assert memory["one/project"]["episodes"] == 3
