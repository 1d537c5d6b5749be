"""Secrets planted in a session never reach `.deep-memory/`, through the bridge or the CLI."""

from __future__ import annotations

import copy
import json
import stat
import subprocess
import sys
from pathlib import Path

from deepmem.config import memory_dir
from deepmem.sealed import read_sealed

from .test_bridge import SMALL_BATCHES, Bridge, django_messages, steps_of

SECRETS = {
    "openai": "sk-" + "proj-" + "Xq81RT5hwp2MSaF0cz9LQoeTbZ3nKv7",
    "anthropic": "sk-" + "ant-api03-" + "Zk3f9Q_aVbN2-r7TsLq0PmWx4Hc8Yd1",
    "github": "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "slack": "xo" + "xb-" + "2048193847-9182736450-AbCdEfGhIjKl",
    "stripe": "sk" + "_live_" + "51HqLm2eZvKYlo2C0aBcDeFgHi",
    "aws": "AK" + "IAQ3EGRFXM7YB2LKZT",
    "jwt": "eyJ" + "hbGciOiJIUzI1NiJ9.eyJ" + "zdWIiOiI0MiJ9.Qx7mK2pL9sT4vW1yZ3aB5cD",
    "password": "Tr0ub4dor-and-3",
    "private-key-body": "MIIEpAIBAAKCAQEA7x9Qq2Lm9Np3Rs5Tv8Wy",
}
PLANTED = (
    f"OPENAI_API_KEY={SECRETS['openai']}\nANTHROPIC_API_KEY={SECRETS['anthropic']}\n"
    f"git push https://x:{SECRETS['github']}@github.com/org/repo\nslack {SECRETS['slack']}\n"
    f"stripe.api_key = '{SECRETS['stripe']}'\naws {SECRETS['aws']}\n"
    f"Authorization: Bearer {SECRETS['jwt']}\ndb_password: {SECRETS['password']}\n"
    f"-----BEGIN RSA PRIVATE KEY-----\n{SECRETS['private-key-body']}\n-----END RSA PRIVATE KEY-----\n"
)


def planted_session() -> list[dict]:
    """The django session with the secrets in the user's text, an old tool output and input, and prose."""
    messages = copy.deepcopy(django_messages())
    messages[0]["parts"][0]["text"] += "\n" + PLANTED
    for index in (2, 3, 5):
        tool = next(part for part in messages[index]["parts"] if part["type"] == "tool")
        tool["state"]["output"] = PLANTED + tool["state"]["output"] + "\n" + PLANTED
        tool["state"]["input"]["command"] += f" # {SECRETS['aws']}"
    text = next(part for part in messages[3]["parts"] if part["type"] == "text")
    text["text"] += f"\nI will use the key {SECRETS['openai']} for now."
    return messages


def leaks(root: Path) -> dict[str, list[str]]:
    """Every file under `.deep-memory/` holding any planted secret, by secret."""
    found: dict[str, list[str]] = {}
    files = [path for path in memory_dir(root).rglob("*") if path.is_file()]
    assert files, "nothing was written"
    for path in files:
        data = path.read_bytes()
        for name, secret in SECRETS.items():
            if secret.encode() in data or json.dumps(secret)[1:-1].encode() in data:
                found.setdefault(name, []).append(str(path.relative_to(root)))
    return found


def deepmem(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "deepmem", *args, "--root", str(root)],
                          capture_output=True, check=True, timeout=300)


def test_no_secret_reaches_disk_through_the_bridge(tmp_path: Path) -> None:
    messages = planted_session()
    bridge = Bridge(tmp_path, SMALL_BATCHES)
    try:
        assert bridge.hello()["ok"]
        for length in steps_of(messages):
            assert bridge.transform("ses_s", messages[:length])["ok"]
        compressed = [edit for edit in bridge.edits.values() if "part" in edit]
        assert compressed, "the planted outputs were never compressed, so CCR was not exercised"
        stored = bridge.request("tool", name="memory_store", args={"text": f"Deploy with token {SECRETS['github']}"})
        assert stored["ok"]
        assert bridge.request("system", session="ses_s", system=["You are opencode"])["ok"]
        assert bridge.request("compacting", session="ses_s")["written"]
        assert bridge.request("event", type="session.idle", session="ses_s")["ok"]
        assert bridge.request("command", command="checkpoint", session="ses_s")["ok"]
        # The running session keeps its originals in memory: deep_expand still gives them back.
        restored = [bridge.request("expand", key=edit["part"]["metadata"]["deepmem"]["part"])["text"]
                    for edit in compressed]
        assert any(SECRETS["aws"] in text for text in restored)
    finally:
        assert bridge.close() == 0
    assert leaks(tmp_path) == {}
    raw = next(memory_dir(tmp_path).glob("sessions/*/checkpoint.raw.json"))
    assert stat.S_IMODE(raw.stat().st_mode) == 0o600
    assert SECRETS["aws"] in read_sealed(raw).decode()


def test_no_secret_reaches_disk_through_the_cli(tmp_path: Path) -> None:
    session = tmp_path / "session.json"
    session.write_text(json.dumps(planted_session()))
    out = tmp_path / "out.json"
    deepmem(tmp_path, "compress", str(session), "-o", str(out))
    deepmem(tmp_path, "checkpoint", str(session))
    deepmem(tmp_path, "memory", "add", f"CI uses {SECRETS['stripe']} and password={SECRETS['password']}")
    turns = tmp_path / "turns.jsonl"
    turns.write_text(json.dumps({"id": "t1", "text": f"the slack bot token is {SECRETS['slack']}"}) + "\n")
    deepmem(tmp_path, "memory", "import", str(turns))
    deepmem(tmp_path, "dream")
    assert leaks(tmp_path) == {}
    assert list(memory_dir(tmp_path).glob("ccr/*/*")), "nothing went to CCR"
    assert "[REDACTED:stripe-key]" in (memory_dir(tmp_path) / "MEMORY.md").read_text()
