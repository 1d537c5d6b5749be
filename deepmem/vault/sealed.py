"""Private files at rest: exact bytes, sealed with AES-GCM under a key kept outside the project.

The key lives in the user's data folder (`$XDG_DATA_HOME/deepmem/key`, else
`~/.local/share/deepmem/key`), mode 0600, made on first write. A sealed file is `MAGIC`,
the key's id, a random nonce, then the ciphertext and its tag; the file's place (its folder
and name) is bound in as associated data, so a sealed file copied under another name does
not open. A copied `.deep-memory/` holds no readable original. A file without `MAGIC` was
written before sealing existed: it reads as it is, and `seal_plain_files` seals it once.
"""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from deepmem.types import DeepmemError
from deepmem.vault.disk import PRIVATE, create_once

MAGIC = b"\x00dmS1"
ID_BYTES = 8
NONCE_BYTES = 12
TAG_BYTES = 16
HEAD_BYTES = len(MAGIC) + ID_BYTES
KEY_BYTES = 32
KEY_HEADER = b"deepmem-key-v1\n"
KEY_FILE_BYTES = len(KEY_HEADER) + len(base64.urlsafe_b64encode(bytes(KEY_BYTES))) + 1
RAW_TRANSCRIPT = "checkpoint.raw.json"
PRIVATE_FILES = ("ccr/??/[!.]*", f"sessions/*/{RAW_TRANSCRIPT}")
"""Globs, under `.deep-memory/`, of the files that are sealed: CCR originals and raw transcripts."""


class SealError(DeepmemError):
    """A private file that cannot be opened: no key, a damaged or foreign key file, another key, or altered bytes."""


class Key:
    """The loaded key: its AES-GCM cipher, its short public id and where it was read."""

    def __init__(self, secret: bytes, path: Path) -> None:
        self.cipher = AESGCM(secret)
        self.id = hashlib.sha256(b"deepmem key id\n" + secret).digest()[:ID_BYTES]
        self.path = path


_loaded: dict[Path, tuple[tuple[int, int, int], Key]] = {}


def key_path() -> Path:
    """Where the key is kept: `$XDG_DATA_HOME/deepmem/key` (an absolute one), else `~/.local/share/deepmem/key`."""
    base = os.environ.get("XDG_DATA_HOME", "")
    folder = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return folder / "deepmem" / "key"


def _make_key(path: Path) -> None:
    """Write a new random key, unless another process made one first."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    create_once(path, KEY_HEADER + base64.urlsafe_b64encode(os.urandom(KEY_BYTES)) + b"\n", PRIVATE)


def _parse_key(data: bytes, path: Path) -> bytes:
    """The secret in a key file's bytes; SealError naming what is wrong with the file."""
    if not data.startswith(KEY_HEADER):
        raise SealError(f"the key file {path} is not a deepmem key (foreign or damaged); move it away to make a new one")
    try:
        secret = base64.urlsafe_b64decode(data[len(KEY_HEADER):].strip())
    except ValueError:
        secret = b""
    if len(secret) != KEY_BYTES or len(data) != KEY_FILE_BYTES:
        raise SealError(f"the key file {path} is damaged ({len(data)} bytes, expected {KEY_FILE_BYTES})")
    return secret


def load_key(create: bool) -> Key:
    """The user's key (made first when `create` and it is missing); SealError when it cannot be used."""
    path = key_path()
    try:
        if create and not path.exists():
            _make_key(path)
        stat = path.stat()
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        cached = _loaded.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        key = Key(_parse_key(path.read_bytes(), path), path)
    except FileNotFoundError:
        raise SealError(f"no key at {path} (lost, or made on another machine): private files cannot be opened") from None
    except OSError as exc:
        raise SealError(f"the key at {path} cannot be used: {exc.strerror or exc}") from None
    _loaded[path] = (stamp, key)
    return key


def key_state() -> str:
    """One line for `deepmem doctor`: where the key is and whether it can be used."""
    path = key_path()
    if not path.exists():
        return f"key: {path} — not made yet (made on the first private write)"
    try:
        key = load_key(create=False)
    except SealError as exc:
        return f"key: PROBLEM: {exc}"
    mode = path.stat().st_mode & 0o777
    loose = "" if mode == PRIVATE else f" — WARNING: mode {mode:o}, run `chmod 600 {path}`"
    return f"key: {path} — ok (id {key.id.hex()}, mode {mode:o}){loose}"


def _aad(path: Path) -> bytes:
    return f"{path.parent.name}/{path.name}".encode("utf-8", "surrogatepass")


def seal(data: bytes, path: Path) -> bytes:
    """`data` sealed for the file at `path` (a fresh random nonce each time)."""
    key = load_key(create=True)
    head, nonce = MAGIC + key.id, os.urandom(NONCE_BYTES)
    return head + nonce + key.cipher.encrypt(nonce, data, head + _aad(path))


def unseal(blob: bytes, path: Path) -> bytes:
    """The exact bytes sealed in `blob` for `path` (a file from before sealing: as it is); SealError otherwise."""
    if not blob.startswith(MAGIC):
        return blob
    if len(blob) < HEAD_BYTES + NONCE_BYTES + TAG_BYTES:
        raise SealError(f"{path}: sealed file cut short ({len(blob)} bytes)")
    key = load_key(create=False)
    head = blob[:HEAD_BYTES]
    if head[len(MAGIC):] != key.id:
        raise SealError(f"{path}: sealed with another key (id {head[len(MAGIC):].hex()}), "
                        f"not the one at {key.path} (id {key.id.hex()})")
    nonce = blob[HEAD_BYTES:HEAD_BYTES + NONCE_BYTES]
    try:
        return key.cipher.decrypt(nonce, blob[HEAD_BYTES + NONCE_BYTES:], head + _aad(path))
    except InvalidTag:
        raise SealError(f"{path}: altered or damaged (authentication failed); the original cannot be trusted") from None


def read_sealed(path: Path) -> bytes:
    """The exact bytes of a private file; SealError when it cannot be opened, OSError when unreadable."""
    return unseal(path.read_bytes(), path)
