"""No planted credential reaches `.deep-memory/` in clear, in any file, through the bridge or the CLI.

Private files (CCR originals, raw transcripts) hold them exactly but sealed; shared files
(MEMORY.md, notes, checkpoints, history, archive, logs) hold the redaction marker instead.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from deepmem.project.config import memory_dir
from deepmem.vault.sealed import read_sealed

from .secret_formats import FORMATS
from .test_bridge import SMALL_BATCHES, Bridge, django_messages, steps_of

SECRETS = {name: secret for name, _, secret, _ in FORMATS}
PLANTED = "\n".join(line.format(secret) for _, _, secret, line in FORMATS) + "\n"
SHARED = ("MEMORY.md", "notes.md", "checkpoint.md", "history.md", "archive.md")


def planted_session() -> list[dict]:
    """The django session with every format in the user's text, old tool outputs and inputs, and prose."""
    messages = copy.deepcopy(django_messages())
    messages[0]["parts"][0]["text"] += "\n" + PLANTED
    for index in (2, 3, 5):
        tool = next(part for part in messages[index]["parts"] if part["type"] == "tool")
        tool["state"]["output"] = PLANTED + tool["state"]["output"] + "\n" + PLANTED
        tool["state"]["input"]["command"] += f" # {SECRETS['aws-access-key-id']}"
    text = next(part for part in messages[3]["parts"] if part["type"] == "text")
    text["text"] += f"\nI will use the key {SECRETS['openai-project']} for now."
    return messages


def needles(secret: str) -> set[bytes]:
    """What would show a secret in clear, even cut short: itself JSON-escaped, and its 12-character pieces."""
    found = {json.dumps(secret)[1:-1].encode()}
    found.update(secret[start:start + 12].encode() for start in range(0, max(1, len(secret) - 11), 4))
    return found


def leaks(root: Path) -> dict[str, list[str]]:
    """Every file under `.deep-memory/` holding a planted secret in clear, by format."""
    found: dict[str, list[str]] = {}
    files = [path for path in memory_dir(root).rglob("*") if path.is_file()]
    assert files, "nothing was written"
    for path in files:
        data = path.read_bytes()
        for name, secret in SECRETS.items():
            if any(needle in data for needle in needles(secret)):
                found.setdefault(name, []).append(str(path.relative_to(root)))
    return found


def shared_text(root: Path) -> str:
    """Every shared file of the project, one after another."""
    return "".join(path.read_text() for name in SHARED for path in memory_dir(root).rglob(name))


@pytest.fixture(scope="module")
def cli_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One project through compress, checkpoint, memory add, memory import (every format) and dream, in new processes."""
    root = tmp_path_factory.mktemp("cli-project")
    env = {name: value for name, value in os.environ.items() if not name.startswith("DEEPMEM_")}
    env.update(XDG_DATA_HOME=str(tmp_path_factory.mktemp("data")),
               DEEP_MEMORY_GLOBAL_ROOT=str(tmp_path_factory.mktemp("global")))

    def deepmem(*args: str) -> None:
        subprocess.run([sys.executable, "-m", "deepmem", *args, "--root", str(root)],
                       capture_output=True, check=True, timeout=300, env=env)

    session = root / "session.json"
    session.write_text(json.dumps(planted_session()))
    deepmem("compress", str(session), "-o", str(root / "out.json"))
    deepmem("checkpoint", str(session))
    deepmem("memory", "add", f"CI uses {SECRETS['stripe-live']} and password={SECRETS['password-assignment']}")
    turns = root / "turns.jsonl"
    turns.write_text("".join(json.dumps({"id": f"t{n}", "text": f"Credential number {n} ({name}) is set in {line.format(secret)}"})
                             + "\n" for n, (name, _, secret, line) in enumerate(FORMATS)))
    deepmem("memory", "import", str(turns))
    deepmem("dream")
    assert list(memory_dir(root).glob("ccr/*/*")), "nothing went to CCR"
    return root


@pytest.mark.parametrize("name", SECRETS)
def test_no_format_reaches_disk_in_clear_through_the_cli(cli_project: Path, name: str) -> None:
    """Absent from every file in clear, and a marker stands in its place in the shared files."""
    assert name not in leaks(cli_project)
    entries = [entry for entry in shared_text(cli_project).split("\n- [") if f"({name}) is set in" in entry]
    assert entries and all("[REDACTED:" in entry for entry in entries), entries


def test_no_secret_reaches_disk_through_the_bridge(tmp_path: Path) -> None:
    messages = planted_session()
    bridge = Bridge(tmp_path, SMALL_BATCHES)
    try:
        assert bridge.hello()["ok"]
        for length in steps_of(messages):
            assert bridge.transform("ses_s", messages[:length])["ok"]
        compressed = [edit for edit in bridge.edits.values() if "part" in edit]
        assert compressed, "the planted outputs were never compressed, so CCR was not exercised"
        stored = bridge.request("tool", name="memory_store",
                                args={"text": f"Deploy with token {SECRETS['github-classic']}"})
        assert stored["ok"]
        assert bridge.request("system", session="ses_s", system=["You are opencode"])["ok"]
        assert bridge.request("compacting", session="ses_s")["written"]
        assert bridge.request("event", type="session.idle", session="ses_s")["ok"]
        assert bridge.request("command", command="checkpoint", session="ses_s")["ok"]
        restored = [bridge.request("expand", key=edit["part"]["metadata"]["deepmem"]["part"])["text"]
                    for edit in compressed]
        assert any(SECRETS["aws-access-key-id"] in text for text in restored)
    finally:
        assert bridge.close() == 0
    assert leaks(tmp_path) == {}
    raw = next(memory_dir(tmp_path).glob("sessions/*/checkpoint.raw.json"))
    assert stat.S_IMODE(raw.stat().st_mode) == 0o600
    assert json.loads(read_sealed(raw)) == messages
    assert "[REDACTED:github-token]" in (memory_dir(tmp_path) / "MEMORY.md").read_text()
