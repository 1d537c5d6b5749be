"""Sealed private files: exact after a restart, unreadable when copied, and every bad key or file is one clear line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from deepmem.bridge.engine import Engine
from deepmem.bridge.server import answer
from deepmem.project.config import ccr_folder, memory_dir
from deepmem.project.upkeep import start_up
from deepmem.types import cache_key
from deepmem.vault.ccr import CCRStore
from deepmem.vault.disk import SEALED_MARK
from deepmem.vault.restore import restore_messages
from deepmem.vault.sealed import MAGIC, SealError, key_path, key_state, read_sealed
from deepmem.vault.sessionio import encode_json
from deepmem.vault.writer import write_private

from .conftest import FIXTURES

TEXT = "SECRET_KEY='test',\nnaïve — 中文 \x00 \udcff tail\n"
SESSIONS = sorted((FIXTURES / "sessions").glob("*.json"))


def put(root: Path, text: str = TEXT) -> tuple[str, Path]:
    """Store one original; its key and its file."""
    key = cache_key(text, "t")
    CCRStore(ccr_folder(root)).put(key, text)
    return key, memory_dir(root) / "ccr" / key[:2] / key


def deepmem(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a new process (a restart: nothing is held in memory)."""
    return subprocess.run([sys.executable, "-m", "deepmem", *args, "--root", str(root)],
                          capture_output=True, text=True, timeout=300, check=False)


