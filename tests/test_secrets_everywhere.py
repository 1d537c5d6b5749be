"""Every credential format, planted in every field a session has, reaches no file in clear.

Each format of `secret_formats` (detect-secrets' regex plugins and ours, multi-line keys and
assignments split across lines among them) is put in the user's text and the assistant's, in
reasoning, in tool inputs and outputs, in a file path and a command, in a tool error and a todo
item, and in requests to the bridge; one credential is also split across two user messages. Then
every command runs on the session and a bridge takes it through compaction and into a new
session's resume, and every file written anywhere (the project, the global memory, the key's
folder) is scanned for each secret, whole or in 12-character pieces.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deepmem.vault.redact import Redactor

from .secret_formats import FORMATS, PASSWORD, chars
from .test_bridge import SMALL_BATCHES, Bridge, django_messages, steps_of

SECRETS = {name: secret for name, _, secret, _ in FORMATS}
SPLIT_SECRET = "Qz8" + chars("split-across-messages", 21)
"""A generated password whose name is in one user message and its value alone in the next."""
PER_MESSAGE = 6
"""Formats planted per assistant message (each message carries every field for them)."""


def needles(secret: str) -> set[bytes]:
    """What would show a secret in clear, even cut short: itself JSON-escaped, and its 12-character pieces."""
    found = {secret.encode(), json.dumps(secret)[1:-1].encode()}
    found.update(secret[start:start + 12].encode() for start in range(0, max(1, len(secret) - 11), 4))
    return found


def known_alone(secret: str) -> bool:
    """A secret a scanner knows without the name beside it, and that can stand in a file name: a hex or UUID
    value alone is not told from a digest, so a file path carries the formats known by their shape."""
    alone = Redactor().text(secret).encode()
    return "\n" not in secret and " " not in secret and not any(needle in alone for needle in needles(secret))


def planted_parts(template: dict[str, Any], rows: list[tuple[str, str, str, str]], n: int) -> list[dict[str, Any]]:
    """Reasoning, text, a read of a path, a command with its output, an edit, an error and a todo item, for `rows`."""
    lines = "\n".join(line.format(secret) for _, _, secret, line in rows)
    path_piece = "-".join(secret.replace("/", "_") for _, _, secret, _ in rows if known_alone(secret))
    base = {"sessionID": template["sessionID"], "messageID": template["messageID"]}

    def tool(index: int, name: str, status: str, tool_input: dict[str, Any], **state: Any) -> dict[str, Any]:
        return {**base, "id": f"prt_plant_{n}_{index}", "type": "tool", "tool": name, "callID": f"call_plant_{n}_{index}",
                "state": {"status": status, "input": tool_input, "time": {"start": 1, "end": 2}, **state}}

    return [
        {**base, "id": f"prt_plant_{n}_r", "type": "reasoning", "text": f"Thinking about these:\n{lines}",
         "time": {"start": 1, "end": 2}},
        {**base, "id": f"prt_plant_{n}_t", "type": "text", "text": f"I will use these values:\n{lines}",
         "time": {"start": 1, "end": 2}},
        tool(1, "read", "completed", {"filePath": f"/testbed/config/{path_piece}.env"},
             output=f"<file>\n{lines}\n" + "\n".join(f"{i:05}| setting_{i} = value_{i}" for i in range(300)) + "\n</file>",
             title="config", metadata={}),
        tool(2, "bash", "completed", {"command": f"cat <<'EOF' > deploy.env\n{lines}\nEOF", "description": "write env"},
             output=f"{lines}\n" + "\n".join(f"line {i}: {lines[:40]}" for i in range(200)), title="env",
             metadata={"exit": 0}),
        tool(3, "edit", "completed", {"filePath": "/testbed/settings.py", "oldString": "SECRET = None",
                                      "newString": f"SECRET = None\n{lines}"}, output="Edit applied.", title="edit",
             metadata={}),
        tool(4, "bash", "error", {"command": f"./login.sh {lines.splitlines()[0]}", "description": "login"},
             error=f"Error: login refused for\n{lines}"),
        tool(5, "todowrite", "completed", {"todos": [{"id": f"t{n}", "content": f"rotate {lines}", "status": "pending",
                                                      "priority": "high"}]}, output="[]", title="todos", metadata={}),
    ]


def planted_session() -> list[dict[str, Any]]:
    """The django session with every format in every field, and one credential split across two user messages."""
    messages = copy.deepcopy(django_messages())
    everything = "\n".join(line.format(secret) for _, _, secret, line in FORMATS)
    messages[0]["parts"][0]["text"] += "\n" + everything
    template = next(m for m in messages if m["info"]["role"] == "assistant")
    user = messages[0]
    for n, start in enumerate(range(0, len(FORMATS), PER_MESSAGE)):
        message = copy.deepcopy(template)
        message["info"]["id"] = f"msg_plant_{n:03}"
        head = {"sessionID": message["info"]["sessionID"], "messageID": message["info"]["id"]}
        message["parts"] = planted_parts(head, FORMATS[start:start + PER_MESSAGE], n)
        messages.append(message)
    for n, text in enumerate(("The staging database password is in my next message, use it for the deploy.",
                              SPLIT_SECRET)):
        message = copy.deepcopy(user)
        message["info"]["id"] = f"msg_split_{n}"
        message["parts"] = [{**message["parts"][0], "id": f"prt_split_{n}", "messageID": message["info"]["id"],
                             "text": text}]
        messages.append(message)
        reply = copy.deepcopy(template)
        reply["info"]["id"] = f"msg_split_reply_{n}"
        reply["parts"] = [{"id": f"prt_split_reply_{n}", "type": "text", "text": "Noted.", "sessionID": head["sessionID"],
                           "messageID": reply["info"]["id"], "time": {"start": 1, "end": 2}}]
        messages.append(reply)
    return messages


def leaks(folders: list[Path], skip: set[Path]) -> dict[str, list[str]]:
    """Every file under `folders` (but `skip`) holding a planted secret in clear, by format."""
    wanted = {**SECRETS, "split-across-messages": SPLIT_SECRET}
    found: dict[str, list[str]] = {}
    files = [path for folder in folders for path in folder.rglob("*") if path.is_file() and path not in skip]
    assert len(files) > 10, files
    for path in files:
        data = path.read_bytes()
        for name, secret in wanted.items():
            if any(needle in data for needle in needles(secret)):
                found.setdefault(name, []).append(str(path))
    return found


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path], set[Path]]:
    """A project through every command and a bridge session with compaction and resume; its folders and the inputs."""
    root, data, global_root, outside = (tmp_path_factory.mktemp(name) for name in ("project", "data", "global", "out"))
    env = {name: value for name, value in os.environ.items() if not name.startswith("DEEPMEM_")}
    env.update(XDG_DATA_HOME=str(data), DEEP_MEMORY_GLOBAL_ROOT=str(global_root))
    messages = planted_session()
    session = root / "session.json"
    session.write_text(json.dumps(messages))

    def deepmem(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "deepmem", *args, "--root", str(root)],
                       capture_output=True, check=True, timeout=600, env=env)

    deepmem("compress", str(session), "-o", str(outside / "compressed.json"))
    deepmem("checkpoint", str(session))
    deepmem("memory", "add", "Deploy notes: " + "; ".join(line.format(secret) for _, _, secret, line in FORMATS[:12]))
    deepmem("memory", "add", "--scope", "global", f"Registry login: docker login -p {SECRETS['docker-login']}")
    turns = root / "turns.jsonl"
    turns.write_text("".join(json.dumps({"id": f"t{n}", "text": f"Credential {n} is {line.format(secret)}"}) + "\n"
                             for n, (_, _, secret, line) in enumerate(FORMATS)))
    deepmem("memory", "import", str(turns))
    deepmem("dream")
    deepmem("distill")
    deepmem("resume")
    deepmem("stats")

    bridge = Bridge(root, {**SMALL_BATCHES, "XDG_DATA_HOME": str(data), "DEEP_MEMORY_GLOBAL_ROOT": str(global_root)})
    try:
        assert bridge.hello()["ok"]
        for length in steps_of(messages):
            assert bridge.transform("ses_planted", messages[:length])["ok"]
        assert bridge.request("system", session="ses_planted", system=["You are opencode"])["ok"]
        assert bridge.request("tool", name="memory_store", args={"text": f"Use {SECRETS['vault']} for vault"})["ok"]
        bridge.request("tool", name="memory_search", args={"query": f"password {PASSWORD}"})
        bridge.request("no-such-op", detail=SECRETS["anthropic"])
        assert bridge.request("compacting", session="ses_planted")["written"]
        assert bridge.request("event", type="session.idle", session="ses_planted")["ok"]
        assert bridge.request("command", command="checkpoint", session="ses_planted")["ok"]
        assert bridge.request("system", session="ses_resumed", system=["You are opencode"])["ok"]
    finally:
        assert bridge.close() == 0
    return root, [root, data, global_root], {session, turns}


@pytest.mark.parametrize("name", [*SECRETS, "split-across-messages"])
def test_no_format_reaches_any_file_in_clear(planted: tuple[Path, list[Path], set[Path]], name: str) -> None:
    root, folders, inputs = planted
    assert name not in leaks(folders, inputs)


def test_the_planted_run_wrote_what_it_should(planted: tuple[Path, list[Path], set[Path]]) -> None:
    """The scan saw real output: checkpoints with markers, memory, a resume block, sealed originals."""
    root, _, _ = planted
    memory = root / ".deep-memory"
    checkpoint = (memory / "checkpoint.md").read_text()
    assert "[REDACTED:" in checkpoint and "[REDACTED:" in (memory / "MEMORY.md").read_text()
    assert list(memory.glob("ccr/*/*")) and list(memory.glob("sessions/ses_resumed/stable-block.md"))
    assert list(memory.glob("sessions/*/request-state.json"))
