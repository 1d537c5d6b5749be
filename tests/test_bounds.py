"""What deepmem keeps has caps, and past a cap the oldest goes first."""

from __future__ import annotations

import logging
from pathlib import Path

import orjson
import pytest

from deepmem.bridge.engine import Engine
from deepmem.bridge.server import answer, setup_logging
from deepmem.checkpoints.api import compact
from deepmem.checkpoints.store import LOG, append_log
from deepmem.project.config import memory_dir
from deepmem.project.folder import Project

from .test_bridge import django_messages


def limits(root: Path, **values: int) -> None:
    memory_dir(root).mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key} = {value}\n" for key, value in values.items())
    (memory_dir(root) / "config.toml").write_text(f"[limits]\n{lines}")


def test_session_folders_beyond_the_cap_go_oldest_first(tmp_path: Path) -> None:
    limits(tmp_path, sessions_kept=3)
    messages = django_messages()[:12]
    for n in range(6):
        assert not compact(Project.load(tmp_path), f"ses_{n}", messages).get("error")
    folders = sorted(path.name for path in (memory_dir(tmp_path) / "sessions").iterdir())
    assert folders == ["ses_3", "ses_4", "ses_5"]


def test_the_compaction_log_is_capped_to_its_newest_lines(tmp_path: Path) -> None:
    limits(tmp_path, log_bytes=4_096)
    for n in range(300):
        append_log(Project.load(tmp_path), {"session": f"ses_{n}"})
    path = memory_dir(tmp_path) / LOG
    sessions = [orjson.loads(line)["session"] for line in path.read_bytes().splitlines()]
    assert path.stat().st_size <= 4_096 and sessions[-1] == "ses_299" and len(sessions) > 10


def test_the_bridge_log_rotates_within_its_cap(tmp_path: Path) -> None:
    limits(tmp_path, log_bytes=4_096)
    setup_logging(str(tmp_path))
    try:
        for n in range(2_000):
            logging.getLogger("deepmem.bridge").info("line %d of a long log", n)
    finally:
        for handler in logging.getLogger("deepmem").handlers:
            handler.close()
        logging.getLogger("deepmem").handlers[:] = []
    files = list((memory_dir(tmp_path) / "logs").iterdir())
    assert len(files) == 4 and all(path.stat().st_size <= 4_096 for path in files)
    assert "line 1999 of a long log" in (memory_dir(tmp_path) / "logs" / "bridge.log").read_text()


def transform(session: str, messages: list[dict], keep: int = 0, keep_digest: str = "") -> bytes:
    wire = [{"d": f"{session}-{i}", "info": m["info"], "parts": [{"id": p["id"], "d": "x", "part": p} for p in m["parts"]]}
            for i, m in enumerate(messages[keep:], keep)]
    return orjson.dumps({"id": 1, "op": "transform", "session": session, "messages": wire, "keep": keep,
                         "keep_digest": keep_digest})


def test_an_engine_keeps_at_most_its_cap_of_sessions_and_a_forgotten_one_resyncs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPMEM_LIMITS_ENGINE_SESSIONS", "2")
    engine = Engine(tmp_path)
    messages = django_messages()[:10]
    for session in ("a", "b", "c"):
        assert orjson.loads(answer(engine, transform(session, messages)))["ok"]
    assert list(engine.sessions.states) == ["b", "c"]
    assert (memory_dir(tmp_path) / "sessions" / "a" / "stats.json").is_file()
    more = django_messages()[:12]
    chain = engine.sessions.states["c"].chain[-1]
    assert orjson.loads(answer(engine, transform("c", more, keep=10, keep_digest=chain)))["ok"]
    reply = orjson.loads(answer(engine, transform("a", more, keep=10, keep_digest="whatever")))
    assert reply["error"]["code"] == "resync"
    assert orjson.loads(answer(engine, transform("a", more)))["ok"]
