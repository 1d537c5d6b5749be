"""Static embeddings with model2vec: the shipped model by default, or one the user configures."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

from deepmem.project.folder import Project
from deepmem.types import ConfigError

DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "minilm-l6-v2-static-256"
MODEL_ENV = "DEEPMEM_MEMORY_MODEL"


def model_name(root: Project | None = None) -> str:
    """The configured model: DEEPMEM_MEMORY_MODEL, else config.toml `[memory] model`, else the shipped one."""
    name = os.environ.get(MODEL_ENV)
    if name:
        return name
    if root is not None:
        configured = root.config.memory.model
        if configured:
            return configured
    return str(DEFAULT_MODEL)


@cache
def load_model(name: str) -> Any:
    """A model2vec StaticModel from a local folder (offline) or a Hub id; loaded once per process."""
    local = Path(name).expanduser()
    if local.is_dir():
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    elif name.startswith(("/", "./", "../", "~")):
        raise ConfigError(f"embedding model folder {name} does not exist (set [memory] model or {MODEL_ENV})")
    from model2vec import StaticModel

    try:
        return StaticModel.from_pretrained(str(local) if local.is_dir() else name, force_download=False)
    except Exception as exc:  # noqa: BLE001 - model2vec and the hub raise many kinds
        raise ConfigError(f"cannot load embedding model {name!r}: {exc}") from None


@cache
def model_fingerprint(name: str) -> str:
    """What identifies the model's weights: its name and dimension, plus file names and sizes of a local folder."""
    import xxhash

    local = Path(name).expanduser()
    files = sorted((str(path.relative_to(local)), path.stat().st_size) for path in local.rglob("*") if path.is_file()) \
        if local.is_dir() else []
    return xxhash.xxh3_64_hexdigest(repr((name, load_model(name).dim, files)).encode())


def encode(name: str, texts: list[str]) -> Any:
    """Unit-length float32 vectors, one row per text; empty or all-unknown text gives a zero row."""
    import numpy as np

    model = load_model(name)
    if not texts:
        return np.zeros((0, model.dim), dtype=np.float32)
    vectors = np.asarray(model.encode(texts, normalize=False, use_multiprocessing=False), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 1e-12)
    vectors[(norms <= 1e-12).ravel()] = 0.0
    return np.nan_to_num(vectors, copy=False)
