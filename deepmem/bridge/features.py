"""Lazy access to the memory and checkpoint features, so the engine starts fast.

jieba and model2vec load only when memory is first used. A feature whose module or
function is not installed yet answers `not_available` instead of failing the bridge.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from deepmem.bridge.protocol import ProtocolError

MEMORY = "deepmem.memory.api"
CHECKPOINTS = "deepmem.checkpoints.api"
RESUME = "deepmem.checkpoints.resume"
SLASH = "deepmem.checkpoints.slash"


def feature(module: str, name: str) -> Callable[..., Any]:
    """`module.name`, or ProtocolError("not_available") when it does not exist (yet)."""
    try:
        loaded = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            raise ProtocolError("not_available", f"{module} is not available yet") from None
        raise
    found = getattr(loaded, name, None)
    if found is None:
        raise ProtocolError("not_available", f"{module}.{name} is not available yet")
    return found


def optional_feature(module: str, name: str, *args: Any) -> Any:
    """Call a feature that may be missing; None when it is not available."""
    try:
        function = feature(module, name)
    except ProtocolError:
        return None
    return function(*args)


def slash_commands() -> dict[str, Callable[..., str]]:
    """The slash command registry of the checkpoints feature ({} when not available)."""
    try:
        module = importlib.import_module(SLASH)
    except ModuleNotFoundError as exc:
        if exc.name and SLASH.startswith(exc.name):
            return {}
        raise
    return dict(getattr(module, "SLASH_COMMANDS", {}))