def test_the_key_is_made_once_outside_the_project_and_private(tmp_path: Path) -> None:
    assert "not made yet" in key_state()
    key, path = put(tmp_path)
    made = key_path()
    assert made == Path(os.environ["XDG_DATA_HOME"]) / "deepmem" / "key"
    assert stat.S_IMODE(made.stat().st_mode) == 0o600 and stat.S_IMODE(made.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    before = made.read_bytes()
    put(tmp_path, "another original")
    assert made.read_bytes() == before
    assert f"key: {made} — ok" in key_state()


def test_an_original_is_exact_after_a_restart_and_unreadable_on_disk(tmp_path: Path) -> None:
    key, path = put(tmp_path)
    data = path.read_bytes()
    assert data.startswith(MAGIC) and b"SECRET_KEY" not in data and "中文".encode() not in data
    done = deepmem(tmp_path, "expand", key[:16], "-o", str(tmp_path / "out.txt"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.txt").read_bytes() == TEXT.encode("utf-8", "surrogatepass")


def test_a_sealed_file_copied_under_another_name_does_not_open(tmp_path: Path) -> None:
    _, path = put(tmp_path)
    other = path.with_name("0" * len(path.name))
    other.write_bytes(path.read_bytes())
    with pytest.raises(SealError, match="altered or damaged"):
        read_sealed(other)


@pytest.mark.parametrize(("spoil", "reason"), [
    (lambda key, data: key.unlink(), "no key at"),
    (lambda key, data: key.write_bytes(key.read_bytes()[:20]), "is damaged"),
    (lambda key, data: key.write_bytes(b"-----BEGIN OPENSSH PRIVATE KEY-----\n"), "not a deepmem key"),
    (lambda key, data: (key.unlink(), write_private(key.parent / "x" / "y", b"new key")), "sealed with another key"),
    (lambda key, data: data.write_bytes(data.read_bytes()[:-1] + bytes([data.read_bytes()[-1] ^ 1])), "altered"),
    (lambda key, data: data.write_bytes(data.read_bytes()[:30]), "cut short"),
], ids=["lost", "truncated", "foreign", "another", "tampered", "cut-short"])
def test_a_bad_key_or_file_is_one_clear_line_and_the_marker_stays(tmp_path: Path, spoil, reason: str) -> None:
    """`expand KEY` exits 2 with one line; `expand --session` writes the session with the marker kept."""
    original = {"id": "prt_1", "type": "text", "text": TEXT}
    key, path = put(tmp_path, json.dumps(original))
    shown = {"id": "prt_1", "type": "text", "text": "[… cut · ccr:x]", "metadata": {"deepmem": {"part": key}}}
    session = tmp_path / "compressed.json"
    session.write_bytes(encode_json([{"info": {"id": "m1", "role": "user"}, "parts": [shown]}]))
    spoil(key_path(), path)
    one = deepmem(tmp_path, "expand", key)
    assert one.returncode == 2 and one.stdout == ""
    assert one.stderr.count("\n") == 1 and reason in one.stderr, one.stderr
    whole = deepmem(tmp_path, "expand", "--session", str(session), "-o", str(tmp_path / "out.json"))
    assert whole.returncode == 2 and whole.stderr.count("\n") == 1 and reason in whole.stderr
    assert json.loads((tmp_path / "out.json").read_text())[0]["parts"] == [shown]
    with pytest.raises(SealError, match=reason):
        restore_messages(json.loads(session.read_text()), CCRStore(ccr_folder(tmp_path)))


def test_a_damaged_key_keeps_new_originals_in_memory_only(tmp_path: Path, caplog) -> None:
    put(tmp_path, "first")
    key_path().write_bytes(b"nonsense")
    store = CCRStore(ccr_folder(tmp_path))
    for n in range(3):
        text = f"original {n}"
        store.put(cache_key(text, "t"), text)
        assert store.get(cache_key(text, "t")) == text
    assert len([r for r in caplog.records if "kept in memory only" in r.getMessage()]) == 1
    assert len(list(memory_dir(tmp_path).glob("ccr/*/*"))) == 1
    assert key_path().read_bytes() == b"nonsense"
    assert "PROBLEM" in key_state()


@pytest.mark.parametrize("fixture", SESSIONS, ids=[path.stem for path in SESSIONS])
def test_compress_then_expand_in_new_processes_is_exact(tmp_path: Path, fixture: Path) -> None:
    out = tmp_path / "compressed.json"
    assert deepmem(tmp_path, "compress", str(fixture), "-o", str(out)).returncode == 0
    done = deepmem(tmp_path, "expand", "--session", str(out), "-o", str(tmp_path / "restored.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "restored.json").read_bytes()) == json.loads(fixture.read_bytes())


def test_an_older_plain_folder_is_sealed_once_and_reads_the_same(tmp_path: Path) -> None:
    """Plain files (an older release) read as they are; the start seals them, a file at a time."""
    folder = memory_dir(tmp_path)
    plain = {folder / "ccr" / "ab" / f"ab{n:030x}": f"original {n}".encode() for n in range(4)}
    plain[folder / "sessions" / "ses_1" / "checkpoint.raw.json"] = b'[{"info": {}, "parts": []}]\n'
    for path, data in plain.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert CCRStore(ccr_folder(tmp_path)).get(f"ab{1:030x}") == "original 1"
    # A start killed after sealing two files: each file is whole, plain or sealed.
    first = sorted(plain)[:2]
    for path in first:
        write_private(path, plain[path])
    assert all(read_sealed(path) == data for path, data in plain.items())
    assert start_up(tmp_path) == {"temp_removed": 0, "sealed": len(plain) - 2}
    assert all(path.read_bytes().startswith(MAGIC) and read_sealed(path) == data for path, data in plain.items())
    assert (folder / SEALED_MARK).exists()
    assert start_up(tmp_path) == {"temp_removed": 0, "sealed": 0}


def test_the_start_removes_temp_files_of_dead_writers_only(tmp_path: Path) -> None:
    folder = memory_dir(tmp_path)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    leftovers = [folder / f".MEMORY.md.{dead.stdout.strip()}.k2j3h4.tmp",
                 folder / "ccr" / "ab" / f".ab{0:030x}.{dead.stdout.strip()}.x1y2z3.tmp",
                 folder / ".notes.md.old9x8y.tmp"]
    live = folder / f".checkpoint.md.{os.getpid()}.a1b2c3.tmp"
    for path in [*leftovers, live]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"half")
    os.utime(leftovers[2], (1, 1))
    assert start_up(tmp_path)["temp_removed"] == 3
    assert [path.exists() for path in leftovers] == [False, False, False] and live.exists()


@pytest.mark.parametrize("request_line", [
    {"id": 7, "op": "expand", "key": "{key}"},
    {"id": 7, "op": "tool", "name": "deep_expand", "args": {"key": "{key}"}},
], ids=["expand", "deep_expand"])
def test_the_bridge_answers_a_lost_key_with_one_error(tmp_path: Path, request_line: dict) -> None:
    """The engine answers with one error reply naming the key's place, and goes on serving."""
    key, _ = put(tmp_path, "SECRET_KEY='test',\n中文\n")
    line = json.dumps(request_line).replace("{key}", key).encode()
    reply = json.loads(answer(Engine(tmp_path), line))
    assert reply["text" if request_line["op"] == "expand" else "output"] == "SECRET_KEY='test',\n中文\n"
    key_path().unlink()
    reply = json.loads(answer(Engine(tmp_path), line))
    assert reply["id"] == 7 and "ok" not in reply
    assert f"no key at {key_path()}" in reply["error"]["message"] and "\n" not in reply["error"]["message"]


@pytest.mark.parametrize(("xdg", "expected"), [
    ("/srv/data", Path("/srv/data/deepmem/key")),
    ("relative/data", Path.home() / ".local" / "share" / "deepmem" / "key"),
    ("", Path.home() / ".local" / "share" / "deepmem" / "key"),
], ids=["absolute", "relative-ignored", "empty"])
def test_the_key_lives_in_the_users_data_folder(monkeypatch: pytest.MonkeyPatch, xdg: str, expected: Path) -> None:
    """$XDG_DATA_HOME when it is absolute (the XDG rule), else ~/.local/share."""
    monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert key_path() == expected
