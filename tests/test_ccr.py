"""The CCR store: keys, the in-memory LRU, the disk folder and its byte cap."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from deepmem.markers import marker, marker_keys
from deepmem.types import InputError, Settings, UnknownKeyError, cache_key
from deepmem.vault.ccr import CCRStore
from deepmem.vault.sessionio import decode_session, encode_json

from .conftest import FIXTURES


def test_cache_key_is_stable_and_names_its_inputs() -> None:
    """xxh3-128 hex: changes with the compressor name, same for equal dicts, and the value is
    pinned: stored originals and the markers naming them depend on it."""
    key = cache_key("hello", "bash")
    assert key == "123efdae9033849a22f6ff0b1e8a38a8"
    assert key != cache_key("hello", "read")
    assert cache_key({"a": 1, "b": 2}, "x") == cache_key({"b": 2, "a": 1}, "x")


def test_round_trip_through_disk_across_instances(tmp_path: Path) -> None:
    """An original written by one store is read back byte-identical by another."""
    text = "naïve — 中文 \x00 tail\n"
    key = cache_key(text, "t")
    CCRStore(tmp_path).put(key, text)
    assert CCRStore(tmp_path).get(key) == text
    assert CCRStore(tmp_path).get(f"ccr:{key.upper()}") == text


def test_a_marker_key_finds_its_original_in_memory_and_on_disk(tmp_path: Path) -> None:
    """A marker shows the key's first 16 digits; the store resolves them, from its memory
    or from the disk of another instance, and refuses a prefix shared by two originals."""
    text = "the original"
    key = cache_key(text, "t")
    store = CCRStore(tmp_path)
    store.put(key, text)
    shown = marker(1, 2, "lines", key)
    assert marker_keys(shown) == [key[:16]] and key not in shown
    assert store.get(f"ccr:{key[:16]}") == text
    assert CCRStore(tmp_path).get(key[:16]) == text
    assert key[:16] in CCRStore(tmp_path)
    twin = key[:16] + "0" * 16
    store.put(twin, "another original")
    with pytest.raises(InputError, match="ambiguous"):
        CCRStore(tmp_path).get(key[:16])
    assert CCRStore(tmp_path).get(key[:20]) == text
    with pytest.raises(UnknownKeyError):
        store.get("f" * 16)


@pytest.mark.parametrize("key", ["0" * 31 + "\x00", "../" + "0" * 29, "0" * 31 + "/"])
def test_a_key_that_is_not_hex_names_no_file(tmp_path: Path, key: str) -> None:
    """A malformed key of the full length is unknown: it never becomes a path to open."""
    store = CCRStore(tmp_path / "ccr")
    store.put(cache_key("kept", "test"), "kept")
    assert key not in store
    with pytest.raises(UnknownKeyError):
        store.get(key)


def test_memory_lru_is_bounded() -> None:
    """Without a root only the newest entries stay."""
    store = CCRStore(None, Settings(ccr_memory_entries=3))
    keys = [cache_key(str(i), "t") for i in range(5)]
    for i, key in enumerate(keys):
        store.put(key, str(i))
    assert [k in store for k in keys] == [False, False, True, True, True]
    with pytest.raises(UnknownKeyError):
        store.get(keys[0])


def test_disk_cap_evicts_least_recently_used(tmp_path: Path) -> None:
    """Past the byte cap the oldest files go first and the newest stay."""
    store = CCRStore(tmp_path, Settings(ccr_disk_bytes=10_000, ccr_memory_entries=1))
    keys = []
    for i in range(30):
        key = cache_key(str(i), "t")
        store.put(key, f"{i:04d}" * 250)  # 1,000 bytes each
        path = tmp_path / key[:2] / key
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
        keys.append(key)
    files = list(tmp_path.rglob("*"))
    total = sum(p.stat().st_size for p in files if p.is_file())
    assert total <= 10_000
    fresh = CCRStore(tmp_path)
    assert fresh.get(keys[-1]).startswith("0029")
    with pytest.raises(UnknownKeyError):
        fresh.get(keys[0])


@pytest.mark.parametrize("fixture", ["opencode-demo.json", "django-15499.json", "opencode-transform.json"])
def test_session_decode_encode_keeps_the_json_value(fixture: str) -> None:
    """Decoding and re-encoding a real export keeps every field, known or not."""
    data = (FIXTURES / "sessions" / fixture).read_bytes()
    session = decode_session(data)
    assert orjson.loads(encode_json(session.to_json())) == orjson.loads(data)
